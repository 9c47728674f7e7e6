"""Precision on third-party text: the redacted spans in the installed packages' files, by half.

Installed packages' code, docs and data hold (almost) no secrets, so every span the redactor takes
there is a candidate false positive. The files are split by a rule fixed before any span was read:
the sha256 of a file's path relative to its root (the venv's site-packages, /usr/lib/python3,
/usr/lib/python3.X); an even first byte puts it in the tuning half, odd in the held-out half. Only
the tuning half's spans may be printed (``--show``); the held-out half is read by totals.

    python scripts/redact_package_spans.py                 # totals per half and per kind
    python scripts/redact_package_spans.py --show          # the tuning half's spans, one a line

Imports agentcli only to run the redactor.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentcli.redact import find  # noqa: E402

SUFFIXES = (".py", ".md", ".rst", ".txt", ".json", ".yaml", ".yml", ".toml", ".cfg", ".ini", ".js")
SIZE_CAP = 200_000
TUNING, HELD_OUT = "tuning", "held-out"


def roots() -> list[Path]:
    venv = Path(sys.prefix)
    found = sorted(glob.glob(str(venv / "lib" / "python3*" / "site-packages")))
    found += ["/usr/lib/python3", *sorted(glob.glob("/usr/lib/python3.*"))]
    return [Path(p) for p in found if Path(p).is_dir()]


def half(relative: str) -> str:
    """The split rule: even first byte of sha256(relative path) is tuning, odd is held out."""
    return TUNING if hashlib.sha256(relative.encode()).digest()[0] % 2 == 0 else HELD_OUT


def files() -> Iterator[tuple[str, str, Path]]:
    """(half, root-relative path, path) of every measured file, in a stable order."""
    for root in roots():
        for path in sorted(root.rglob("*")):
            if path.suffix not in SUFFIXES or path.is_symlink() or not path.is_file():
                continue
            if path.stat().st_size > SIZE_CAP:
                continue
            relative = path.relative_to(root).as_posix()
            yield half(relative), relative, path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--show", action="store_true", help="print the tuning half's spans")
    args = parser.parse_args()
    count = Counter[str]()
    spans = Counter[str]()
    kinds: dict[str, Counter[str]] = {TUNING: Counter(), HELD_OUT: Counter()}
    for which, relative, path in files():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        count[which] += 1
        for f in find(text):
            spans[which] += 1
            kinds[which][f.kind] += 1
            if args.show and which == TUNING:
                line_start = text.rfind("\n", 0, f.start) + 1
                line_end = text.find("\n", f.end)
                line = text[line_start : line_end if line_end >= 0 else len(text)]
                print(f"{f.kind}\t{relative}\t{text[f.start : f.end][:80]!r}\t{line.strip()[:200]!r}")
    for which in (TUNING, HELD_OUT):
        print(f"{which}: {count[which]} files, {spans[which]} spans")
        if which == TUNING:
            print("  by kind: " + ", ".join(f"{k} {n}" for k, n in kinds[which].most_common()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
