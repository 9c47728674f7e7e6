"""How the bash permission analysis does on the corpora of forms by class (tests/bash_forms.py,
tests/bash_forms_exec.py): of the forms that must be asked, how many would run (allowed, or answered
by --yes) under the issue's rules, per corpus part; and how many everyday lines are asked for no rule's
sake (a false ask: every command they name is allowed, yet the line is asked).

``--baseline DIR`` prints the same figures for the agentcli tree in DIR (a checkout of an older commit)
first, so the two can be compared in one run. Targets: 0 forms run, 0 false asks on EVERYDAY.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, os.environ.get("AGENTCLI_TREE") or str(HERE))
sys.path.insert(1, str(HERE))  # the corpora come from this tree, whichever agentcli is measured

from agentcli.session.permission import PermissionPolicy, strictest  # noqa: E402
from agentcli.tools.shell_commands import bash_request  # noqa: E402
from tests import bash_forms, bash_forms_exec  # noqa: E402

RULES = bash_forms.RULES


def _ran(forms: list[str]) -> list[str]:
    out = []
    for form in forms:
        request = bash_request(re.sub(r"\bX\b", "victim", form))
        if (
            PermissionPolicy(rules=RULES).action(request) == "allow"
            or PermissionPolicy(rules=RULES, yes=True).decide(request) != "deny"
        ):
            out.append(form)
    return out


def _false_asks(lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        request = bash_request(line)
        policy = PermissionPolicy(rules=RULES)
        by_rules = strictest([policy.subject_action("bash", s) for s in request.patterns or [line]])
        if by_rules == "allow" and policy.action(request) != "allow":
            out.append(line)
    return out


def _flat(table: dict[str, list[str]]) -> list[str]:
    return [f for forms in table.values() for f in forms]


def figures(verbose: bool) -> None:
    parts = {
        "first_tuning": _flat(bash_forms.TUNING),
        "first_held_out": _flat(bash_forms.HELD_OUT),
        "exec_tuned": _flat(bash_forms_exec.TUNED),
        "exec_held_out": _flat(bash_forms_exec.HELD_OUT),
    }
    for name, forms in parts.items():
        ran = _ran(forms)
        print(f"{name}_caught: {len(forms) - len(ran)}/{len(forms)} (target: all)")
        if verbose:
            for form in ran:
                print(f"  ran: {form}")
    for name, lines in (
        ("everyday", bash_forms_exec.EVERYDAY),
        ("everyday_more", bash_forms_exec.EVERYDAY_MORE),
    ):
        asked = _false_asks(lines)
        print(f"{name}_false_asks: {len(asked)}/{len(lines)} (target: 0)")
        if verbose:
            for line in asked:
                print(f"  asked: {line}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", type=Path, help="an older agentcli tree to compare with")
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="name the forms that ran, the lines asked"
    )
    args = parser.parse_args()
    if args.baseline:
        env = {**os.environ, "AGENTCLI_TREE": str(args.baseline.resolve())}
        extra = ["-v"] if args.verbose else []
        run = subprocess.run([sys.executable, __file__, *extra], env=env, capture_output=True, text=True)
        print("baseline:")
        print(run.stdout + run.stderr, end="")
        print("this tree:")
    figures(args.verbose)


if __name__ == "__main__":
    main()
