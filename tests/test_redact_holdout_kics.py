"""A fresh held-out part of the public redaction corpus, from kics' Passwords And Secrets query tests
(tests/fixtures/redact/holdout_kics.json, split ``holdout-kics``; built by scripts/redact_corpus_kics.py
by a rule written and committed before extraction; tests/fixtures/redact/README.md). Taken while
``holdout-next`` was about to be tuned on; read once, by its totals only. Figures print with ``pytest -s``.
Kept apart from tests/test_redact_public.py, whose parts other rounds tune on."""

from __future__ import annotations

import json

import pytest

from agentcli.redact import redact
from tests.public_corpus import HOLDOUT_KICS, Figures, figures, load

SAMPLES = load()
SPLIT = "holdout-kics"
# the version of kics' expected results the positive files are labelled by first
PRIMARY = "dd952bafa367f125517ed95cff5026cd1b48f525"


def kics_figures() -> Figures:
    return figures(redact, SPLIT, SAMPLES)


def test_kics_part_is_read_with_the_corpus_and_repeats_nothing_measured_before() -> None:
    """kics' samples are read with the corpus, from the commits recorded for each file, each secret lies
    in its text, and no secret or text of the earlier parts (tuned on or read) recurs in them."""
    part = [s for s in SAMPLES if s.split == SPLIT]
    fixture = json.loads(HOLDOUT_KICS.read_text())
    assert {s.source for s in part} == {"kics"}
    assert fixture["commits"] == {"kics": PRIMARY}
    files = fixture["file_commits"]
    assert all(len(commit) == 40 for commit in files.values())
    assert {s.origin.split("/")[-1].split("@")[0] for s in part} <= set(files)
    earlier = [s for s in SAMPLES if s.split != SPLIT]
    texts = {s.text for s in earlier}
    seen = "\n".join(x for s in earlier for x in (s.text, s.secret))
    for s in part:
        assert s.secret in s.text and s.text not in texts, s.origin
        if s.label == "secret":
            assert len(s.secret) >= 4 and s.secret not in seen, s.origin
    assert sum(s.label == "secret" for s in part) >= 40
    assert sum(s.label == "lookalike" for s in part) >= 500


def test_kics_held_out_part_holds_its_measured_figures() -> None:
    """Read once (totals only) when wired in, on main 7b192ff's redactor, before the round that tunes on
    holdout-next: 34/43 caught, 1/540 clear look-alikes changed, 7/210 near misses. A floor and a
    ceiling, not the targets."""
    f = kics_figures()
    print(f"public corpus, held-out part kics: {f}")
    assert f.secrets >= 43 and f.lookalikes >= 540
    assert f.caught >= 34 and f.changed <= 1, str(f)


@pytest.mark.xfail(
    strict=True,
    reason="held out (kics): recall 34/43 (79.1 %), look-alikes 1/540 (0.2 %); targets 95 %, 5 %",
)
def test_kics_held_out_part_meets_the_targets() -> None:
    f = kics_figures()
    assert f.recall >= 0.95 and f.false_positives <= 0.05, str(f)
