"""A program's words are data only when its argument grammar is known to run nothing in them
(tools/shell_programs.py, shell_grammars.py): wrappers, interpreters, tools whose options execute, a
variable not known to be inert, and a program nobody listed are asked (refused under --yes where a deny
rule could be behind them), on tuned forms and on forms held out of the tuning (tests/bash_forms_exec.py),
while the everyday lines stay allowed."""

from __future__ import annotations

import re

import pytest

from agentcli.session.permission import PermissionPolicy
from agentcli.tools.shell_commands import bash_request
from tests.bash_forms import RULES
from tests.bash_forms_exec import ASKED_BY_DESIGN, EVERYDAY, EVERYDAY_MORE, HELD_OUT, TUNED
from tests.fakellm import FakeLLM, Reply, ToolCall
from tests.workspace import Workspace, tool_statuses

# Held-out forms the construction does not catch (measured once, after the code was written, 107/109):
# PowerShell's Remove-Item is a deletion no rule names. The other miss then, strace's -o '|cmd', was read
# and closed by class (a file value that opens a pipe), so that form no longer counts as held out.
KNOWN_MISSES = {
    "pwsh -Command 'Remove-Item -Recurse X'",
}


def _victim(form: str, folder: str = "victim") -> str:
    return re.sub(r"\bX\b", folder, form)


def _leaks(forms: list[str]) -> list[str]:
    """The forms the rules would let run: allowed, or answered by --yes."""
    out = []
    for form in forms:
        request = bash_request(_victim(form))
        if (
            PermissionPolicy(rules=RULES).action(request) == "allow"
            or PermissionPolicy(rules=RULES, yes=True).decide(request) != "deny"
        ):
            out.append(form)
    return out


@pytest.mark.parametrize("kind", sorted(TUNED))
def test_each_class_of_program_running_code_is_asked_and_refused_under_yes(kind: str) -> None:
    assert _leaks(TUNED[kind]) == []


@pytest.mark.parametrize("kind", sorted(HELD_OUT))
def test_each_class_holds_on_forms_held_out_of_the_tuning(kind: str) -> None:
    assert set(_leaks(HELD_OUT[kind])) == KNOWN_MISSES & set(HELD_OUT[kind])


def test_the_held_out_forms_are_apart_and_outnumber_the_tuned() -> None:
    tuned = {f for forms in TUNED.values() for f in forms}
    held = [f for forms in HELD_OUT.values() for f in forms]
    assert set(TUNED) == set(HELD_OUT) and not tuned & set(held) and len(held) + len(tuned) >= 100


@pytest.mark.parametrize("line", [*[x for x in EVERYDAY if x not in ASKED_BY_DESIGN], *EVERYDAY_MORE])
def test_everyday_lines_are_not_asked_for_any_rule_s_sake(line: str) -> None:
    request = bash_request(line)
    policy = PermissionPolicy(rules=RULES)
    named = {policy.subject_action("bash", s) for s in request.patterns}
    assert policy.action(request) == max(named, key=["allow", "ask", "deny"].index), (
        request.unsure,
        request.maybe,
    )


@pytest.mark.parametrize(
    "line",
    [
        "tar --frobnicate -cf a.tar .",
        "sort --new-option x",
        "sed -Q s/a/b/ f",
        "timeout --new 5 make",
        "python3 -Z x.py",
    ],
)
def test_an_option_a_known_grammar_does_not_know_is_asked(line: str) -> None:
    request = bash_request(line)
    assert any("option the rules do not know" in u for u in request.unsure), request.unsure
    assert PermissionPolicy(rules={"bash": "allow"}).action(request) == "ask"


def test_what_an_option_runs_is_judged_by_the_rules_of_that_command() -> None:
    policy = PermissionPolicy(rules=RULES)
    assert policy.action(bash_request("tar -I zstd -cf a.tar.zst src")) == "allow"  # zstd: allowed
    assert policy.action(bash_request("tar -I 'rm -rf victim' -cf a.tar src")) == "deny"
    assert policy.action(bash_request("rsync -e 'ssh -p 2222' -a src/ h:dst/")) == "allow"
    assert policy.action(bash_request("ssh build-host git push origin")) == "deny"  # git push, remotely
    assert policy.action(bash_request("ssh -o ConnectTimeout=5 build-host uptime")) == "allow"


@pytest.mark.parametrize(
    "line",
    [
        "ltrace -o '|rm -rf victim' true",
        "strace -f -o'!rm -rf victim' ls",
        "sudo -p '|rm -rf victim' ls",
        "tar -cf '|rm -rf victim' src",
        "nice -n 5 strace -o '| rm -rf victim' make",
    ],
)
def test_a_file_value_that_opens_a_pipe_is_judged_as_the_command_it_runs(line: str) -> None:
    assert PermissionPolicy(rules=RULES).action(bash_request(line)) == "deny"
    assert PermissionPolicy(rules=RULES, yes=True).decide(bash_request(line)) == "deny"


def test_file_values_that_open_no_pipe_stay_data() -> None:
    policy = PermissionPolicy(rules=RULES)
    for line in (
        "strace -f -o trace.txt ls",
        "ltrace -o out.log true",
        "tar -cf out.tar src",
        "sudo -p 'pw?' ls",
    ):
        assert policy.action(bash_request(line)) == "allow", line


def test_variables_are_proven_only_when_known_inert() -> None:
    allowed = {"bash": {"*": "allow"}}
    for line in (
        "CI=1 npm test",
        "LC_ALL=C sort names.txt",
        "x=1; echo $x",
        "for f in a b; do echo $f; done",
    ):
        assert PermissionPolicy(rules=allowed).action(bash_request(line)) == "allow", line
    for line in ("MY_TOOL_HOOK=./x make", "export npm_config_script_shell=./x", "OUT=build; make", "set -a"):
        assert PermissionPolicy(rules=allowed).action(bash_request(line)) == "ask", line


def test_a_program_nobody_listed_may_run_its_arguments() -> None:
    policy = PermissionPolicy(rules=RULES)
    assert policy.action(bash_request("cargo test --release")) == "allow"
    assert policy.action(bash_request("pytest -k 'parse and not slow'")) == "allow"
    assert policy.action(bash_request("retry -n 3 rm -rf victim")) == "ask"  # it may run rm
    assert policy.action(bash_request("tool --run 'print(1)'")) == "ask"  # code it may run
    # What it may run concerns only rules that name a command: "*": "ask" with "make *" allowed allows it.
    named_only = {"bash": {"*": "ask", "make *": "allow", "rm *": "deny"}}
    assert PermissionPolicy(rules=named_only).action(bash_request("make test")) == "allow"


def test_a_variable_s_written_values_are_known_its_others_are_not() -> None:
    policy = PermissionPolicy(rules=RULES)
    assert policy.action(bash_request('for f in src/*.py; do mypy "$f"; done')) == "allow"
    assert policy.action(bash_request('x=fmt; tool "$x"')) == "allow"
    assert policy.action(bash_request('x=rm; tool "$x" -rf victim')) == "ask"
    assert policy.action(bash_request('read x; tool "$x"')) == "ask"
    assert policy.action(bash_request('tool "$(cat cmd.txt)"')) == "ask"
    assert policy.action(bash_request("echo 'rm -rf victim' | xargs mywrap")) == "ask"  # words added then
    assert policy.action(bash_request("ls | xargs -n1 echo")) == "allow"  # echo's words are data


def test_git_settings_that_run_code_are_asked_wherever_they_are_set() -> None:
    policy = PermissionPolicy(rules={"bash": {"*": "allow"}})
    for line in (
        "git clone -c core.fsmonitor=./x url",
        "git config core.pager less",
        "git config alias.x '!x'",
    ):
        assert policy.action(bash_request(line)) == "ask", line
    for line in (
        "git clone --config=user.name=me url",
        "git config user.email me@x",
        "git config --get core.pager",
        'git commit -am "fix: handle (x) case"',  # a message is text, in a cluster too
    ):
        assert policy.action(bash_request(line)) == "allow", line


def test_yes_refuses_the_new_classes_through_the_real_cli(workspace: Workspace, fake_llm: FakeLLM) -> None:
    """`agentcli run --yes`: a form of each class is refused, naming the deny rule; the folder survives."""
    workspace.write_config({"permission": RULES})
    forms = [TUNED[k][0] for k in sorted(TUNED)] + [HELD_OUT[k][1] for k in sorted(HELD_OUT)]
    folder = workspace.project / "victim"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "keep.txt").write_text("precious")
    calls = [
        ToolCall("bash", {"command": f"{_victim(f)}; echo ran >> ran.txt", "description": "x"}) for f in forms
    ]
    calls.append(ToolCall("bash", {"command": "echo allowed >> ran.txt", "description": "allowed"}))
    fake_llm.push(Reply(tool_calls=calls), Reply(text="done"))

    proc = workspace.run("run", "--yes", "clean up")
    assert (folder / "sub" / "keep.txt").read_text() == "precious"
    assert (workspace.project / "ran.txt").read_text() == "allowed\n"
    assert 'denies "rm *"' in proc.stderr
    assert tool_statuses(workspace) == ["error"] * len(forms) + ["completed"]
