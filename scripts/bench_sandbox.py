"""The sandbox's cost per bash call (tools/sandbox.py): the bash tool's own run of `true` confined
(Landlock, and a network namespace when the network is off) against the same run unconfined, measured
in one run, alternating so the machine's load falls on both alike. Target: at most 20 ms added.

Prints one figure per line: `name: value`.
"""

from __future__ import annotations

import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentcli.tools import sandbox  # noqa: E402
from agentcli.tools.bash import run_command  # noqa: E402

ROUNDS = 40


def main() -> None:
    why = sandbox.unavailable(False)
    if why is not None:
        print(f"sandbox: unavailable ({why})")
        return
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
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
                confine = sandbox.preexec_for(setting, project)  # what the bash tool does per call
                _, code, _ = run_command("true", project, 10, abort, None, confine)
                totals[name] += time.perf_counter() - started
                assert code == 0
    per = {name: total / ROUNDS * 1000 for name, total in totals.items()}
    for name, ms in per.items():
        print(f"bash_call_{name}_ms: {ms:.1f}")
    for name in ("confined_no_network", "confined_network"):
        print(f"sandbox_added_{name}_ms: {per[name] - per['unconfined']:.1f} (target <= 20)")


if __name__ == "__main__":
    main()
