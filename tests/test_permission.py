"""Who answers a tool's permission question: config rules (read from a real opencode.json), --yes,
remembered "always" answers, and the refusal when nobody can be asked; plus one turn through the
loop where a denied command is never run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentcli.session.permission import PermissionPolicy
from agentcli.store.records import ToolPart
from agentcli.tools.base import PermissionAnswer, PermissionRequest
from agentcli.tools.bash import BashTool
from agentcli.trusted_config import load_config
from tests.builders import Harness
from tests.fakellm import FakeLLM, Reply, ToolCall


def _rules(tmp_path: Path, permission: dict[str, Any]) -> dict[str, Any]:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "opencode.json").write_text(json.dumps({"permission": permission}))
    # Trusted: a project's "allow" rules take effect only in a trusted folder (tests/test_trust.py).
    loaded = load_config(cwd=tmp_path, env={"HOME": str(tmp_path / "home"), "AGENTCLI_TRUST_ALL": "1"})
    return loaded.config.permission.model_dump(exclude_none=True)


def bash(command: str) -> PermissionRequest:
    return PermissionRequest(tool="bash", title=command, patterns=[command])


def edit(path: str) -> PermissionRequest:
    return PermissionRequest(tool="write", title=path, patterns=[path])


class Asker:
    def __init__(self, answer: PermissionAnswer) -> None:
        self.answer = answer
        self.asked: list[str] = []

    def __call__(self, request: PermissionRequest) -> PermissionAnswer:
        self.asked.append(request.title)
        return self.answer


def test_config_actions_allow_ask_deny(tmp_path: Path) -> None:
    rules = _rules(tmp_path, {"edit": "deny", "bash": "allow", "webfetch": "ask"})
    asker = Asker("once")
    policy = PermissionPolicy(rules=rules, asker=asker)
    assert policy.decide(edit("a.txt")) == "deny"
    assert policy.decide(bash("rm -rf build")) == "once"
    assert (
        policy.decide(PermissionRequest(tool="webfetch", title="https://x", patterns=["https://x"])) == "once"
    )
    assert asker.asked == ["https://x"]  # only the "ask" rule reached the user


def test_bash_patterns_last_match_wins(tmp_path: Path) -> None:
    rules = _rules(tmp_path, {"bash": {"*": "ask", "git *": "allow", "git push*": "deny"}})
    policy = PermissionPolicy(rules=rules)
    assert policy.action(bash("git status")) == "allow"
    assert policy.action(bash("git push origin main")) == "deny"
    assert policy.action(bash("ls -la")) == "ask"
    reordered = PermissionPolicy(rules=_rules(tmp_path, {"bash": {"git push*": "deny", "git *": "allow"}}))
    assert reordered.action(bash("git push origin main")) == "allow"  # the later, broader rule wins
    assert reordered.action(bash("make")) == "ask"  # no pattern matches: the default


def test_yes_allows_everything_config_does_not_deny(tmp_path: Path) -> None:
    rules = _rules(tmp_path, {"bash": {"rm *": "deny"}})
    policy = PermissionPolicy(rules=rules, yes=True)
    assert policy.decide(bash("make test")) == "once"
    assert policy.decide(edit("a.txt")) == "once"
    assert policy.decide(bash("rm -rf /")) == "deny"


def test_no_asker_means_deny() -> None:
    policy = PermissionPolicy()
    assert policy.decide(bash("make")) == "deny"
    assert policy.decide(edit("a.txt")) == "deny"


def test_always_is_remembered_for_the_same_pattern() -> None:
    asker = Asker("always")
    policy = PermissionPolicy(asker=asker)
    assert policy.decide(bash("make test")) == "always"
    assert policy.decide(bash("make test")) == "once"
    assert asker.asked == ["make test"]
    asker.answer = "deny"
    assert policy.decide(bash("make clean")) == "deny"  # another command is asked again
    assert asker.asked == ["make test", "make clean"]


def test_once_is_not_remembered() -> None:
    asker = Asker("once")
    policy = PermissionPolicy(asker=asker)
    policy.decide(edit("a.txt"))
    policy.decide(edit("a.txt"))
    assert asker.asked == ["a.txt", "a.txt"]


def test_a_denied_command_is_never_run(tmp_path: Path, fake_llm: FakeLLM) -> None:
    rules = {"bash": {"*": "allow", "touch *": "deny"}}
    h = Harness.make(tmp_path, fake_llm, tools={"bash": BashTool()}, policy=PermissionPolicy(rules=rules))
    fake_llm.push(
        Reply(tool_calls=[ToolCall("bash", {"command": "touch made.txt", "description": "make a file"})]),
        Reply(text="ok"),
    )
    h.loop.prompt(h.sid, "make a file")
    assert not (h.project / "made.txt").exists()
    (part,) = [p for m in h.assistants() for p in m.parts if isinstance(p, ToolPart)]
    assert part.state.status == "error" and part.state.error
    # The model was told, and the turn went on.
    second = fake_llm.chat_requests()[1].body["messages"]
    assert any(
        m["role"] == "tool" and part.state.error.split("(")[0].strip() in str(m["content"]) for m in second
    )
    assert h.assistants()[-1].text() == "ok"
