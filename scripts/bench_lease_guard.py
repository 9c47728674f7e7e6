"""What the store boundary costs a write: the lease check every write of a leased session makes
(``Lease.verify``) and the cleaning of unstorable characters, on SQLite and, with
``AGENTCLI_BENCH_PG`` (a postgresql+psycopg:// URL whose database the benchmark may write to), on
PostgreSQL.

A part rewritten as it streams (about 2 kB of text, a write each flush), timed with and without
the session's lease held, alternating runs. Prints one figure per line: `name: value`, and
`ratio_leased_<db>: leased / unleased` from the same run.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentcli.store import ids  # noqa: E402
from agentcli.store.records import TextPart, UserMessage  # noqa: E402
from agentcli.store.store import Store  # noqa: E402

WRITES = int(os.environ.get("BENCH_WRITES", "300"))
RUNS = int(os.environ.get("BENCH_RUNS", "7"))
TEXT = "The handler returns the processed event; " * 50


def _writes(store: Store, sid: str, message_id: str) -> float:
    part = TextPart(id=ids.ascending("prt"), session_id=sid, message_id=message_id)
    start = time.perf_counter()
    for n in range(WRITES):
        part.text = TEXT[: 100 + n * 5]
        store.put_part(part)
    return (time.perf_counter() - start) / WRITES * 1e6


def bench(name: str, store: Store) -> None:
    sid = store.create_session("/bench").id
    msg = UserMessage(id=ids.ascending("msg"), session_id=sid)
    store.put_message(msg)
    free: list[float] = []
    leased: list[float] = []
    for _ in range(RUNS):
        free.append(_writes(store, sid, msg.id))
        with store.lease(sid):
            leased.append(_writes(store, sid, msg.id))
    a, b = statistics.median(free), statistics.median(leased)
    print(f"put_part_us_{name}: {a:.0f}")
    print(f"put_part_leased_us_{name}: {b:.0f}")
    print(f"ratio_leased_{name}: {b / a:.2f}")
    store.delete_session(sid)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "bench.db")
        bench("sqlite", store)
        store.close()
    if os.environ.get("AGENTCLI_BENCH_PG"):
        store = Store(os.environ["AGENTCLI_BENCH_PG"])
        bench("pg", store)
        store.close()


if __name__ == "__main__":
    main()
