"""An allow rule allows a bash line only when the analysis proves what it runs (tools/shell_proof.py):
each class of way bash runs code its words do not show is asked, and refused under --yes where a
deny rule could be behind it — for the forms the analysis was written against (TUNING) and for
forms written apart from it (HELD_OUT, tests/bash_forms.py)."""

from __future__ import annotations

import json
import re

import pytest

from agentcli.session.permission import PermissionPolicy
from agentcli.tools.shell_commands import bash_request
from tests.bash_forms import HELD_OUT, RULES, TUNING
from tests.fakellm import FakeLLM, Reply, ToolCall
from tests.terminal import PROMPT, leave, spawn
from tests.workspace import Workspace, tool_statuses


def _victim(form: str, folder: str = "victim") -> str:
    return re.sub(r"\bX\b", folder, form)


def _leaks(forms: list[str]) -> list[str]:
    """The forms the rules would let run: allowed, or answered by --yes."""
    out = []
    for form in forms:
        request = bash_request(_victim(form))
        asked = PermissionPolicy(rules=RULES).action(request)
        under_yes = PermissionPolicy(rules=RULES, yes=True)
        if asked == "allow" or under_yes.decide(request) != "deny":
            out.append(form)
    return out


@pytest.mark.parametrize("kind", sorted(TUNING))
def test_each_class_is_asked_and_refused_under_yes(kind: str) -> None:
    assert _leaks(TUNING[kind]) == []


@pytest.mark.parametrize("kind", sorted(HELD_OUT))
def test_each_class_holds_on_forms_held_out_of_the_tuning(kind: str) -> None:
    assert _leaks(HELD_OUT[kind]) == []


def test_the_held_out_forms_are_apart_from_the_tuning_ones() -> None:
    tuning = {f for forms in TUNING.values() for f in forms}
    held = [f for forms in HELD_OUT.values() for f in forms]
    assert set(TUNING) == set(HELD_OUT) and not tuning & set(held) and len(held) >= 2 * len(tuning)


def test_the_refusal_names_the_deny_rule_and_how_to_allow_the_exact_line() -> None:
    line = "x='a[$(true)]'; ((x))"
    policy = PermissionPolicy(rules=RULES, yes=True)
    request = bash_request(line)
    assert policy.decide(request) == "deny"
    hint = policy.hint(request)
    assert "refused under --yes" in hint and '"rm *"' in hint and "arithmetic" in hint
    assert '"permission": {"bash": {"x=\'a[$(true)]\'; ((x))": "allow"}}' in hint
    # The user's allow for that exact line is their word for it: it runs, and nothing else does.
    vouched = {"bash": {**RULES["bash"], line: "allow"}}
    assert PermissionPolicy(rules=vouched, floor=vouched, yes=True).decide(request) == "once"
    assert PermissionPolicy(rules=vouched, yes=True).decide(bash_request("((y))")) == "deny"
    # A project's rule cannot vouch over the user's deny rules.
    assert PermissionPolicy(rules=vouched, floor=RULES, yes=True).decide(request) == "deny"


def test_yes_still_answers_what_no_deny_rule_could_be_behind() -> None:
    plain = {"bash": {"*": "allow", "curl *": "ask"}}
    assert PermissionPolicy(rules=plain, yes=True).decide(bash_request("((x))")) == "once"
    assert PermissionPolicy(rules=RULES, yes=True).decide(bash_request("curl -s example.invalid")) == "once"


def test_a_command_with_words_known_at_run_time_is_asked_only_where_a_rule_names_it() -> None:
    policy = PermissionPolicy(rules=RULES)
    assert policy.action(bash_request('for f in *.py; do echo "$f"; done')) == "allow"
    assert policy.action(bash_request("ls | xargs -I{} echo {}")) == "allow"
    assert policy.action(bash_request("git $SUB origin")) == "ask"  # could be git push
    assert policy.action(bash_request("git log --oneline")) == "allow"
    assert policy.action(bash_request('git commit -m "$(cat msg)"')) == "allow"  # the known words say commit
    assert policy.action(bash_request("git -C sub --no-pager diff")) == "allow"  # normalised, not a push
    assert policy.action(bash_request("git -C sub push")) == "deny"


@pytest.mark.parametrize(
    "line",
    [
        "echo ${HOME} ${#x} ${x:-none} ${x%%.py} ${a[0]} ${a[@]}",
        "[[ -n $x && $x == *.py ]]",
        "[ $# -eq 1 ]",
        "files=(*.py); echo ${files[0]}",
    ],
)
def test_expansions_that_only_substitute_a_value_are_proven(line: str) -> None:
    request = bash_request(line)
    assert request.unsure == [] and PermissionPolicy(rules=RULES).action(request) == "allow"


def test_yes_refuses_through_the_real_cli_and_nothing_runs(workspace: Workspace, fake_llm: FakeLLM) -> None:
    """`agentcli run --yes` with the scripted model calling bash: each doubted line is refused, the
    human is told which rule and how to allow the line, and the folder survives."""
    workspace.write_config({"permission": RULES})
    forms = [TUNING[k][0] for k in sorted(TUNING)] + [HELD_OUT[k][0] for k in sorted(HELD_OUT)]
    folder = workspace.project / "victim"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "keep.txt").write_text("precious")
    proof = workspace.project / "ran.txt"
    calls = [
        ToolCall("bash", {"command": f"{_victim(f)}; echo ran >> ran.txt", "description": "x"}) for f in forms
    ]
    calls.append(ToolCall("bash", {"command": "echo allowed >> ran.txt", "description": "allowed"}))
    fake_llm.push(Reply(tool_calls=calls), Reply(text="done"))

    proc = workspace.run("run", "--yes", "clean up")
    assert (folder / "sub" / "keep.txt").read_text() == "precious"
    assert proof.read_text() == "allowed\n"  # none of the refused lines ran a single command
    assert 'denies "rm *"' in proc.stderr and "allow this exact line" in proc.stderr
    assert tool_statuses(workspace) == ["error"] * len(forms) + ["completed"]


def test_bang_in_the_chat_takes_the_same_path(workspace: Workspace, fake_llm: FakeLLM) -> None:
    """`!cmd` under --yes: a doubted line with a deny rule behind it is asked, not answered by --yes."""
    workspace.write_config({"permission": RULES})
    folder = workspace.project / "D"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "keep.txt").write_text("keep me")
    child = spawn(workspace, "--yes")
    child.send("!x='a[$(rm -rf D)]'; ((x))\r")
    child.expect("arithmetic")
    child.expect("allow\\?")
    child.send("d")
    child.expect("not run")
    child.expect(PROMPT)
    child.send("!C=rm; ${C} -rf D\r")
    child.expect("allow\\?")
    child.send("d")
    child.expect("not run")
    child.expect(PROMPT)
    child.send('!echo "bang-$((1+1))-ran"\r')  # arithmetic: asked, even where it is harmless
    child.expect("allow\\?")
    child.send("o")
    child.expect("bang-2-ran")
    child.expect(PROMPT)
    assert leave(child) == 0
    assert (folder / "sub" / "keep.txt").read_text() == "keep me"
    assert fake_llm.chat_requests() == []


def test_following_the_hint_for_an_unreadable_line_lets_exactly_that_line_run() -> None:
    policy = PermissionPolicy(rules={"bash": {"*": "allow"}})
    request = bash_request('python3 -c "print(1)"')
    assert policy.decide(request) == "deny"  # nobody to ask
    rule = json.loads("{" + policy.hint(request).split(" or ", 1)[1].removesuffix(" in opencode.json") + "}")
    followed = PermissionPolicy(rules={"bash": {"*": "allow", **rule["permission"]["bash"]}})
    assert followed.decide(request) == "once"
    assert followed.decide(bash_request('python3 -c "print(2)"')) == "deny"
