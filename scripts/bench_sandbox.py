"""The sandbox's cost per bash call (tools/sandbox.py): the bash tool's own run of `true` confined
(Landlock, and a network namespace when the network is off) against the same run unconfined, measured
in one run, alternating so the machine's load falls on both alike, in a process the size of agentcli's
(the CLI and the session loop imported). The launcher's one-time start is timed apart. Target: at
most 20 ms added per call.

Prints one figure per line: `name: value`.
"""

from __future__ import annotations

import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import agentcli.cli.main  # noqa: E402, F401  - the real process's size: a fork's cost grows with it
import agentcli.session.loop  # noqa: E402, F401
from agentcli.tools import sandbox  # noqa: E402
from agentcli.tools.bash import run_command  # noqa: E402

ROUNDS = 40


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
        started = time.perf_counter()
        try:
            sandbox.spawner(sandbox.Sandboxing(required=True), project)
        except sandbox.CannotConfine as exc:
            print(f"sandbox: unavailable ({exc})")
            return
        print(f"launcher_start_once_ms: {(time.perf_counter() - started) * 1000:.1f}")
        sandbox.spawner(sandbox.Sandboxing(required=True, network=True), project)
        variants = {
            "unconfined": None,
            "confined_no_network": sandbox.Sandboxing(required=True, network=False),
            "confined_network": sandbox.Sandboxing(required=True, network=True),
        }
        totals = dict.fromkeys(variants, 0.0)
        abort = threading.Event()
        for _ in range(ROUNDS):
            for name, setting in variants.items():
                started = time.perf_counter()
                confined = sandbox.spawner(setting, project)  # what the bash tool does per call
                _, code, _ = run_command("true", project, 10, abort, None, confined)
                totals[name] += time.perf_counter() - started
                assert code == 0
    per = {name: total / ROUNDS * 1000 for name, total in totals.items()}
    for name, ms in per.items():
        print(f"bash_call_{name}_ms: {ms:.1f}")
    for name in ("confined_no_network", "confined_network"):
        print(f"sandbox_added_{name}_ms: {per[name] - per['unconfined']:.1f} (target <= 20)")


if __name__ == "__main__":
    main()
