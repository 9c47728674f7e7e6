"""Streaming benchmark: chunks per second and CPU per chunk for 1,000 / 4,000 / 16,000 one-token chunks.

Per size, in one run:
- ``floor``: httpx + ``json.loads`` of each SSE line, nothing else (the cost of the bytes);
- ``lean_events`` / ``litellm_events``: ``stream_chat`` alone on each path (events, no store or UI);
- ``lean`` / ``litellm``: end to end — server → events → Processor (parts written to a real SQLite
  store, batched) → bus → TurnRenderer (streamed markdown) into a pseudo-terminal;
- ``anthropic_events`` / ``anthropic``: the same on the lean path to Anthropic's Messages API (an
  ``anthropic/`` model; the scripted server streams the same answer as Anthropic's events). Target:
  CPU per chunk end to end within 1.5x the OpenAI lean path's (``anthropic_over_lean_…``);
  ``anthropic_litellm``: the same Anthropic stream through litellm, for comparison.

The scripted server (tests/fakellm.py, fast mode) runs in its own process, so the CPU measured here is
the client's alone (all its threads: ``time.process_time``). Each path is warmed up first (imports,
first request), so the figures are the streaming cost. Each size is run ``BENCH_REPEATS`` times
(interleaved) and the median taken: a 1,000-chunk answer costs a few tens of milliseconds, where one
scheduler hiccup would otherwise move the figure by half. Targets: lean ≥ 5,000 chunks/s end to end
(≤ 0.2 ms CPU a chunk) and CPU linear in the answer (16k / 1k within 20 % of 16x). A step also has a
fixed cost (a session row, the request, the renderer) that does not grow with the answer; it is measured
with a 10-chunk answer, and ``…_growth_…`` gives the ratio without it — how the cost grows with the
answer, the property the target is about — next to the plain ratio.

Prints one figure per line: ``name: value``. ``BENCH_SIZES=1000,4000`` and
``BENCH_PATHS=floor,lean`` narrow the run.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import httpx  # noqa: E402
from rich.console import Console  # noqa: E402

from agentcli.bus import Bus  # noqa: E402
from agentcli.cli.render import TurnRenderer  # noqa: E402
from agentcli.llm import lean  # noqa: E402
from agentcli.llm.limits import cost  # noqa: E402
from agentcli.llm.stream import ChatRequest, TextDelta, stream_chat  # noqa: E402
from agentcli.session.processor import Processor, StepPolicy  # noqa: E402
from agentcli.store import ids  # noqa: E402
from agentcli.store.records import AssistantMessage, TextPart, UserMessage  # noqa: E402
from agentcli.store.store import Store  # noqa: E402

SIZES = [int(s) for s in os.environ.get("BENCH_SIZES", "1000,4000,16000").split(",")]
PATHS = os.environ.get(
    "BENCH_PATHS",
    "floor,lean_events,lean,anthropic_events,anthropic,litellm_events,litellm,anthropic_litellm",
).split(",")
REPEATS = int(os.environ.get("BENCH_REPEATS", "5"))
FIXED = 10  # chunks: an answer whose cost is the step's fixed cost
MODEL = "openai/test-model"
ANTHROPIC_MODEL = "anthropic/claude-sonnet-4-5"
MESSAGES = [{"role": "user", "content": "write a long answer"}]


def answer_text(chunks: int) -> str:
    """``chunks`` four-character tokens, with a paragraph break every 50 (so markdown has blocks)."""
    return "".join("ok\n\n" if i % 50 == 49 else "tok " for i in range(chunks))


class Server:
    """tests/fakellm.py in its own process, answering every request with the same reply."""

    def __init__(self, chunks: int, tmp: Path) -> None:
        script = tmp / f"script-{chunks}.json"
        reply = {
            "type": "reply",
            "text": answer_text(chunks),
            "chunk_size": 4,
            "usage": {"prompt_tokens": 1000, "completion_tokens": chunks},
        }
        script.write_text(json.dumps({"responses": [], "fallback": reply}))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.fakellm", "--script", str(script)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.base_url = self.proc.stdout.readline().strip()
        httpx.post(
            self.base_url + "/chat/completions",
            timeout=60,  # the server encodes its reply once
            json={
                "model": "test-model",
                "messages": MESSAGES,
                "stream": True,
                "stream_options": {"include_usage": True},
            },
        ).raise_for_status()

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


class Terminal:
    """A pseudo-terminal whose other end is drained by ``cat``, so writes never block."""

    def __init__(self) -> None:
        master, slave = os.openpty()
        self.drain = subprocess.Popen(
            ["cat"], stdin=master, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        os.close(master)
        self.file = os.fdopen(slave, "w", encoding="utf-8")

    def console(self) -> Console:
        return Console(file=self.file, force_terminal=True, width=100, height=40, color_system="truecolor")

    def close(self) -> None:
        self.file.close()
        self.drain.wait()


def floor(base_url: str) -> int:
    body = {
        "model": "test-model",
        "messages": MESSAGES,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    count = 0
    with (
        httpx.Client() as client,
        client.stream("POST", base_url + "/chat/completions", json=body) as response,
    ):
        for line in response.iter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                json.loads(line[6:])
                count += 1
    return count


def events_only(base_url: str, model: str = MODEL) -> int:
    req = ChatRequest(model=model, messages=MESSAGES, api_base=base_url, api_key="k")
    return sum(isinstance(e, TextDelta) for e in stream_chat(req))


def end_to_end(base_url: str, store: Store, terminal: Terminal, tmp: Path, model: str = MODEL) -> int:
    """One step as a turn runs it: the Processor stores parts and publishes to the renderer."""
    session = store.create_session(str(tmp), model)
    user = UserMessage(id=ids.ascending("msg"), session_id=session.id)
    store.put_message(user)
    msg = AssistantMessage(id=ids.ascending("msg"), session_id=session.id, parent_id=user.id, model=model)
    store.put_message(msg)
    bus = Bus()
    renderer = TurnRenderer(terminal.console(), terminal.console(), cwd=tmp)
    bus.subscribe(renderer)
    policy = StepPolicy(
        cost=lambda u: cost(model, u.prompt_tokens, u.completion_tokens, u.cache_read, u.cache_write),
        is_overflow=lambda tokens: False,
    )
    req = ChatRequest(model=model, messages=MESSAGES, api_base=base_url, api_key="k")
    outcome = Processor(store, bus, threading.Event()).process(msg, req, policy)
    renderer.pause()
    assert outcome == "continue", outcome
    text = "".join(p.text for m in store.messages(session.id) for p in m.parts if isinstance(p, TextPart))
    return len(text) // 4


def measure(run: Callable[[], int], expected: int) -> tuple[float, float]:
    """(chunks per second, CPU milliseconds per chunk) of one run."""
    wall, cpu = time.perf_counter(), time.process_time()
    got = run()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert got >= expected, f"{got} chunks instead of {expected}"
    return expected / wall, cpu * 1000 / expected


def main() -> None:
    results: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        store = Store(tmp / "bench.db")
        terminal = Terminal()
        warm = Server(200, tmp)
        servers = {n: Server(n, tmp) for n in [FIXED, *SIZES]}
        try:
            for path in PATHS:
                route = "litellm" if "litellm" in path else "lean"
                os.environ[lean.PATH_ENV] = route
                runners: dict[str, Callable[[str], int]] = {
                    "floor": floor,
                    "lean_events": events_only,
                    "litellm_events": events_only,
                    "lean": lambda url: end_to_end(url, store, terminal, tmp),
                    "litellm": lambda url: end_to_end(url, store, terminal, tmp),
                    "anthropic_events": lambda url: events_only(url, ANTHROPIC_MODEL),
                    "anthropic": lambda url: end_to_end(url, store, terminal, tmp, ANTHROPIC_MODEL),
                    "anthropic_litellm": lambda url: end_to_end(url, store, terminal, tmp, ANTHROPIC_MODEL),
                }
                runner = runners[path]
                runner(warm.base_url)  # imports and the first request are not what we measure
                samples: dict[int, list[tuple[float, float]]] = {n: [] for n in servers}
                for _ in range(REPEATS):
                    for n in servers:
                        expected = n if path != "floor" else n + 3  # role, finish and usage chunks too
                        samples[n].append(
                            measure(lambda runner=runner, n=n: runner(servers[n].base_url), expected)
                        )
                for n, values in samples.items():
                    results[f"{path}_{n}"] = (
                        statistics.median(v[0] for v in values),
                        statistics.median(v[1] for v in values),
                    )
                    if n == FIXED:
                        print(f"{path}_fixed_cpu_ms: {results[f'{path}_{n}'][1] * n:.2f}", flush=True)
                        continue
                    rate, cpu = results[f"{path}_{n}"]
                    print(f"{path}_{n}_chunks_per_second: {rate:.0f}", flush=True)
                    print(f"{path}_{n}_cpu_ms_per_chunk: {cpu:.4f}", flush=True)
        finally:
            for server in [warm, *servers.values()]:
                server.close()
            store.close()
            terminal.close()
    small, large = min(SIZES), max(SIZES)
    for path in PATHS:
        if f"{path}_{small}" in results and large > small:
            total = {n: results[f"{path}_{n}"][1] * n for n in (FIXED, small, large)}
            print(
                f"{path}_cpu_{large}_over_{small}: {total[large] / total[small]:.2f}"
                f" (linear: {large / small:.0f})"
            )
            growth = (total[large] - total[FIXED]) / (total[small] - total[FIXED])
            print(
                f"{path}_cpu_growth_{large}_over_{small}: {growth:.2f}"
                f" (linear: {(large - FIXED) / (small - FIXED):.1f})"
            )
    for path in ("lean", "lean_events", "anthropic", "anthropic_events", "litellm"):
        if f"{path}_{large}" in results and f"floor_{large}" in results:
            print(
                f"{path}_{large}_cpu_over_floor: "
                f"{results[f'{path}_{large}'][1] / results[f'floor_{large}'][1]:.1f}"
            )
    for path in ("anthropic", "anthropic_events"):
        lean_path = path.replace("anthropic", "lean")
        if f"{path}_{large}" in results and f"{lean_path}_{large}" in results:
            ratio = results[f"{path}_{large}"][1] / results[f"{lean_path}_{large}"][1]
            print(f"{path}_over_{lean_path}_{large}_cpu: {ratio:.2f} (target: at most 1.5)")
    if f"anthropic_litellm_{large}" in results and f"anthropic_{large}" in results:
        ratio = results[f"anthropic_litellm_{large}"][1] / results[f"anthropic_{large}"][1]
        print(f"anthropic_litellm_over_anthropic_{large}_cpu: {ratio:.1f}")
    if f"litellm_{large}" in results and f"lean_{large}" in results:
        print(
            f"litellm_over_lean_{large}_cpu: "
            f"{results[f'litellm_{large}'][1] / results[f'lean_{large}'][1]:.1f}"
        )


if __name__ == "__main__":
    main()
