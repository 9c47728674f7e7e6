"""Startup benchmark: wall time of `agentcli --version`, `--help` and `sessions list` (on a database
of 1,000 sessions), each as a ratio to `python -c "import typer, rich.console, sqlmodel"` measured in
the same run (target: at most 1.3x); whether litellm was imported (it must not be); and the time
`agentcli chat` takes to show its prompt against the time `import litellm` takes.

Prints one figure per line: `name: value`.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RUNS = int(os.environ.get("BENCH_RUNS", "15"))


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


def imports_litellm(argv: list[str], env: dict[str, str]) -> bool:
    proc = subprocess.run(argv, env={**env, "PYTHONPROFILEIMPORTTIME": "1"}, capture_output=True, text=True)
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
        store.put_part(TextPart(id=ids.ascending("prt"), session_id=session.id, message_id=msg.id, text="hello"))
        store.put_part(StepFinishPart(id=ids.ascending("prt"), session_id=session.id, message_id=msg.id,
                                      tokens=Tokens(total=100 + i, input=80, output=20), cost=0.001))
    store.close()


def chat_prompt_seconds(env: dict[str, str], cwd: Path) -> float:
    import pexpect

    start = time.perf_counter()
    child = pexpect.spawn(agentcli()[0], ["chat", "--model", "openai/test-model"], env={**env, "PROMPT_TOOLKIT_NO_CPR": "1"}, cwd=str(cwd),
                          encoding="utf-8", timeout=30, dimensions=(40, 120))
    child.expect("›")
    elapsed = time.perf_counter() - start
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    return elapsed


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        db = tmpdir / "bench.db"
        make_db(db)
        env = {**os.environ, "AGENTCLI_DB": str(db), "HOME": str(tmpdir), "XDG_CONFIG_HOME": str(tmpdir / "cfg"),
               "XDG_DATA_HOME": str(tmpdir / "data"), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
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


if __name__ == "__main__":
    main()
