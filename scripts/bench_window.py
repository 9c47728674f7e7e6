"""Window discovery benchmark: what asking a local server for its window costs (target: at most
50 ms once per model), per server shape, against the scripted server speaking each one's shape; the
cached answer on the next run; and what resolving a model costs when the config gives its window
(target: the same as without discovery, ratio at most 1.1x — nothing is asked).

Prints one figure per line: `name: value`.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentcli.demo.local_servers import LocalServer  # noqa: E402
from agentcli.demo.scripted_server import FakeLLM  # noqa: E402
from agentcli.llm.route import Route  # noqa: E402
from agentcli.session.model import resolve_model  # noqa: E402
from agentcli.session.window import WindowFinder  # noqa: E402

SHAPES = ["vllm", "llamacpp", "lmstudio", "ollama", "litellm", "error-only"]
RUNS = 20


def _ms(seconds: list[float]) -> float:
    return statistics.median(seconds) * 1000


def main() -> None:
    with FakeLLM() as server:
        route = Route(litellm_model="openai/test-model", api_base=server.base_url, api_key=None)
        for shape in SHAPES:
            server.local = LocalServer(shape, 24_576)
            first, cached = [], []
            for _ in range(RUNS):
                with tempfile.TemporaryDirectory() as tmp:
                    start = time.perf_counter()
                    WindowFinder(Path(tmp)).find(route)
                    first.append(time.perf_counter() - start)
                    start = time.perf_counter()
                    WindowFinder(Path(tmp)).find(route)
                    cached.append(time.perf_counter() - start)
            print(f"discover_{shape}_ms: {_ms(first):.1f} (target <= 50)")
            print(f"cached_{shape}_ms: {_ms(cached):.2f}")
        providers = {
            "local": {
                "npm": "@ai-sdk/openai-compatible",
                "options": {"baseURL": server.base_url},
                "models": {"test-model": {"limit": {"context": 24_576, "output": 4096}}},
            }
        }
        with tempfile.TemporaryDirectory() as tmp:
            finder = WindowFinder(Path(tmp))
            before = len(server.requests)
            plain, with_finder = [], []
            for _ in range(RUNS * 10):
                start = time.perf_counter()
                resolve_model("local/test-model", providers)
                plain.append(time.perf_counter() - start)
                start = time.perf_counter()
                resolve_model("local/test-model", providers, windows=finder)
                with_finder.append(time.perf_counter() - start)
            asked = len(server.requests)
        print(
            f"resolve_config_window_ratio: {statistics.median(with_finder) / statistics.median(plain):.2f}x "
            "(target <= 1.1x)"
        )
        print(f"resolve_config_window_requests: {asked - before} (target 0)")


if __name__ == "__main__":
    main()
