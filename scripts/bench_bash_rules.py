"""Bash permission overhead: parsing a command line into its simple commands (tree-sitter-bash), proving
what it runs (tools/shell_proof.py) and deciding it against a rule set, compared with the cheapest
possible run of the command itself (`bash -c true`). The check must be small next to the command: the
ratio should stay below 0.05.

``--baseline DIR`` also times the same check with the agentcli tree in DIR (a checkout of an older
commit, e.g. `git worktree add --detach /tmp/old main`) in the same run, and prints the ratio of this
tree's CPU time to that one's (target ≤ 2).

Prints one figure per line: `name: value`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, os.environ.get("AGENTCLI_TREE") or str(Path(__file__).resolve().parents[1]))

from agentcli.session.permission import PermissionPolicy  # noqa: E402
from agentcli.tools.shell_commands import bash_request  # noqa: E402

LINES = [
    "git status --short && git diff --stat | tail -1",
    "find . -name '*.pyc' -exec rm {} + ; echo \"done $(date)\"",
    'for f in src/*.py; do python -m py_compile "$f" || exit 1; done',
    "bash -c 'cd build && make -j4 2>&1 | tee log.txt'",
]
RULES = {"bash": {"*": "ask", "git *": "allow", "echo *": "allow", "rm *": "deny", "make *": "allow"}}
ROUNDS = 2000


def per_check_cpu() -> float:
    """CPU seconds per line checked (process time: other processes on the machine do not count)."""
    policy = PermissionPolicy(rules=RULES)
    for line in LINES:
        policy.action(bash_request(line))  # warm the parser
    started = time.process_time()
    for _ in range(ROUNDS):
        for line in LINES:
            policy.action(bash_request(line))
    return (time.process_time() - started) / (ROUNDS * len(LINES))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", type=Path, help="an older agentcli tree to compare with")
    parser.add_argument("--check-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.check_only:
        print(per_check_cpu())
        return
    baseline = None
    if args.baseline:
        env = {**os.environ, "AGENTCLI_TREE": str(args.baseline.resolve())}
        run = subprocess.run(
            [sys.executable, __file__, "--check-only"], env=env, capture_output=True, text=True
        )
        baseline = float(run.stdout.strip())
    per_check = per_check_cpu()
    spawns = 20
    started = time.perf_counter()
    for _ in range(spawns):
        subprocess.run(["bash", "-c", "true"], check=True)
    per_spawn = (time.perf_counter() - started) / spawns
    print(f"bash_rule_check_us: {per_check * 1e6:.1f}")
    print(f"bash_spawn_us: {per_spawn * 1e6:.1f}")
    print(f"check_to_spawn_ratio: {per_check / per_spawn:.4f} (target < 0.05)")
    if baseline is not None:
        print(f"baseline_check_us: {baseline * 1e6:.1f}")
        print(f"check_to_baseline_ratio: {per_check / baseline:.2f} (target <= 2)")


if __name__ == "__main__":
    main()
