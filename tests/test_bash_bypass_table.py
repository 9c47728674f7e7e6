"""A user's bash deny rule holds against every way of spelling the command that bash accepts.

Each row deletes folder X in its own way. Under ``"*": "allow", "rm *": "deny"`` each must be denied,
or, where the command cannot be known before it runs (a name from a variable or a substitution),
asked — never allowed. The last table is lines that must stay allowed, so the rules are not simply
"ask everything".
"""

from __future__ import annotations

import re

import pytest

from agentcli.session.permission import PermissionPolicy
from agentcli.tools.base import PermissionRequest
from agentcli.tools.shell_commands import bash_request
from tests.fakellm import FakeLLM, Reply, ToolCall
from tests.workspace import Workspace, tool_statuses

RULES = {"bash": {"*": "allow", "rm *": "deny"}}

DENIED = [
    # lists, pipelines, compound commands, functions
    "rm -rf X",
    "true && rm -rf X",
    "ls; rm -rf X",
    "false || rm -rf X",
    "rm -rf X &",
    "! rm -rf X",
    "echo hi | rm -rf X",
    "(rm -rf X)",
    "{ rm -rf X; }",
    "if true; then rm -rf X; fi",
    "while true; do rm -rf X; break; done",
    "for i in 1; do rm -rf X; done",
    "case a in a) rm -rf X;; esac",
    "f(){ rm -rf X; }; f",
    "function f { rm -rf X; }; f",
    # substitutions anywhere
    "echo $(rm -rf X)",
    "echo `rm -rf X`",
    'echo "$(rm -rf X)"',
    "cat <(rm -rf X)",
    "echo hi > >(rm -rf X)",
    "Y=$(rm -rf X) true",
    "export Y=$(rm -rf X)",
    "[[ -n $(rm -rf X) ]]",
    "echo $(( $(rm -rf X) + 1 ))",
    # redirections, assignments, spacing
    "rm -rf X 2>/dev/null",
    ">/dev/null rm -rf X",
    "FOO=1 rm -rf X",
    "rm\t-rf   X",
    # quoting and escapes, as bash removes them
    "$'rm' -rf X",
    "$'\\x72\\x6d' -rf X",
    "$'\\162\\155' -rf X",
    "$'\\u0072m' -rf X",
    '$"rm" -rf X',
    "r\\\nm -rf X",
    "rm \\\n -rf X",
    "\\rm -rf X",
    "r\\m -rf X",
    '"r"m -rf X',
    "'r'm -rf X",
    "r''m -rf X",
    'r""m -rf X',
    '"rm" -rf X',
    # brace and glob expansion of the command name, paths of the command
    "r{m,} -rf X",
    "r{m,n} -rf X",
    "{r,x}m -rf X",
    "/bin/rm -rf X",
    "/usr/bin/rm -rf X",
    "{rm,-rf,X}",
    "/usr/bin/r[m] -rf X",
    "/bin/r? -rf X",
    "r[m] -rf X",
    "./rm -rf X",
    # shells running a string, with any options
    "bash -c 'rm -rf X'",
    "bash -c -- 'rm -rf X'",
    "bash -o errexit -c 'rm -rf X'",
    "bash -ec 'rm -rf X'",
    "bash -O extglob -c 'rm -rf X'",
    "bash +o history -c 'rm -rf X'",
    "bash --norc -c 'rm -rf X'",
    "bash -c 'rm -rf \"$1\"' _ X",
    "sh -c 'rm -rf X'",
    "zsh -c 'rm -rf X'",
    "dash -c 'rm -rf X'",
    "/bin/sh -c 'rm -rf X'",
    "bash -c \"bash -c 'rm -rf X'\"",
    # shells reading a script given right here
    "bash <<< 'rm -rf X'",
    "bash -s <<< 'rm -rf X'",
    "sh <<EOF\nrm -rf X\nEOF",
    "source /dev/stdin <<< 'rm -rf X'",
    # builtins that run their arguments
    "eval 'rm -rf X'",
    "eval rm -rf X",
    'eval "r""m -rf X"',
    "trap 'rm -rf X' EXIT",
    "trap -- 'rm -rf X' EXIT",
    "exec rm -rf X",
    "exec -a x rm -rf X",
    "exec -c rm -rf X",
    "coproc rm -rf X",
    "coproc N { rm -rf X; }",
    "alias x=rm; x -rf X",
    "alias x='rm -rf X'; x",
    "hash -p /bin/rm x; x -rf X",
    "command rm -rf X",
    "command -p rm -rf X",
    "builtin eval 'rm -rf X'",
    # env
    "env rm -rf X",
    "env -i rm -rf X",
    "env -u HOME rm -rf X",
    "env FOO=1 rm -rf X",
    "env -- rm -rf X",
    "env -S 'rm -rf X'",
    "env --split-string='rm -rf X'",
    # command-running wrappers
    "sudo rm -rf X",
    "sudo -u root -- rm -rf X",
    "doas rm -rf X",
    "nice rm -rf X",
    "nice -n 5 rm -rf X",
    "nohup rm -rf X",
    "timeout 5 rm -rf X",
    "timeout -s KILL 5s rm -rf X",
    "time rm -rf X",
    "time -p rm -rf X",
    "stdbuf -oL rm -rf X",
    "ionice -c 3 rm -rf X",
    "chrt -i 0 rm -rf X",
    "setsid rm -rf X",
    "taskset 0x1 rm -rf X",
    "taskset -c 0 rm -rf X",
    "flock .lock rm -rf X",
    "flock .lock -c 'rm -rf X'",
    "watch rm -rf X",
    "watch -n 1 'rm -rf X'",
    "parallel rm -rf ::: X",
    "parallel 'rm -rf {}' ::: X",
    "parallel ::: 'rm -rf X'",
    "busybox rm -rf X",
    "busybox sh -c 'rm -rf X'",
    "unbuffer rm -rf X",
    "su -c 'rm -rf X'",
    "script -qc 'rm -rf X' /dev/null",
    "strace -f -o /dev/null rm -rf X",
    "sudo nice -n 5 timeout 10 rm -rf X",
    "nohup bash -c 'rm -rf X' &",
    # xargs and find
    "echo X | xargs rm -rf",
    "echo X | xargs -I{} rm -rf {}",
    "echo X | xargs -0 -n1 rm -rf",
    "find X -delete",
    "find X -exec rm -rf {} +",
    "find X -execdir rm -rf {} \\;",
    "find X -exec sh -c 'rm -rf \"$1\"' _ {} \\;",
]

# The command is only known when the line runs: the rules cannot decide, so the user is asked.
ASKED = [
    "C=rm; $C -rf X",
    "C=rm; ${C} -rf X",
    'C=rm; "$C" -rf X',
    "${C:-rm} -rf X",
    "$(echo rm) -rf X",
    "`echo rm` -rf X",
    '"$(printf rm)" -rf X',
    "rm${IFS}-rf${IFS}X",
    "source <(echo rm -rf X)",
    ". <(echo rm -rf X)",
    "bash <(echo rm -rf X)",
    "echo 'rm -rf X' | bash",
    "echo 'rm -rf X' | sh -s",
    "C='rm -rf X'; eval \"$C\"",
    "C='rm -rf X'; bash -c \"$C\"",
    "C='rm -rf X'; env -S \"$C\"",
    'C=rm; exec "$C" -rf X',
    "C=rm; sudo $C -rf X",
    "echo rm | xargs -I{} {} -rf X",
    "echo 'rm -rf X' | xargs -I{} sh -c {}",
    "echo 'rm -rf X' | xargs sh -c",
    "echo 'rm -rf X' | parallel",
    # a file's commands, a later signal's, an alias's: none is in the line's words
    "source .venv/bin/activate && pytest",
    "alias ll='ls -la'",
    "trap 'echo bye' EXIT",
    # a variable not known to be inert, given to a program: it may load code (LD_PRELOAD, *_OPTIONS, …)
    "env FOO=1 make test",
]

# Must stay allowed: the rules still let ordinary work through.
ALLOWED = [
    "git status --short",
    "echo rm -rf X",
    "ls -la | grep rm",
    "bash -c 'echo hi'",
    "find . -name '*.py' -print",
    "echo {a,b}.txt",
    "ls *.py",
    "[ -f README.md ] && echo yes",
    "env CI=1 make test",
    "timeout 5 make test",
    "xargs echo < list.txt",
    'for f in *.py; do echo "$f"; done',
    "python -m pytest -q",
    "cd src && make -j4",
    "docker run \\\n  --rm alpine true",
    "git commit -m 'rm old files'",
    "nohup make &",
    'grep -r "rm -rf" .',
    "echo $'a\\tb'",
    "printf '%s\\n' \"$(date)\"",
    "find . -exec grep -l foo {} +",
    "ls | xargs -I{} echo {}",
    "command -v rm >/dev/null || echo no rm",
]


def _victim(command: str, folder: str = "victim") -> str:
    return re.sub(r"\bX\b", folder, command)


def _request(command: str) -> PermissionRequest:
    return bash_request(command)


def test_the_table_holds_at_least_a_hundred_bypass_forms() -> None:
    assert len(DENIED) + len(ASKED) >= 100
    assert len(set(DENIED + ASKED)) == len(DENIED) + len(ASKED)


@pytest.mark.parametrize("command", DENIED)
def test_a_denied_command_stays_denied_however_it_is_spelled(command: str) -> None:
    request = _request(_victim(command))
    assert PermissionPolicy(rules=RULES).action(request) == "deny", request.patterns
    assert PermissionPolicy(rules=RULES, yes=True).decide(request) == "deny"  # --yes never lifts a deny


@pytest.mark.parametrize("command", ASKED)
def test_a_command_known_only_at_run_time_is_asked_never_allowed(command: str) -> None:
    request = _request(_victim(command))
    assert PermissionPolicy(rules=RULES).action(request) == "ask", (request.patterns, request.unsure)


@pytest.mark.parametrize("command", ALLOWED)
def test_ordinary_lines_stay_allowed(command: str) -> None:
    request = _request(_victim(command))
    assert PermissionPolicy(rules=RULES).action(request) == "allow", (request.patterns, request.unsure)


def test_the_bypass_table_through_the_real_cli_leaves_every_folder(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """Nobody can be asked in `agentcli run` without --yes: what is denied or asked is refused, the
    folders survive, and the one allowed command still runs."""
    workspace.write_config({"permission": RULES})
    forms = DENIED + ASKED
    folders = []
    calls = []
    for i, command in enumerate(forms):
        folder = workspace.project / f"victim{i}"
        (folder / "sub").mkdir(parents=True)
        (folder / "sub" / "keep.txt").write_text("precious")
        folders.append(folder)
        calls.append(ToolCall("bash", {"command": _victim(command, folder.name), "description": "rm"}))
    calls.append(ToolCall("bash", {"command": "echo allowed-ran > proof.txt", "description": "allowed"}))
    fake_llm.push(Reply(tool_calls=calls), Reply(text="done"))

    proc = workspace.run("run", "clean up")
    assert proc.returncode == 3, proc.stderr  # refusals happened: each told on stderr
    assert folders
    for folder in folders:
        assert (folder / "sub" / "keep.txt").read_text() == "precious", folder
    assert (workspace.project / "proof.txt").read_text() == "allowed-ran\n"
    assert tool_statuses(workspace) == ["error"] * len(forms) + ["completed"]
