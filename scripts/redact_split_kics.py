"""Halve kics' held-out part of the public redaction corpus by source file, by a rule fixed before any
sample or result was read.

Usage: python scripts/redact_split_kics.py

A sample's file is its ``origin`` without the ``@commit:line`` tail (the test file's path in kics), so all
lines of one file fall in the same half. A file whose SHA-256 (of that path) starts with an even byte is
tuned on (split ``tune-kics``); an odd one stays held out (``holdout-kics``). Only the ``split`` field of
tests/fixtures/redact/holdout_kics.json is rewritten; the counts per half are printed (no sample).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "redact" / "holdout_kics.json"
TUNE, HELD = "tune-kics", "holdout-kics"


def source_file(origin: str) -> str:
    """The test file a sample came from: its origin without ``@commit:line``."""
    return origin.split("@")[0]


def half(origin: str) -> str:
    return HELD if hashlib.sha256(source_file(origin).encode()).digest()[0] % 2 else TUNE


def main() -> None:
    data = json.loads(FIXTURE.read_text())
    for s in data["samples"]:
        s["split"] = half(s["origin"])
    with FIXTURE.open("w") as f:
        json.dump(data, f, indent=0, ensure_ascii=False)
        f.write("\n")
    files = {
        split: {source_file(s["origin"]) for s in data["samples"] if s["split"] == split}
        for split in (TUNE, HELD)
    }
    counts = Counter((s["split"], s["label"]) for s in data["samples"])
    for split in (TUNE, HELD):
        print(
            f"{split}: {len(files[split])} files, {counts[split, 'secret']} secrets, "
            f"{counts[split, 'lookalike']} clear look-alikes, {counts[split, 'unclear']} unclear"
        )


if __name__ == "__main__":
    main()
