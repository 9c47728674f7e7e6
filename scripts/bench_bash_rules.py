"""Bash permission overhead: parsing a command line into its simple commands (tree-sitter-bash) and
deciding it against a rule set, compared with the cheapest possible run of the command itself
(`bash -c true`). The check must be small next to the command: the ratio should stay below 0.05.

Prints one figure per line: `name: value`.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentcli.session.permission import PermissionPolicy  # noqa: E402
from agentcli.tools.base import PermissionRequest  # noqa: E402
from agentcli.tools.shell_commands import split_commands  # noqa: E402

LINES = [
    "git status --short && git diff --stat | tail -1",
    "find . -name '*.pyc' -exec rm {} + ; echo \"done $(date)\"",
    'for f in src/*.py; do python -m py_compile "$f" || exit 1; done',
    "bash -c 'cd build && make -j4 2>&1 | tee log.txt'",
]
RULES = {"bash": {"*": "ask", "git *": "allow", "echo *": "allow", "rm *": "deny", "make *": "allow"}}


def check(policy: PermissionPolicy, line: str) -> str:
    parsed = split_commands(line)
    return policy.action(
        PermissionRequest(tool="bash", title=line, patterns=parsed.commands, unsure=parsed.unsure)
    )


def main() -> None:
    policy = PermissionPolicy(rules=RULES)
    for line in LINES:
        check(policy, line)  # warm the parser
    rounds = 2000
    started = time.perf_counter()
    for _ in range(rounds):
        for line in LINES:
            check(policy, line)
    per_check = (time.perf_counter() - started) / (rounds * len(LINES))
    spawns = 20
    started = time.perf_counter()
    for _ in range(spawns):
        subprocess.run(["bash", "-c", "true"], check=True)
    per_spawn = (time.perf_counter() - started) / spawns
    print(f"bash_rule_check_us: {per_check * 1e6:.1f}")
    print(f"bash_spawn_us: {per_spawn * 1e6:.1f}")
    print(f"check_to_spawn_ratio: {per_check / per_spawn:.4f}")


if __name__ == "__main__":
    main()
