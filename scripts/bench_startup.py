"""Startup benchmark: wall time of `agentcli --version`, `--help` and `sessions list` (on a database
of 1,000 sessions), each as a ratio to `python -c "import typer, rich.console, sqlmodel"` measured in
the same run (target: at most 1.3x); whether litellm was imported (it must not be); and the time
`agentcli chat` takes to show its prompt against the time `import litellm` takes.

A whole turn: `agentcli run "say hi"` against a local scripted server (tests/fakellm.py in its own
process), wall and CPU time as ratios to the same import floor (target on the lean path: at most 1.3x,
issue 24), on the lean path and, for comparison, on litellm's (AGENTCLI_LLM_PATH=litellm); the same
turn with an ``anthropic/`` model (the lean path to Anthropic's Messages API; target at most 1.3x,
litellm not imported); and the REPL's time from Enter to the first streamed character of the answer,
on both paths; and that time for the first message, sent once the REPL has gone idle, over the next
two (``chat_first_turn_over_next_*``), the litellm path's over the lean path's (target at most 1.5:
litellm's first stream is rehearsed in the background, llm/warm.py; it was 2.75).

The floor names sqlmodel, which agentcli no longer imports (its store is SQLAlchemy Core: no ORM), so
the lean turn's CPU is also given over a second floor, the libraries a turn does import
(``import typer, rich.console, sqlalchemy, pydantic`` with pydantic's models loaded):
``run_say_hi_lean_cpu_over_libraries`` (no target; what agentcli's own modules and the turn add).

Prints one figure per line: `name: value`.
"""

from __future__ import annotations

import compileall
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pexpect

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RUNS = int(os.environ.get("BENCH_RUNS", "15"))
# What a turn imports of the floor's libraries now that the store does without the ORM (module docstring).
LIBRARIES = [sys.executable, "-c", "import typer, rich.console, sqlalchemy, pydantic; pydantic.BaseModel"]


def agentcli() -> list[str]:
    exe = shutil.which("agentcli", path=str(Path(sys.executable).parent)) or shutil.which("agentcli")
    return [exe] if exe else [sys.executable, "-m", "agentcli"]


def timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def median_interleaved(commands: dict[str, list[str]], env: dict[str, str]) -> dict[str, float]:
    """Runs the commands round-robin so machine noise hits all of them alike."""
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for argv in commands.values():  # warm the page cache once
        timed(argv, env)
    for _ in range(RUNS):
        for name, argv in commands.items():
            samples[name].append(timed(argv, env))
    return {name: statistics.median(values) for name, values in samples.items()}


def timed_cpu(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> tuple[float, float]:
    """(wall, CPU) seconds of one child process, its own CPU only (user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def start_server(tmp: Path) -> tuple[subprocess.Popen[str], str]:
    script = tmp / "script.json"
    script.write_text(json.dumps({"responses": [], "fallback": {"type": "reply", "text": "Zebra says hi."}}))
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakellm", "--script", str(script)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def make_project(tmp: Path, base_url: str) -> Path:
    project = tmp / "project"
    (project / ".git").mkdir(parents=True, exist_ok=True)
    (project / "opencode.json").write_text(
        json.dumps(
            {
                "model": "local/test-model",
                "provider": {
                    "local": {
                        "npm": "@ai-sdk/openai-compatible",
                        "options": {"baseURL": base_url, "apiKey": "sk-test"},
                        "models": {"test-model": {"limit": {"context": 100000, "output": 8000}}},
                    }
                },
            }
        )
    )
    return project


def make_anthropic_project(tmp: Path, base_url: str) -> Path:
    """A project whose model is Anthropic's (OpenCode's anthropic provider, aimed at the server)."""
    project = tmp / "anthropic-project"
    (project / ".git").mkdir(parents=True, exist_ok=True)
    (project / "opencode.json").write_text(
        json.dumps(
            {
                "model": "anthropic/claude-sonnet-4-5",
                "provider": {"anthropic": {"options": {"baseURL": base_url, "apiKey": "sk-ant-test"}}},
            }
        )
    )
    return project


def turn_ratios(
    env: dict[str, str], project: Path, anthropic_project: Path, base: list[str], runs: int
) -> dict[str, float]:
    """Median wall and CPU of the floor and of `run "say hi"` on each path, interleaved."""
    say_hi = [*agentcli(), "run", "say hi"]
    commands = {
        "floor": (base, env, project),
        "libraries": (LIBRARIES, env, project),
        "run_lean": (say_hi, env, project),
        "run_litellm": (say_hi, {**env, "AGENTCLI_LLM_PATH": "litellm"}, project),
        "run_anthropic": (say_hi, env, anthropic_project),
    }
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for argv, cmd_env, cwd in commands.values():
        timed_cpu(argv, cmd_env, cwd)
    for _ in range(runs):
        for name, (argv, cmd_env, cwd) in commands.items():
            samples[name].append(timed_cpu(argv, cmd_env, cwd))
    out: dict[str, float] = {}
    for name, values in samples.items():
        out[f"{name}_wall"] = statistics.median(v[0] for v in values)
        out[f"{name}_cpu"] = statistics.median(v[1] for v in values)
    return out


def spawn_chat(args: list[str], env: dict[str, str], cwd: Path, timeout: int) -> pexpect.spawn:
    """``agentcli chat ARGS`` in a pseudo-terminal of 40x120."""
    import pexpect

    return pexpect.spawn(
        agentcli()[0],
        ["chat", *args],
        env={**env, "PROMPT_TOOLKIT_NO_CPR": "1"},
        cwd=str(cwd),
        encoding="utf-8",
        timeout=timeout,
        dimensions=(40, 120),
    )


def enter_to_first_char(env: dict[str, str], project: Path, typing: float = 0.0) -> float:
    """Seconds from Enter on the first REPL message to the first character of the streamed answer;
    ``typing``: seconds the user spends typing first (0: Enter at once)."""
    import pexpect

    child = spawn_chat([], env, project, timeout=120)
    child.expect("›")
    child.send("say hi")
    time.sleep(typing)
    start = time.perf_counter()
    child.send("\r")
    child.expect("Zebra")
    elapsed = time.perf_counter() - start
    child.expect("›")  # the turn is over and the prompt reads again
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    return elapsed


def first_turn_over_next(env: dict[str, str], project: Path) -> float:
    """Enter to the first character of the REPL's first answer over the same for the next two, the
    first sent once the REPL has gone idle (a user reading the screen): what the first turn still pays
    for that the next ones do not (litellm's first stream, rehearsed in the background: llm/warm.py)."""
    import pexpect

    from tests.idle import wait_until_idle

    child = spawn_chat([], env, project, timeout=120)
    child.expect("›")
    wait_until_idle(child.pid)
    times = []
    for line in ("say hi", "again", "once more"):
        child.send(line)
        start = time.perf_counter()
        child.send("\r")
        child.expect("Zebra")
        times.append(time.perf_counter() - start)
        child.expect("›")
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    return times[0] / statistics.mean(times[1:])


def imports_litellm(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> bool:
    proc = subprocess.run(
        argv, env={**env, "PYTHONPROFILEIMPORTTIME": "1"}, cwd=cwd, capture_output=True, text=True
    )
    return any(line.rstrip().endswith("litellm") for line in proc.stderr.splitlines())


def make_db(path: Path) -> None:
    from agentcli.store import ids
    from agentcli.store.records import StepFinishPart, TextPart, Tokens, UserMessage
    from agentcli.store.store import Store

    store = Store(path)
    for i in range(1000):
        session = store.create_session("/tmp/project", "openai/gpt-4o", title=f"session {i}")
        msg = UserMessage(id=ids.ascending("msg"), session_id=session.id)
        store.put_message(msg)
        store.put_part(
            TextPart(id=ids.ascending("prt"), session_id=session.id, message_id=msg.id, text="hello")
        )
        store.put_part(
            StepFinishPart(
                id=ids.ascending("prt"),
                session_id=session.id,
                message_id=msg.id,
                tokens=Tokens(total=100 + i, input=80, output=20),
                cost=0.001,
            )
        )
    store.close()


def chat_prompt_seconds(env: dict[str, str], cwd: Path) -> float:
    import pexpect

    start = time.perf_counter()
    child = spawn_chat(["--model", "openai/test-model"], env, cwd, timeout=30)
    child.expect("›")
    elapsed = time.perf_counter() - start
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    return elapsed


def main() -> None:
    # An installed package has its bytecode compiled; an editable checkout under
    # PYTHONDONTWRITEBYTECODE would otherwise recompile agentcli's modules on every run measured.
    compileall.compile_dir(str(ROOT / "agentcli"), quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        db = tmpdir / "bench.db"
        make_db(db)
        env = {
            **os.environ,
            "AGENTCLI_DB": str(db),
            "HOME": str(tmpdir),
            "XDG_CONFIG_HOME": str(tmpdir / "cfg"),
            "XDG_DATA_HOME": str(tmpdir / "data"),
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        }
        base = [sys.executable, "-c", "import typer, rich.console, sqlmodel"]
        commands = {
            "baseline": base,
            "version": [*agentcli(), "--version"],
            "help": [*agentcli(), "--help"],
            "sessions_list": [*agentcli(), "sessions", "list"],
        }
        medians = median_interleaved(commands, env)
        print(f"baseline_import_seconds: {medians['baseline']:.4f}")
        for name in ("version", "help", "sessions_list"):
            print(f"{name}_seconds: {medians[name]:.4f}")
            print(f"{name}_ratio: {medians[name] / medians['baseline']:.3f}")
        for name in ("version", "help", "sessions_list"):
            print(f"{name}_imports_litellm: {imports_litellm(commands[name], env)}")
        litellm_import = statistics.median(
            timed([sys.executable, "-c", "import litellm"], env) for _ in range(3)
        )
        print(f"litellm_import_seconds: {litellm_import:.4f}")
        prompt = statistics.median(chat_prompt_seconds(env, tmpdir) for _ in range(3))
        print(f"chat_prompt_seconds: {prompt:.4f}")
        print(f"chat_prompt_before_litellm: {prompt < litellm_import}")

        server, base_url = start_server(tmpdir)
        try:
            project = make_project(tmpdir, base_url)
            anthropic_project = make_anthropic_project(tmpdir, base_url)
            turn_env = {k: v for k, v in env.items() if k not in ("AGENTCLI_DB", "AGENTCLI_LLM_PATH")} | {
                "AGENTCLI_DB": str(tmpdir / "turns.db")
            }
            # Their configs name a provider URL, so the folders are trusted first, as a user would do.
            for folder in (project, anthropic_project):
                subprocess.run(
                    [*agentcli(), "trust", str(folder)], env=turn_env, check=True, stdout=subprocess.DEVNULL
                )
            turns = turn_ratios(turn_env, project, anthropic_project, base, max(3, RUNS // 3))
            print(f"floor_cpu_seconds: {turns['floor_cpu']:.4f}")
            anthropic_litellm = imports_litellm([*agentcli(), "run", "say hi"], turn_env, anthropic_project)
            print(f"run_say_hi_anthropic_imports_litellm: {anthropic_litellm}")
            for path in ("lean", "litellm", "anthropic"):
                print(f"run_say_hi_{path}_wall_seconds: {turns[f'run_{path}_wall']:.4f}")
                print(f"run_say_hi_{path}_cpu_seconds: {turns[f'run_{path}_cpu']:.4f}")
                print(f"run_say_hi_{path}_wall_ratio: {turns[f'run_{path}_wall'] / turns['floor_wall']:.2f}")
                print(f"run_say_hi_{path}_cpu_ratio: {turns[f'run_{path}_cpu'] / turns['floor_cpu']:.2f}")
            libraries = turns["run_lean_cpu"] / turns["libraries_cpu"]
            print(f"run_say_hi_lean_cpu_over_libraries: {libraries:.2f}")
            firsts: dict[str, float] = {}
            for path in ("lean", "litellm"):
                path_env = {**turn_env, "AGENTCLI_LLM_PATH": path}
                for typing in (0.0, 3.0):
                    first = statistics.median(
                        enter_to_first_char(path_env, project, typing) for _ in range(3)
                    )
                    print(f"chat_enter_to_first_char_{path}_after_{typing:.0f}s_typing_seconds: {first:.4f}")
                firsts[path] = statistics.median(first_turn_over_next(path_env, project) for _ in range(3))
                print(f"chat_first_turn_over_next_{path}: {firsts[path]:.2f}")
            print(f"chat_first_turn_litellm_over_lean: {firsts['litellm'] / firsts['lean']:.2f}")
        finally:
            server.kill()
            server.wait()


if __name__ == "__main__":
    main()
