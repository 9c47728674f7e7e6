"""Compaction forgets nothing that matters, whatever the summary says (issue 17): after every
compaction the next request carries the ledger of files and commands, the user's own words, the
loaded skills and the open todos, all taken from the records. In-process: the real loop, store and
tools against the scripted server; the assertions are on the requests the server received."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentcli.plugins import hookimpl
from agentcli.session.permission import PermissionPolicy
from agentcli.store.artifacts import Carryover, split_summary
from agentcli.store.records import AssistantMessage
from agentcli.tools.registry import all_tools
from tests.builders import Harness
from tests.fakellm import FakeLLM, Reply, ToolCall, Usage
from tests.workspace import Workspace

RULE = "Always run the tests with `pytest -q`, never with plain pytest, and keep every line under 80 columns."
USELESS = "## Objective\n- (none)\n\n## Next Move\n1. (none)"  # a summary that remembers nothing
SKILL_BODY = "When writing parsers, name every grammar rule after its token: STYLE-SKILL-7731."
SMALL = Usage(200, 10)


def _harness(tmp_path: Path, fake_llm: FakeLLM, **compaction: Any) -> Harness:
    h = Harness.make(
        tmp_path,
        fake_llm,
        extra={"compaction": {"tail_turns": 0, "prune": False, **compaction}},
        policy=PermissionPolicy(yes=True),
    )
    skill = h.project / ".opencode" / "skill" / "parser-style" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(f"---\nname: parser-style\ndescription: how we write parsers\n---\n{SKILL_BODY}\n")
    h.runtime.tools = {t.name: t for t in all_tools([h.project / ".opencode" / "skill"])}
    return h


def _calls(*calls: ToolCall) -> Reply:
    return Reply(tool_calls=list(calls), usage=SMALL)


TODOS = [
    {"content": "write the tokenizer", "status": "completed", "priority": "high"},
    {"content": "handle nested brackets", "status": "in_progress", "priority": "high"},
    {"content": "document the grammar", "status": "pending", "priority": "low"},
]


def _turn(n: int) -> tuple[str, list[Reply], list[str], list[str]]:
    """Turn ``n``'s question, the model's scripted steps, and the paths and commands it touches."""
    path, log = f"src/part{n}.py", f"notes/log{n}.txt"
    cmd_ok, cmd_bad = f"echo built {n}", f"python -c 'import sys; sys.exit({n + 1})'"
    steps = [
        _calls(ToolCall("write", {"filePath": path, "content": f"x = {n}\n"})),
        _calls(ToolCall("edit", {"filePath": path, "oldString": f"x = {n}", "newString": f"x = {n * 10}"})),
        _calls(ToolCall("write", {"filePath": log, "content": "log\n"})),
        _calls(ToolCall("read", {"filePath": path})),
        _calls(ToolCall("bash", {"command": cmd_ok, "description": "build"})),
        _calls(ToolCall("bash", {"command": cmd_bad, "description": "check"})),
        Reply(text=f"turn {n} done", usage=SMALL),
    ]
    return f"step {n}: add part {n}", steps, [path, log], [cmd_ok, cmd_bad]


def _next_request(fake_llm: FakeLLM) -> dict[str, Any]:
    return next(r.body for r in reversed(fake_llm.chat_requests()) if "tools" in r.body)


def test_five_useless_summaries_lose_no_file_command_rule_skill_or_todo(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    h = _harness(tmp_path, fake_llm)
    fake_llm.push(
        _calls(ToolCall("skill", {"name": "parser-style"})),
        _calls(ToolCall("todowrite", {"todos": TODOS})),
        Reply(text="ready", usage=SMALL),
    )
    h.loop.prompt(h.sid, f"{RULE}\n\nWe are building a parser.")
    paths: list[str] = []
    commands: list[str] = []
    for n in range(1, 6):
        question, steps, touched, ran = _turn(n)
        fake_llm.push(*steps)
        h.loop.prompt(h.sid, question)
        paths += touched
        commands += ran
        fake_llm.push(Reply(text=USELESS, usage=SMALL))
        assert h.loop.compact(h.sid)
        fake_llm.push(Reply(text=f"after compaction {n}", usage=SMALL))
        h.loop.prompt(h.sid, f"what next after compaction {n}?")

        request = _next_request(fake_llm)
        messages = request["messages"]
        summary = next(m["content"] for m in messages if m["role"] == "assistant")
        said, carried = split_summary(summary)
        assert said == USELESS  # the summary remembered nothing…
        sent = json.dumps(messages)
        for path in paths:  # …yet every file of the session is in the request,
            assert path in carried, (n, path)
        for command in commands:  # every command (with its exit status),
            assert f"`{command}`" in carried, (n, command)
        assert f"exit {n + 1}" in carried and "Unresolved errors:" in carried
        assert RULE in carried  # the user's first-turn rule, word for word,
        assert SKILL_BODY in carried  # the loaded skill's body,
        assert "[in_progress] handle nested brackets" in carried  # and the open todos
        assert "[pending] document the grammar" in carried and "write the tokenizer" not in carried
        assert sent.count(SKILL_BODY) == 1  # once: the skill's own output was summarised away

    summaries = [m for m in h.assistants() if isinstance(m.info, AssistantMessage) and m.info.summary]
    assert len(summaries) == 5


def test_with_the_ledger_off_a_useless_summary_loses_the_rule(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = _harness(tmp_path, fake_llm, ledger=False)
    fake_llm.push(Reply(text="noted", usage=SMALL), Reply(text=USELESS, usage=SMALL))
    h.loop.prompt(h.sid, RULE)
    assert h.loop.compact(h.sid)
    fake_llm.push(Reply(text="ok", usage=SMALL))
    h.loop.prompt(h.sid, "go on")
    assert RULE not in json.dumps(_next_request(fake_llm))  # OpenCode's behaviour: gone with the history


def test_sessions_show_prints_the_carryover_and_the_ledger_now(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.push(
        _calls(ToolCall("write", {"filePath": "src/made.py", "content": "x = 1\n"})),
        _calls(ToolCall("bash", {"command": "python -c 'raise SystemExit(4)'", "description": "check"})),
        Reply(text="done", usage=SMALL),
    )
    assert workspace.run("run", "--yes", RULE).returncode == 0
    fake_llm.push(Reply(text=USELESS, usage=SMALL))
    assert workspace.run("compact").returncode == 0
    fake_llm.push(_calls(ToolCall("read", {"filePath": "src/made.py"})), Reply(text="read it", usage=SMALL))
    assert workspace.run("run", "--yes", "--continue", "look again").returncode == 0

    [session] = workspace.store().list_sessions()
    shown = workspace.run("sessions", "show", session.id)
    assert shown.returncode == 0, shown.stderr
    out = " ".join(shown.stdout.split())  # the panels wrap long lines
    assert "carried past the summary" in out and "ledger now" in out
    assert "src/made.py: read, written" in out  # the read after the compaction is in the ledger now
    assert "exit 4" in out and "Always run the tests with `pytest -q`" in out
    data = json.loads(workspace.run("sessions", "show", "--json", session.id).stdout)
    assert data["ledger"]["ledger"]["files"][0]["path"] == "src/made.py"
    assert data["ledger"]["ledger"]["files"][0]["reads"] == 1


class _LedgerReader:
    """A plugin that reads the ledger through its context (plugins may not import session)."""

    def __init__(self) -> None:
        self.context: Any = None
        self.seen: list[Carryover] = []

    @hookimpl
    def setup(self, context: Any) -> None:
        self.context = context

    @hookimpl
    def chat_system_transform(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        ledger = self.context.session.ledger(input["session_id"])
        self.seen.append(ledger)
        output["system"].append("files so far: " + ", ".join(f.path for f in ledger.ledger.files))


def test_plugins_read_the_ledger_from_their_context(tmp_path: Path, fake_llm: FakeLLM) -> None:
    plugin = _LedgerReader()
    h = Harness.make(
        tmp_path,
        fake_llm,
        plugins=[plugin],
        policy=PermissionPolicy(yes=True),
        extra={"compaction": {"prune": False}},
    )
    h.runtime.tools = {t.name: t for t in all_tools()}
    fake_llm.push(
        _calls(ToolCall("write", {"filePath": "a.py", "content": "a\n"})),
        Reply(text="written", usage=SMALL),
        Reply(text=USELESS, usage=SMALL),
    )
    h.loop.prompt(h.sid, "write a.py")
    assert h.loop.compact(h.sid)
    fake_llm.push(Reply(text="ok", usage=SMALL))
    h.loop.prompt(h.sid, "and now?")
    system = [m["content"] for m in _next_request(fake_llm)["messages"] if m["role"] == "system"]
    assert "files so far: a.py" in "\n".join(system)
    assert isinstance(plugin.seen[-1], Carryover) and plugin.seen[-1].ledger.files[0].writes == 1
