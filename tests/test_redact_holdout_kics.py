"""A fresh held-out part of the public redaction corpus, from kics' Passwords And Secrets query tests
(tests/fixtures/redact/holdout_kics.json, split ``holdout-kics``; built by scripts/redact_corpus_kics.py
by a rule written and committed before extraction; tests/fixtures/redact/README.md). Taken while
``holdout-next`` was about to be tuned on; read twice, by its totals only. Then halved by source file
(scripts/redact_split_kics.py): ``tune-kics`` is tuned on, ``holdout-kics`` stays held out (its samples
never read). Figures print with ``pytest -s``. Kept apart from tests/test_redact_public.py, whose parts
other rounds tune on."""

from __future__ import annotations

import json

import pytest

from agentcli.redact import redact
from scripts.redact_split_kics import half, source_file
from tests.public_corpus import HOLDOUT_KICS, assert_repeats_nothing, figures, load

SAMPLES = load()
SPLIT = "holdout-kics"
TUNE = "tune-kics"
KICS = (SPLIT, TUNE)
# the version of kics' expected results the positive files are labelled by first
PRIMARY = "dd952bafa367f125517ed95cff5026cd1b48f525"


def test_kics_part_is_halved_by_source_file() -> None:
    """Each sample lies in the half its file's path gives (scripts/redact_split_kics.py, a rule committed
    before any kics sample was read), so no file has lines in both halves."""
    part = [s for s in SAMPLES if s.split in KICS]
    assert all(s.split == half(s.origin) for s in part)
    files = {split: {source_file(s.origin) for s in part if s.split == split} for split in KICS}
    assert files[SPLIT] and files[TUNE] and not files[SPLIT] & files[TUNE]


def test_kics_part_is_read_with_the_corpus_and_repeats_nothing_measured_before() -> None:
    """kics' samples are read with the corpus, from the commits recorded for each file, each secret lies
    in its text, and no secret or text of the earlier parts (tuned on or read) recurs in them."""
    part = [s for s in SAMPLES if s.split in KICS]
    fixture = json.loads(HOLDOUT_KICS.read_text())
    assert {s.source for s in part} == {"kics"}
    assert fixture["commits"] == {"kics": PRIMARY}
    files = fixture["file_commits"]
    assert all(len(commit) == 40 for commit in files.values())
    assert {s.origin.split("/")[-1].split("@")[0] for s in part} <= set(files)
    earlier = [s for s in SAMPLES if s.split not in KICS]
    assert_repeats_nothing(part, earlier)
    assert sum(s.label == "secret" for s in part) >= 40
    assert sum(s.label == "lookalike" for s in part) >= 500


def test_kics_held_out_half_holds_its_measured_figures() -> None:
    """The whole part read twice (totals only): 34/43 caught, 1/540 clear look-alikes changed, before and
    after the round on holdout-next. Halved by source file; this half read once at the split (totals only):
    19/25 caught, 1/303 changed, 5/112 near misses; read once more (totals only) after the round on the
    other half: 19/25, 1/303 (unchanged). A floor and a ceiling, not the targets."""
    f = figures(redact, SPLIT, SAMPLES)
    print(f"public corpus, held-out kics half: {f}")
    assert f.secrets == 25 and f.lookalikes == 303
    assert f.caught >= 19 and f.changed <= 1, str(f)


def test_kics_tuning_half_holds_its_figures() -> None:
    """The half tuned on, read at the split: 15/18 caught, 0/237 changed, 2/98 near misses. Its three
    misses read by case: a commented-out ``#    TokenKey: …`` (closed by class: 16/18) and two Google
    OAuth client ids, a public identifier (label artefacts, left)."""
    f = figures(redact, TUNE, SAMPLES)
    print(f"public corpus, kics tuning half: {f}")
    assert f.secrets == 18 and f.lookalikes == 237
    assert f.caught >= 16 and f.changed <= 0, str(f)


@pytest.mark.xfail(
    strict=True,
    reason="held out (kics half): recall 19/25 (76.0 %), look-alikes 1/303 (0.3 %); targets 95 %, 5 %",
)
def test_kics_held_out_half_meets_the_targets() -> None:
    f = figures(redact, SPLIT, SAMPLES)
    assert f.recall >= 0.95 and f.false_positives <= 0.05, str(f)
