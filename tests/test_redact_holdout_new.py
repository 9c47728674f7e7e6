"""The part built from whispers' and ripsecrets' tests (tests/fixtures/redact/holdout_new.json), held out
at first, then halved by family and tuned on half by half: its schema and labels are sane and it repeats
nothing of the other parts. Nothing here runs the redactor (tests/test_redact_public.py measures it)."""

from __future__ import annotations

import json
import re
from collections import Counter

from tests.public_corpus import FIXTURE, HOLDOUT_NEW, load

SPLITS = ("tune-whispers-ripsecrets-2", "tune-whispers-ripsecrets")  # the second half held out until read
PLACEHOLDER_PASSWORDS = {"pass", "password", "secret", "changeme", "passwd", "pwd"}
NEW = json.loads(HOLDOUT_NEW.read_text())
TUNED = json.loads(FIXTURE.read_text())["samples"]


def test_the_new_held_out_part_is_read_with_the_public_corpus() -> None:
    part = [s for s in load() if s.split in SPLITS]
    assert len(part) == len(NEW["samples"])
    assert {s.source for s in part} == {"whispers", "ripsecrets"}


def test_each_source_gives_enough_secrets_and_clear_look_alikes() -> None:
    counts = Counter((s["source"], s["label"]) for s in NEW["samples"])
    assert counts["whispers", "secret"] >= 190 and counts["ripsecrets", "secret"] >= 30, counts
    assert counts["whispers", "lookalike"] + counts["ripsecrets", "lookalike"] >= 200, counts


def test_every_secret_is_in_its_text_and_every_sample_is_of_the_new_split() -> None:
    for s in NEW["samples"]:
        assert set(s) == {"label", "split", "source", "origin", "text", "secret"}, s
        assert s["split"] in SPLITS and s["source"] in ("whispers", "ripsecrets") and s["origin"], s
        assert s["label"] in ("secret", "lookalike", "unclear"), s
        assert s["secret"] in s["text"], s
        if s["label"] == "secret":
            assert len(s["secret"]) >= 4 and s["secret"].lower() not in PLACEHOLDER_PASSWORDS, s


def test_no_clear_look_alike_holds_a_secret_of_the_part() -> None:
    secrets = {s["secret"] for s in NEW["samples"] if s["label"] == "secret" and len(s["secret"]) >= 6}
    for s in NEW["samples"]:
        if s["label"] == "lookalike":
            assert not [v for v in secrets if v in s["text"]], s


def test_the_part_repeats_no_text_or_secret_that_was_tuned_on() -> None:
    texts = {s["text"] for s in TUNED}
    tuned = [
        s["secret"]
        for s in TUNED
        if s["label"] == "secret" and len(s["secret"]) >= 8
        if s["secret"].lower() not in PLACEHOLDER_PASSWORDS
    ]
    pairs = [(s["text"], s["secret"]) for s in NEW["samples"]]
    assert len(pairs) == len(set(pairs))
    for s in NEW["samples"]:
        assert s["text"] not in texts, s
        assert not [v for v in tuned if v in s["text"]], s


def test_the_two_halves_are_whole_families_apart() -> None:
    """Formats of one family share their values (apikeys.json, .xml, .yml): a family is never split."""
    halves: dict[str, set[str]] = {}
    for s in NEW["samples"]:
        name = s["origin"].split(":")[0].rsplit("/", 1)[-1]
        halves.setdefault(name.split(".")[0] or name, set()).add(s["split"])
    assert all(len(h) == 1 for h in halves.values()), halves
    second = Counter(s["label"] for s in NEW["samples"] if s["split"] == SPLITS[0])
    assert second["secret"] >= 80 and second["lookalike"] >= 90, second


def test_the_commits_it_was_extracted_from_are_recorded() -> None:
    assert set(NEW["commits"]) == {"whispers", "ripsecrets"}
    assert all(re.fullmatch(r"[0-9a-f]{40}", c) for c in NEW["commits"].values())
