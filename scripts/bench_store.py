"""Store benchmark on SQLite and, with ``AGENTCLI_BENCH_PG`` (a postgresql+psycopg:// URL whose
database the benchmark may fill and empty), on PostgreSQL side by side.

Over 10,000 sessions: full-text search (a rare word, a common word, a prefix, a phrase; target
under 50 ms each), `sessions list` (all sessions, as the command reads them), and the store's share
of one turn (user message and part, an assistant message with step, tool and text parts streamed in
5 rewrites each, step-finish totals, reading the window back).

Prints one figure per line: `name: value`; with PostgreSQL also `ratio_<name>: pg / sqlite`.

Times are CPU time of this process (``time.process_time``), not wall time: on a shared machine wall
time measures the other processes too.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentcli.store import ids  # noqa: E402
from agentcli.store import records as r  # noqa: E402
from agentcli.store.store import Store  # noqa: E402

SESSIONS = int(os.environ.get("BENCH_SESSIONS", "10000"))
TURNS = 2  # per session: 12 parts each
RUNS = int(os.environ.get("BENCH_RUNS", "15"))
OUTPUT = "def handler(event):\n    return process(event)\n" * 12


def session(n: int) -> tuple[r.SessionInfo, list[r.WithParts]]:
    info = r.SessionInfo(
        id=ids.ascending("ses"),
        directory=f"/work/p{n % 50}",
        title=f"session {n} topic{n % 997}",
        messages=2 * TURNS,
    )
    sid, out = info.id, []
    for t in range(TURNS):
        user = r.UserMessage(id=ids.ascending("msg"), session_id=sid)
        a = r.AssistantMessage(id=ids.ascending("msg"), session_id=sid, parent_id=user.id, finish="stop")
        out.append(
            r.WithParts(
                info=user,
                parts=[
                    r.TextPart(
                        id=ids.ascending("prt"),
                        session_id=sid,
                        message_id=user.id,
                        text=f"request {t}: why does topic{n % 997} fail in handler.py with code {n}",
                    )
                ],
            )
        )
        out.append(
            r.WithParts(
                info=a,
                parts=[
                    r.StepStartPart(id=ids.ascending("prt"), session_id=sid, message_id=a.id),
                    r.ToolPart(
                        id=ids.ascending("prt"),
                        session_id=sid,
                        message_id=a.id,
                        call_id=f"c{t}",
                        tool="read",
                        state=r.ToolState(
                            status="completed", input={"path": f"src/mod{n % 300}/handler.py"}, output=OUTPUT
                        ),
                    ),
                    r.TextPart(
                        id=ids.ascending("prt"),
                        session_id=sid,
                        message_id=a.id,
                        text=f"The handler drops the event when topic{n % 997} is empty; "
                        f"fixed in mod{n % 300}.",
                    ),
                    r.StepFinishPart(
                        id=ids.ascending("prt"), session_id=sid, message_id=a.id, tokens=r.Tokens(total=900)
                    ),
                ],
            )
        )
    return info, out


def fill(store: Store) -> None:
    batch: list[tuple[r.SessionInfo, list[r.WithParts]]] = []
    for n in range(SESSIONS):
        batch.append(session(n))
        if len(batch) == 500:
            store.import_sessions(batch)
            batch = []
    if batch:
        store.import_sessions(batch)


def median_ms(fn: Callable[[], object], runs: int = RUNS) -> float:
    fn()  # warm caches and the pool
    times = []
    for _ in range(runs):
        start = time.process_time()
        fn()
        times.append((time.process_time() - start) * 1000)
    return statistics.median(times)


def one_turn(store: Store, sid: str) -> None:
    user = r.UserMessage(id=ids.ascending("msg"), session_id=sid)
    store.put_message(user)
    store.put_part(
        r.TextPart(id=ids.ascending("prt"), session_id=sid, message_id=user.id, text="look at handler.py")
    )
    a = r.AssistantMessage(id=ids.ascending("msg"), session_id=sid, parent_id=user.id)
    store.put_message(a)
    store.put_part(r.StepStartPart(id=ids.ascending("prt"), session_id=sid, message_id=a.id))
    tool = r.ToolPart(id=ids.ascending("prt"), session_id=sid, message_id=a.id, call_id="c", tool="read")
    for status in ("pending", "running", "completed"):
        tool = tool.model_copy(
            update={"state": r.ToolState(status=status, input={"path": "handler.py"}, output=OUTPUT)}
        )
        store.put_part(tool)
    text = r.TextPart(id=ids.ascending("prt"), session_id=sid, message_id=a.id)
    for i in range(5):
        text = text.model_copy(update={"text": "The handler " * (i + 1)})
        store.put_part(text)
    store.put_part(
        r.StepFinishPart(id=ids.ascending("prt"), session_id=sid, message_id=a.id, tokens=r.Tokens(total=900))
    )
    store.put_message(a.model_copy(update={"finish": "stop"}))
    list(store.stream(sid))


def measure(store: Store) -> dict[str, float]:
    fill(store)
    sid = store.list_sessions(1)[0].id
    return {
        "search_rare_ms": median_ms(lambda: store.search("topic123")),
        "search_common_ms": median_ms(lambda: store.search("handler")),
        "search_prefix_ms": median_ms(lambda: store.search("fail topic12*")),
        "search_phrase_ms": median_ms(lambda: store.search('"drops the event"')),
        "search_in_session_ms": median_ms(lambda: store.search("handler", session_id=sid)),
        "sessions_list_ms": median_ms(lambda: store.list_sessions(), runs=max(3, RUNS // 3)),
        "turn_store_ms": median_ms(lambda: one_turn(store, sid)),
    }


def main() -> None:
    print(f"sessions: {SESSIONS}")
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "bench.db")
        lite = measure(store)
        store.close()
    for name, value in lite.items():
        print(f"sqlite_{name}: {value:.2f}")
    url = os.environ.get("AGENTCLI_BENCH_PG")
    if not url:
        return
    sys.path.insert(0, str(ROOT / "tests"))
    from tests.dbs import pg_schema_url

    with pg_schema_url(url) as schema_url:
        store = Store(schema_url)
        pg = measure(store)
        store.close()
    for name, value in pg.items():
        print(f"pg_{name}: {value:.2f}")
    for name in lite:
        print(f"ratio_{name}: {pg[name] / lite[name]:.2f}")


if __name__ == "__main__":
    main()
