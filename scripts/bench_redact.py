"""Redaction benchmark: the cost of redacting a 1 MB summary input (code, logs, prose, a few
secrets of every kind the corpus has — a worst case, as every rule's keyword occurs), target under
100 ms; the same without the planted secrets; and the same input with one non-ASCII character (Python
then stores it 4 bytes a character, and lower-casing costs more).
Also its ratio to ``json.dumps`` of that input, a cost every request pays anyway.

Prints one figure per line: `name: value`.

Times are CPU time of this process (``time.process_time``), not wall time: on a shared machine wall
time measures the other processes too.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentcli.redact import find, redact  # noqa: E402
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


def main() -> None:
    text = summary_input()
    wide = text[:-1] + "é"
    redact(text)  # warm the regex cache
    ms = best_ms(redact, text)
    print(f"redact_1mb_ms: {ms:.1f}")
    print(f"redact_1mb_non_ascii_ms: {best_ms(redact, wide):.1f}")
    print(f"redact_1mb_without_secrets_ms: {best_ms(redact, summary_input(planted=False)):.1f}")
    print(f"redact_vs_json_dumps: {ms / best_ms(json.dumps, text):.2f}")
    print(f"secrets_found_1mb: {len(find(text))}")


if __name__ == "__main__":
    main()
