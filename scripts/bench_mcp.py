"""MCP benchmark: what three local MCP servers (tests/mcp_server.py, one of them slow to start) cost.

- Start-up, as a user meets it, with the three servers configured and with none, measured in the
  same run (interleaved): the time `agentcli chat` takes to show its prompt (target: the prompt does
  not wait, so about the same), and the time from starting `agentcli run "say hi"` to its first
  request reaching the model (by design the first step waits for servers still starting, so this
  one includes the slow server's start: it is reported, not a target; so is the same with only the
  two fast servers, which is what Python servers cost to start).
- A turn once the servers are started (in-process, the real loop against the scripted server on
  127.0.0.1): median time per turn with the three servers' 24 tools offered and with none (target: at
  most 50 ms added).
- One tool call through `run_tool` (arguments, permission, the call, truncation): an MCP tool
  (echo, over stdio) against a built-in one (read of a small file).

Prints one figure per line: `name: value`.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tests.fakellm import FakeLLM, Reply  # noqa: E402

if TYPE_CHECKING:
    from agentcli.session.loop import SessionLoop

RUNS = int(os.environ.get("BENCH_RUNS", "5"))
TURNS = int(os.environ.get("BENCH_TURNS", "30"))
CALLS = int(os.environ.get("BENCH_CALLS", "200"))
SLOW = 1.5  # seconds the slow server sleeps before serving
SERVER = ROOT / "tests" / "mcp_server.py"


def agentcli() -> list[str]:
    exe = shutil.which("agentcli", path=str(Path(sys.executable).parent)) or shutil.which("agentcli")
    return [exe] if exe else [sys.executable, "-m", "agentcli"]


def servers() -> dict[str, dict]:
    def local(*args: str) -> dict:
        return {"type": "local", "command": [sys.executable, str(SERVER), *args], "timeout": 30_000}

    return {"one": local(), "two": local(), "slow": local("--slow", str(SLOW))}


def write_project(root: Path, name: str, base_url: str, mcp: dict) -> Path:
    project = root / name
    (project / ".git").mkdir(parents=True)
    config = {
        "model": "fake/test-model",
        "provider": {
            "fake": {
                "npm": "@ai-sdk/openai-compatible",
                "options": {"baseURL": base_url, "apiKey": "sk-test"},
                "models": {"test-model": {"limit": {"context": 100_000, "output": 8_000}}},
            }
        },
        "mcp": mcp,
    }
    (project / "opencode.json").write_text(json.dumps(config))
    return project


def chat_prompt_seconds(env: dict[str, str], project: Path) -> float:
    import pexpect

    start = time.perf_counter()
    child = pexpect.spawn(
        agentcli()[0],
        ["chat"],
        env={**env, "PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm"},
        cwd=str(project),
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 120),
    )
    child.expect("›")
    elapsed = time.perf_counter() - start
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    return elapsed


def first_request_seconds(env: dict[str, str], project: Path, llm: FakeLLM) -> float:
    """From starting `agentcli run` to its first chat request arriving at the scripted server."""
    arrived: list[float] = []

    def answer(_request: object) -> Reply:
        arrived.append(time.perf_counter())
        return Reply(text="hi")

    rule = llm.on(lambda r: r.path.endswith("/chat/completions") and not r.title, answer)
    start = time.perf_counter()
    subprocess.run(
        [*agentcli(), "run", "say hi"], cwd=project, env=env, capture_output=True, check=True, timeout=120
    )
    llm.off(rule)
    return arrived[0] - start


def startup(root: Path, env: dict[str, str], llm: FakeLLM) -> None:
    projects = {
        "none": write_project(root, "none", llm.base_url, {}),
        "mcp3": write_project(root, "mcp3", llm.base_url, servers()),
        "fast2": write_project(
            root, "fast2", llm.base_url, {k: v for k, v in servers().items() if k != "slow"}
        ),
    }
    prompt: dict[str, list[float]] = {k: [] for k in projects}
    first: dict[str, list[float]] = {k: [] for k in projects}
    for project in projects.values():  # warm caches once
        first_request_seconds(env, project, llm)
    for _ in range(RUNS):
        for name, project in projects.items():
            if name != "fast2":
                prompt[name].append(chat_prompt_seconds(env, project))
            first[name].append(first_request_seconds(env, project, llm))
    p_none, p_mcp = statistics.median(prompt["none"]), statistics.median(prompt["mcp3"])
    f_none, f_mcp = statistics.median(first["none"]), statistics.median(first["mcp3"])
    print(f"chat_prompt_ms_no_mcp: {p_none * 1000:.0f}")
    print(f"chat_prompt_ms_3_servers: {p_mcp * 1000:.0f}")
    print(f"chat_prompt_added_ms: {(p_mcp - p_none) * 1000:.0f}")
    print(f"run_first_request_ms_no_mcp: {f_none * 1000:.0f}")
    print(f"run_first_request_ms_3_servers_one_slow_{SLOW:g}s: {f_mcp * 1000:.0f}")
    print(f"run_first_request_added_ms: {(f_mcp - f_none) * 1000:.0f}")
    f_fast = statistics.median(first["fast2"])
    print(f"run_first_request_ms_2_fast_servers: {f_fast * 1000:.0f}")
    print(f"run_first_request_added_ms_2_fast_servers: {(f_fast - f_none) * 1000:.0f}")


def loop_for(project: Path, env: dict[str, str], root: Path, mcp: object) -> SessionLoop:
    from agentcli.session.loop import SessionLoop
    from agentcli.session.model import resolve_model
    from agentcli.session.options import LoopOptions
    from agentcli.session.runtime import SessionRuntime
    from agentcli.store.store import Store
    from agentcli.trusted_config import load_config

    loaded = load_config(cwd=project, env=env)
    model = resolve_model(loaded.config.model or "", loaded.config.providers_dict(), env={})
    return SessionLoop(
        SessionRuntime(
            store=Store(root / f"{project.name}.db"),
            config=loaded.config,
            model=model,
            options=LoopOptions(directory=project, data_dir=root / "data", mcp=mcp),
        )
    )


def turn_ms(loop: SessionLoop, llm: FakeLLM) -> list[float]:
    store = loop.runtime.store
    sid = store.create_session(str(loop.runtime.options.directory), loop.runtime.model.name).id
    llm.push(*(Reply(text="ok") for _ in range(TURNS + 2)))
    samples = []
    for i in range(TURNS + 2):
        start = time.perf_counter()
        loop.prompt(sid, f"turn {i}")
        if i >= 2:  # the first turns warm imports and write the title
            samples.append((time.perf_counter() - start) * 1000)
    return samples


def turns_and_calls(root: Path, env: dict[str, str], llm: FakeLLM) -> None:
    from agentcli.mcp.host import from_config
    from agentcli.tools.base import ToolContext
    from agentcli.tools.read import ReadTool
    from agentcli.tools.registry import run_tool
    from agentcli.trusted_config import load_config

    project = write_project(root, "inproc", llm.base_url, servers())
    host = from_config(
        load_config(cwd=project, env=env).config.mcp, directory=project, log_dir=root / "logs", notify=print
    )
    assert host is not None
    host.wait_all()
    without = loop_for(project, env, root, None)
    with_mcp = loop_for(project, env, root, host)
    from agentcli.session.toolset import offered_tools

    offered = len(offered_tools(with_mcp.runtime)) - len(offered_tools(without.runtime))
    a, b = [], []
    for _ in range(2):  # interleaved halves so machine noise hits both alike
        a += turn_ms(without, llm)
        b += turn_ms(with_mcp, llm)
    t_none, t_mcp = statistics.median(a), statistics.median(b)
    print(f"mcp_tools_offered: {offered}")
    print(f"turn_ms_no_mcp: {t_none:.1f}")
    print(f"turn_ms_3_servers_started: {t_mcp:.1f}")
    print(f"turn_added_ms: {t_mcp - t_none:.1f}")

    (project / "small.txt").write_text("hello\n" * 20)
    ctx = ToolContext(
        session_id="ses_bench",
        message_id="msg_bench",
        call_id="call",
        directory=project,
        ask=lambda _r: "once",
        file_times=type("T", (), {"record_read": lambda *_: None, "last_read": lambda *_: None})(),
        todos=type("D", (), {"get": lambda *_: [], "set": lambda *_: None})(),
        output_dir=root / "out",
        abort=threading.Event(),
    )
    echo = next(t for t in host.tools() if t.name == "one_echo")
    read = ReadTool()

    def per_call(tool: object, args: dict) -> float:
        for _ in range(10):
            run_tool(tool, args, ctx)  # type: ignore[arg-type]
        start = time.perf_counter()
        for _ in range(CALLS):
            run_tool(tool, args, ctx)  # type: ignore[arg-type]
        return (time.perf_counter() - start) * 1000 / CALLS

    mcp_ms = per_call(echo, {"text": "hello"})
    builtin_ms = per_call(read, {"filePath": str(project / "small.txt")})
    print(f"call_ms_mcp_echo_stdio: {mcp_ms:.2f}")
    print(f"call_ms_builtin_read: {builtin_ms:.2f}")
    print(f"call_overhead_ms_mcp_vs_builtin: {mcp_ms - builtin_ms:.2f}")
    host.close()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, FakeLLM() as llm:
        root = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENCODE", "AGENTCLI", "XDG_"))}
        env.update(
            HOME=str(root / "home"),
            XDG_CONFIG_HOME=str(root / "home" / ".config"),
            XDG_DATA_HOME=str(root / "home" / ".local" / "share"),
            AGENTCLI_DB=str(root / "agentcli.db"),
            AGENTCLI_TRUST_ALL="1",
            LITELLM_LOCAL_MODEL_COST_MAP="True",
            NO_COLOR="1",
        )
        startup(root, env, llm)
        turns_and_calls(root, env, llm)


if __name__ == "__main__":
    main()
