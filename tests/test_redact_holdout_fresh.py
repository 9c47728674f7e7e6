"""A fresh held-out part of the public redaction corpus, from gosec's, bandit's, horusec's,
eslint-plugin-no-secrets' and repo-supervisor's own tests (tests/fixtures/redact/holdout_fresh.json, split
``holdout-fresh``; built by scripts/redact_corpus_fresh.py by a rule written and committed before
extraction; tests/fixtures/redact/README.md). Taken while two rounds changed the redactor in parallel and
read once, by its totals only, with main's redactor before they were merged; never read by case, never
tuned on. Figures print with ``pytest -s``. Kept apart from tests/test_redact_public.py, whose parts other
rounds tune on."""

from __future__ import annotations

import json

import pytest

from agentcli.redact import redact
from tests.public_corpus import HOLDOUT_FRESH, assert_repeats_nothing, figures, load

SAMPLES = load()
SPLIT = "holdout-fresh"
SOURCES = ("gosec", "bandit", "horusec", "eslint-no-secrets", "repo-supervisor")


def test_fresh_part_is_read_with_the_corpus_and_repeats_nothing_measured_before() -> None:
    """The five sources' samples are read with the corpus, from the commits recorded for each source,
    each secret lies in its text, and no secret or text of the earlier parts (tuned on or read) recurs
    in them."""
    part = [s for s in SAMPLES if s.split == SPLIT]
    commits = json.loads(HOLDOUT_FRESH.read_text())["commits"]
    assert {s.source for s in part} == set(SOURCES) == set(commits)
    assert all(len(commit) == 40 for commit in commits.values())
    earlier = [s for s in SAMPLES if s.split != SPLIT]
    assert_repeats_nothing(part, earlier)
    assert sum(s.label == "secret" for s in part) >= 40
    assert sum(s.label == "lookalike" for s in part) >= 60


def test_fresh_held_out_part_holds_its_measured_figures() -> None:
    """Read once, by totals only, with main's redactor at c5e74a4 (before the precision and recall
    rounds running in parallel were merged): 49/56 caught, 0/85 clear look-alikes changed, 8/55 near
    misses changed; per source gosec 9/10, bandit 5/7, horusec 21/23, eslint-plugin-no-secrets 8/8,
    repo-supervisor 6/8, no look-alike changed in any. A floor and a ceiling, not the targets."""
    f = figures(redact, SPLIT, SAMPLES)
    print(f"public corpus, held-out fresh part: {f}")
    assert f.secrets == 56 and f.lookalikes == 85
    assert f.caught >= 49 and f.changed <= 0, str(f)


@pytest.mark.xfail(
    strict=True,
    reason="held out (fresh part): recall 49/56 (87.5 %), look-alikes 0/85 (0.0 %); targets 95 %, 5 %",
)
def test_fresh_held_out_part_meets_the_targets() -> None:
    f = figures(redact, SPLIT, SAMPLES)
    assert f.recall >= 0.95 and f.false_positives <= 0.05, str(f)
