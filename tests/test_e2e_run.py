"""`agentcli run` end to end: the installed CLI in a subprocess, the scripted server as provider."""

from __future__ import annotations

import json

from agentcli.store.records import AssistantMessage, StepFinishPart, TextPart, ToolPart
from tests.fakellm import FakeLLM, Reply, ToolCall, Usage
from tests.workspace import Workspace


def _tool_results(body: dict) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def test_run_reads_edits_runs_and_answers(workspace: Workspace, fake_llm: FakeLLM) -> None:
    app = workspace.project / "app.py"
    app.write_text('print("hello")\n')
    fake_llm.push(
        Reply(
            text="Let me look.",
            tool_calls=[ToolCall("read", {"filePath": "app.py"})],
            usage=Usage(1200, 30, cached_tokens=200),
        ),
        Reply(
            tool_calls=[
                ToolCall(
                    "edit",
                    {"filePath": str(app), "oldString": 'print("hello")', "newString": 'print("goodbye")'},
                )
            ],
            usage=Usage(1400, 40),
        ),
        Reply(
            tool_calls=[ToolCall("bash", {"command": "python3 app.py", "description": "Run the app"})],
            usage=Usage(1500, 20),
        ),
        Reply(text="Changed the greeting; it now prints **goodbye**.", usage=Usage(1600, 25)),
    )
    proc = workspace.run("run", "--yes", "change the greeting to goodbye")
    assert proc.returncode == 0, proc.stderr
    assert app.read_text() == 'print("goodbye")\n'
    assert "Changed the greeting" in proc.stdout

    requests = fake_llm.chat_requests()
    assert len(requests) == 4
    first = requests[0].body
    assert first["stream"] is True and first["stream_options"] == {"include_usage": True}
    assert {t["function"]["name"] for t in first["tools"]} >= {
        "read",
        "write",
        "edit",
        "bash",
        "glob",
        "grep",
    }
    assert first["messages"][0]["role"] == "system"
    assert first["messages"][-1] == {"role": "user", "content": "change the greeting to goodbye"}
    # Each tool's result reached the model on the next request.
    assert 'print("hello")' in _tool_results(requests[1].body)[0]
    assert "goodbye" in _tool_results(requests[3].body)[-1]  # bash output

    store = workspace.store()
    [session] = store.list_sessions()
    messages = store.messages(session.id)
    assistants = [m for m in messages if isinstance(m.info, AssistantMessage)]
    assert len(assistants) == 4
    tools = [p for m in assistants for p in m.parts if isinstance(p, ToolPart)]
    assert [t.tool for t in tools] == ["read", "edit", "bash"]
    assert all(t.state.status == "completed" for t in tools)
    finishes = [p for m in assistants for p in m.parts if isinstance(p, StepFinishPart)]
    assert [f.tokens.total for f in finishes] == [1230, 1440, 1520, 1625]
    assert finishes[0].tokens.cache.read == 200 and finishes[0].tokens.input == 1000
    assert assistants[-1].info.finish == "stop"
    assert session.tokens.total == 1230 + 1440 + 1520 + 1625
    assert session.context_tokens == 1625
    assert session.messages == 5

    shown = workspace.run("sessions", "show", session.id)
    assert shown.returncode == 0, shown.stderr
    for needle in ("change the greeting to goodbye", "read", "edit", "bash", "Changed the greeting"):
        assert needle in shown.stdout

    # --continue sends the whole history, then the new question.
    fake_llm.push(Reply(text="It prints goodbye."))
    again = workspace.run("run", "--continue", "what does it print now?")
    assert again.returncode == 0, again.stderr
    body = fake_llm.chat_requests()[-1].body
    roles = [m["role"] for m in body["messages"]]
    assert roles.count("tool") == 3 and roles[-1] == "user"
    assert body["messages"][1]["content"] == "change the greeting to goodbye"
    assert body["messages"][-1]["content"] == "what does it print now?"
    assert len(workspace.store().list_sessions()) == 1


def test_run_json_format(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="forty-two", usage=Usage(50, 5)))
    proc = workspace.run("run", "--format", "json", "the answer?")
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    [text] = [e for e in lines if e["type"] == "text"]
    assert text["text"] == "forty-two"
    result = lines[-1]
    assert result["type"] == "result" and result["error"] is None and result["tokens"]["total"] == 55


def test_run_without_permission_refuses_bash(workspace: Workspace, fake_llm: FakeLLM) -> None:
    marker = workspace.project / "ran.txt"
    fake_llm.push(
        Reply(tool_calls=[ToolCall("bash", {"command": f"touch {marker}", "description": "touch"})]),
        Reply(text="I could not run it."),
    )
    proc = workspace.run("run", "touch the file")
    assert proc.returncode == 3, proc.stderr  # the turn did not do what was asked
    assert not marker.exists()
    [line] = [x for x in proc.stderr.splitlines() if x.startswith("permission:")]
    assert "bash" in line and "--yes" in line
    result = _tool_results(fake_llm.chat_requests()[1].body)[0]
    assert "--yes" in result and "permission" in result.lower()


def test_title_comes_from_the_title_request(workspace: Workspace, fake_llm: FakeLLM) -> None:
    config = workspace.write_config({"small_model": "fake/small"})
    config["provider"]["fake"]["models"]["small"] = {"limit": {"context": 8_000, "output": 1_000}}
    (workspace.project / "opencode.json").write_text(json.dumps(config))
    fake_llm.title = "Greeting refactor"
    fake_llm.push(Reply(text="ok"))
    proc = workspace.run("run", "please refactor the greeting\nwith more detail")
    assert proc.returncode == 0, proc.stderr
    titles = [r for r in fake_llm.requests if r.title]
    assert titles and "tools" not in titles[0].body
    assert titles[0].body["model"] == "small" and fake_llm.chat_requests()[0].body["model"] == "test-model"
    assert "please refactor the greeting" in json.dumps(titles[0].body["messages"])
    [session] = workspace.store().list_sessions()
    assert session.title == "Greeting refactor"
    listed = workspace.run("sessions", "list", "--json")
    assert json.loads(listed.stdout)[0]["title"] == "Greeting refactor"


def test_text_parts_are_kept_in_order(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="thinking done", reasoning="let me think about it"))
    proc = workspace.run("run", "hi")
    assert proc.returncode == 0, proc.stderr
    [session] = workspace.store().list_sessions()
    parts = workspace.store().messages(session.id)[-1].parts
    kinds = [p.type for p in parts]
    assert kinds == ["step-start", "reasoning", "text", "step-finish"]
    assert isinstance(parts[2], TextPart) and parts[2].text == "thinking done"


def test_run_attaches_mentioned_files_and_refuses_a_missing_one(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    proc = workspace.run("run", "summarise @nope.txt")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        "agentcli: error: cannot attach nope.txt: there is no such file or folder here; nothing was sent"
    ]
    assert fake_llm.chat_requests() == [] and workspace.store().list_sessions() == []
    (workspace.project / "notes.txt").write_text("the secret word is plover\n")
    fake_llm.push(Reply(text="Summarised."))
    proc = workspace.run("run", "summarise @notes.txt")
    assert proc.returncode == 0, proc.stderr
    assert "plover" in json.dumps(fake_llm.chat_requests()[-1].body["messages"])
