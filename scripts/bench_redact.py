"""Redaction benchmark: the cost of redacting a 1 MB summary input (code, logs, prose, a few
secrets of every kind the corpus has — a worst case, as every rule's keyword occurs), target under
100 ms; the same without the planted secrets; and the same input with one non-ASCII character (Python
then stores it 4 bytes a character, and lower-casing costs more).
Also its ratio to ``json.dumps`` of that input, a cost every request pays anyway, and to the redactor
of a baseline git revision (``--baseline REV``, default ``main``; target: at most 2x), measured in the
same run: that revision's agentcli/redact/ is loaded from git as a package of its own.

Hostile inputs (tests/hostile_text.py: every construction the patterns take apart, and each of
agentcli's own rules' keywords repeated, as one long word, as words and as keys): the worst time for
100 KB of one, and the same for the baseline (its worst found among the 10 KB costs first, since a
super-linear one there takes tens of seconds at 100 KB). Target: well under a second (a line of one
key's keyword is judged at each place, ~3 µs a character); tests/test_redact_hostile.py holds each to
linear growth.

Prints one figure per line: `name: value`.

Times are CPU time of this process (``time.process_time``), not wall time: on a shared machine wall
time measures the other processes too.
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentcli.redact import find, redact  # noqa: E402
from tests.hostile_text import CONSTRUCTIONS, keyword_units, line, own_keywords  # noqa: E402
from tests.secret_corpus import LOOKALIKES, SECRETS  # noqa: E402

SIZE = 1_000_000
RUNS = 7


def summary_input(planted: bool = True) -> str:
    code = "\n".join(p.read_text() for p in sorted((ROOT / "agentcli").rglob("*.py")))
    logs = "\n".join(
        f"2024-05-01T10:{i // 60 % 60:02d}:{i % 60:02d}Z INFO GET /api/items/{i} 200 {i % 97}ms user={i % 13}"
        for i in range(2000)
    )
    prose = "The summary keeps the objective, the important details and the next move. " * 200
    corpus = "\n".join(s.context for s in SECRETS) + "\n" + "\n".join(s.context for s in LOOKALIKES)
    block = "\n".join([code, logs, prose, corpus if planted else ""])
    return (block * (SIZE // len(block) + 1))[:SIZE]


def best_ms(fn, arg: str) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(RUNS):
        start = time.process_time()
        fn(arg)
        times.append(time.process_time() - start)
    return statistics.median(times) * 1000


def paired_ms(old: Callable[[str], str], new: Callable[[str], str], arg: str) -> tuple[float, float, float]:
    """Medians of old and new, and of new/old per pair, the two run in turn: on a shared machine a
    load that comes and goes falls on both sides of a pair, not on all the runs of one side."""
    olds: list[float] = []
    news: list[float] = []
    for _ in range(RUNS):
        for fn, times in ((old, olds), (new, news)):
            start = time.process_time()
            fn(arg)
            times.append(time.process_time() - start)
    ratio = statistics.median(n / o for n, o in zip(news, olds, strict=True))
    return statistics.median(olds) * 1000, statistics.median(news) * 1000, ratio


def baseline(rev: str) -> Callable[[str], str] | None:
    """``redact`` as it was at ``rev`` (its agentcli/redact/ loaded as the package ``redact_at_rev``)."""
    try:
        names = subprocess.run(
            ["git", "-C", str(ROOT), "ls-tree", "--name-only", f"{rev}:agentcli/redact/"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
    except subprocess.CalledProcessError:
        return None
    folder = Path(tempfile.mkdtemp()) / "redact_at_rev"
    folder.mkdir()
    for name in names:
        data = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{rev}:agentcli/redact/{name}"], check=True, capture_output=True
        ).stdout
        if name.endswith(".py"):
            data = data.replace(b"agentcli.redact", b"redact_at_rev")
        (folder / name).write_bytes(data)
    sys.path.insert(0, str(folder.parent))
    return importlib.import_module("redact_at_rev").redact  # type: ignore[no-any-return]


def once_ms(fn: Callable[[str], str], text: str) -> float:
    start = time.process_time()
    fn(text)
    return (time.process_time() - start) * 1000


def worst_hostile(fn: Callable[[str], str], screen: int = 0) -> tuple[float, str]:
    """The most ms 100 KB of one hostile unit costs, and that unit; with ``screen``, only the 3 units
    costing most at that size are measured at 100 KB."""
    units = [*CONSTRUCTIONS, *keyword_units(own_keywords())]
    if screen:
        units = sorted(units, key=lambda u: once_ms(fn, line(u, screen)))[-3:]
    _, worst = max((once_ms(fn, line(u, 100_000)), u) for u in units)
    # the worst unit found by one run each, its cost the median of three: one run may catch a load
    text = line(worst, 100_000)
    return statistics.median(once_ms(fn, text) for _ in range(3)), worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main", help="git revision to compare with (default: main)")
    args = parser.parse_args()
    text = summary_input()
    wide = text[:-1] + "é"
    redact(text)  # warm the regex cache
    ms = best_ms(redact, text)
    print(f"redact_1mb_ms: {ms:.1f}")
    print(f"redact_1mb_non_ascii_ms: {best_ms(redact, wide):.1f}")
    print(f"redact_1mb_without_secrets_ms: {best_ms(redact, summary_input(planted=False)):.1f}")
    print(f"redact_vs_json_dumps: {ms / best_ms(json.dumps, text):.2f}")
    print(f"secrets_found_1mb: {len(find(text))}")
    old = baseline(args.baseline)
    if old is None:
        print(f"baseline: {args.baseline} has no agentcli/redact/")
        return
    old(text)
    old_ms, _, ratio = paired_ms(old, redact, text)
    print(f"redact_1mb_baseline_ms ({args.baseline}): {old_ms:.1f}")
    print(f"redact_vs_baseline: {ratio:.2f} (target <= 2.00; median of {RUNS} interleaved pairs)")
    worst, unit = worst_hostile(redact)
    print(f"hostile_worst_ms_per_100kb: {worst:.0f} ({unit!r}; target: < 1000, linear)")
    _, _, ratio = paired_ms(old, redact, line(unit, 100_000))
    print(f"hostile_worst_vs_baseline: {ratio:.2f} ({unit!r}, median of {RUNS} interleaved pairs)")
    worst, unit = worst_hostile(old, screen=10_000)
    print(f"hostile_worst_ms_per_100kb_baseline ({args.baseline}): {worst:.0f} ({unit!r})")


if __name__ == "__main__":
    main()
