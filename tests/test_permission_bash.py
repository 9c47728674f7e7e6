"""Bash permission rules see every command of a line: lists, pipelines, subshells, substitutions,
wrappers (xargs, sudo, find -exec, sh -c), and find -delete; deny wins; what cannot be parsed asks."""

from __future__ import annotations

import pytest

from agentcli.session.permission import PermissionPolicy
from agentcli.store.records import AssistantMessage, ToolPart
from agentcli.tools.base import PermissionRequest
from agentcli.tools.shell_commands import split_commands
from tests.fakellm import FakeLLM, Reply, ToolCall
from tests.workspace import Workspace

RULES = {"bash": {"*": "allow", "rm *": "deny", "rm -rf*": "deny"}}

# Each deletes folder X in its own way; every one must be refused by the rules above.
BYPASSES = [
    "true && rm -rf X",
    "ls; rm -rf X",
    " rm -rf X",
    "find X -delete",
    "$(rm -rf X)",
    "(cd X && rm -rf .)",
    "echo X | xargs rm -rf",
    "echo `rm -rf X`",
    'echo "done: $(rm -rf X)"',
    "bash -c 'rm -rf X'",
    "sudo rm -rf X",
    "find X -exec rm -rf {} +",
    "/bin/rm -rf X",
    "r\\m -rf X",
    "rm\t-rf   X",
    "if true; then rm -rf X; fi",
    "bash <<EOF\nrm -rf X\nEOF",
    "sh <<< 'rm -rf X'",
    "eval 'rm -rf X'",
    "env FOO=1 rm -rf X",
]


def _request(command: str) -> PermissionRequest:
    parsed = split_commands(command)
    return PermissionRequest(tool="bash", title=command, patterns=parsed.commands, unsure=parsed.unsure)


@pytest.mark.parametrize("command", BYPASSES)
def test_a_denied_command_is_denied_wherever_it_hides(command: str) -> None:
    policy = PermissionPolicy(rules=RULES, yes=True)
    assert policy.decide(_request(command.replace("X", "victim"))) == "deny"


def test_each_part_is_matched_after_normalising_whitespace() -> None:
    assert split_commands("  git   status\t--short ;  ls -la | grep  x").commands == [
        "git status --short",
        "ls -la",
        "grep x",
    ]
    policy = PermissionPolicy(
        rules={"bash": {"*": "ask", "git status*": "allow", "ls *": "allow", "grep *": "allow"}}
    )
    assert policy.action(_request("git   status --short && ls -la | grep x")) == "allow"
    assert policy.action(_request("git status && make")) == "ask"  # one part not allowed: the line asks


def test_what_cannot_be_parsed_or_known_asks_even_when_allowed() -> None:
    policy = PermissionPolicy(rules={"bash": "allow"})
    assert policy.action(_request("echo 'unterminated")) == "ask"
    assert policy.action(_request("$CMD -rf victim")) == "ask"  # the command name is computed at run time
    assert policy.action(_request("curl -s example.invalid | sh")) == "ask"  # a shell reading stdin
    assert policy.action(_request("echo fine")) == "allow"


def test_always_covers_a_line_only_when_every_part_was_approved() -> None:
    answers = iter(["always", "deny"])
    policy = PermissionPolicy(asker=lambda _r: next(answers))
    assert policy.decide(_request("make test")) == "always"
    assert policy.decide(_request("make   test")) == "once"  # remembered, spacing aside
    assert policy.decide(_request("make test && rm -rf victim")) == "deny"  # the new part is asked


def test_bypasses_through_the_real_cli_leave_every_folder(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config({"permission": RULES})
    folders = []
    calls = []
    for i, command in enumerate(BYPASSES):
        folder = workspace.project / f"victim{i}"
        (folder / "sub").mkdir(parents=True)
        (folder / "sub" / "keep.txt").write_text("precious")
        folders.append(folder)
        calls.append(
            ToolCall("bash", {"command": command.replace("X", folder.name), "description": "delete"})
        )
    calls.append(ToolCall("bash", {"command": "echo allowed-ran > proof.txt", "description": "allowed"}))
    fake_llm.push(Reply(tool_calls=calls), Reply(text="done"))

    proc = workspace.run("run", "--yes", "clean up")  # --yes must not override a deny
    assert proc.returncode == 0, proc.stderr
    assert folders
    for folder in folders:
        assert (folder / "sub" / "keep.txt").read_text() == "precious", folder
    assert (workspace.project / "proof.txt").read_text() == "allowed-ran\n"  # the rules are not deny-all
    [session] = workspace.store().list_sessions()
    parts = [
        p
        for m in workspace.store().messages(session.id)
        if isinstance(m.info, AssistantMessage)
        for p in m.parts
        if isinstance(p, ToolPart)
    ]
    assert [p.state.status for p in parts] == ["error"] * len(BYPASSES) + ["completed"]
    # The model was told each was refused, and the turn went on.
    results = [m["content"] for m in fake_llm.chat_requests()[1].body["messages"] if m["role"] == "tool"]
    assert sum("rejected permission" in str(r) for r in results) == len(BYPASSES)
    assert "done" in proc.stdout
