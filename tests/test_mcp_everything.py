"""npm's @modelcontextprotocol/server-everything (its resources, prompts and long-running tool with
progress) through the real parts: `agentcli run`, the chat in a pseudo-terminal, and `agentcli acp`.
Skipped, with the reason, only when the server is not installed (`.ci/run` installs it)."""

from __future__ import annotations

import re
import time
from typing import Any

from tests.acp_client import Editor, every_line_is_json_rpc, run, running_agent
from tests.fakellm import FakeLLM, Reply, ToolCall
from tests.terminal import PROMPT, leave, say, spawn
from tests.test_e2e_mcp import offered, tool_parts
from tests.test_mcp_third_party import everything
from tests.workspace import Workspace

DOC = "demo://resource/static/document/features.md"


def user_texts(body: dict[str, Any]) -> list[str]:
    out = []
    for m in body["messages"]:
        if m["role"] != "user":
            continue
        content = m["content"]
        out.append(content if isinstance(content, str) else " ".join(c.get("text", "") for c in content))
    return out


def test_the_model_lists_and_reads_the_servers_resources(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config({"mcp": {"everything": everything()}})
    fake_llm.push(
        Reply(tool_calls=[ToolCall("list_mcp_resources", {})]),
        Reply(tool_calls=[ToolCall("read_mcp_resource", {"server": "everything", "uri": DOC})]),
        # A blob whose type is text/plain is read as the text it is.
        Reply(
            tool_calls=[
                ToolCall(
                    "read_mcp_resource", {"server": "everything", "uri": "demo://resource/dynamic/blob/7"}
                )
            ]
        ),
        Reply(tool_calls=[ToolCall("read_mcp_resource", {"server": "nope", "uri": DOC})]),
        Reply(text="read them"),
    )
    proc = workspace.run("run", "--yes", "what resources are there?")
    assert proc.returncode == 0, proc.stderr
    tools = offered(fake_llm.chat_requests()[0].body)
    assert {"list_mcp_resources", "read_mcp_resource"} <= set(tools)
    assert tools["read_mcp_resource"]["parameters"]["required"] == ["server", "uri"]
    listed, doc, blob, unknown = tool_parts(workspace)
    assert listed.state.status == "completed", listed.state.error
    assert f'"uri": "{DOC}"' in listed.state.output and '"server": "everything"' in listed.state.output
    assert "demo://resource/dynamic/text/{resourceId}" in listed.state.output  # its URI templates
    assert doc.state.status == "completed", doc.state.error
    assert doc.state.output.startswith(f"Resource: {DOC}\nMIME: text/markdown\n")
    assert re.search(r"MIME: text/plain\nResource 7: This is a base64 blob created at ", blob.state.output)
    assert unknown.state.status == "error" and 'MCP server "nope" is not connected' in unknown.state.error


def test_a_denied_read_rule_refuses_resource_reads(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config({"mcp": {"everything": everything()}, "permission": {"read": {"mcp:*": "deny"}}})
    fake_llm.push(
        Reply(tool_calls=[ToolCall("read_mcp_resource", {"server": "everything", "uri": DOC})]),
        Reply(text="denied"),
    )
    assert workspace.run("run", "--yes", "read it").returncode == 0
    [part] = tool_parts(workspace)
    assert part.state.status == "error" and "rejected permission" in (part.state.error or "")


def test_prompts_are_chat_commands_and_progress_shows_on_the_tool_line(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config({"mcp": {"everything": everything()}})
    child = spawn(workspace, "chat", timeout=60)
    for _ in range(600):  # until the server is up (node starts slowly on a busy machine)
        child.send("/mcp\r")
        up = child.expect([r"everything\s+local\s+connected", r"everything\s+local\s+starting"])
        child.expect(PROMPT)
        if up == 0:
            break
        time.sleep(0.1)
    say(child, "/help", r"/everything:args-prompt city \[state\]")
    # Tab completes the prompt's name as any command's.
    child.send("/everything:args")
    child.send("\t")
    child.expect("-prompt")  # completed in place
    child.send("\x15")  # Ctrl-U: clear the line
    # A missing required argument is one line; nothing is sent.
    say(child, "/everything:args-prompt", r"needs city")
    fake_llm.push(Reply(text="Sunny."))
    say(child, "/everything:args-prompt Paris France", "Sunny")

    # The long-running tool reports progress: its running line shows it, in place.
    call = ToolCall("everything_trigger-long-running-operation", {"duration": 4, "steps": 4})
    fake_llm.push(Reply(tool_calls=[call]), Reply(text="Finished."))
    child.send("run the long operation\r")
    child.expect(r"[123]/4 \(\d+%\)")
    child.expect("Finished")
    child.expect(PROMPT)
    assert leave(child) == 0
    requests = fake_llm.chat_requests()
    assert user_texts(requests[0].body)[-1] == "What's weather in Paris, France?"
    assert len(requests) == 3  # the refused command sent nothing
    [part] = tool_parts(workspace)
    assert part.state.status == "completed" and "progress" not in part.state.metadata


def test_prompts_and_progress_over_acp(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config({"mcp": {"everything": everything()}})
    call = ToolCall("everything_trigger-long-running-operation", {"duration": 2, "steps": 2})
    # 40 notifications in 1 s: the editor gets a few, not 40.
    burst = ToolCall("everything_trigger-long-running-operation", {"duration": 1, "steps": 40})
    fake_llm.push(
        Reply(text="Sunny."),
        Reply(tool_calls=[call]),
        Reply(text="Finished."),
        Reply(tool_calls=[burst]),
        Reply(text="Again."),
    )
    editor = Editor()

    async def session() -> None:
        async with running_agent(workspace, editor) as agent:
            await agent.conn.initialize(protocol_version=1, client_capabilities=editor.capabilities())
            sid = (await agent.conn.new_session(cwd=str(workspace.project))).session_id
            assert (await agent.say(sid, "/everything:args-prompt Lyon")).stop_reason == "end_turn"
            assert (await agent.say(sid, "run it")).stop_reason == "end_turn"
            assert (await agent.say(sid, "run it fast")).stop_reason == "end_turn"
        every_line_is_json_rpc(agent.stdout_lines)
        assert "Traceback" not in agent.stderr()

    run(session())
    told = editor.of_kind("available_commands_update")
    advertised = {c.name: c for u in told for c in u.available_commands}
    assert "everything:args-prompt" in advertised
    assert advertised["everything:args-prompt"].input.root.hint == "city [state]"
    assert advertised["everything:simple-prompt"].input is None  # it takes no argument
    assert user_texts(fake_llm.chat_requests()[0].body)[-1] == "What's weather in Lyon?"
    first, burst = editor.of_kind("tool_call")

    def shown(call: Any) -> list[str]:
        updates = [u for u in editor.of_kind("tool_call_update") if u.tool_call_id == call.tool_call_id]
        assert updates[-1].status == "completed"
        assert "Long running operation completed" in str(updates[-1].content)
        return [u.content[0].content.text for u in updates if u.status == "in_progress" and u.content]

    assert "1/2 (50%)" in shown(first)
    fast = shown(burst)
    assert 1 <= len(fast) <= 8 and all(re.fullmatch(r"\d+/40 \(\d+%\)", t) for t in fast), fast


def test_the_user_attaches_a_resource_with_at_server_uri(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config({"mcp": {"everything": everything()}})
    child = spawn(workspace, "chat", timeout=60)
    fake_llm.push(Reply(text="It lists the features."))
    # Typed at once: the message waits for the server still starting, as a first step does.
    say(child, f"@everything:{DOC} what is in it?", "attached: everything:demo", "lists the features")
    say(child, "@everything:demo://resource/nope look", r"cannot attach everything:demo://resource/nope")
    child.send("\x15")  # the refused message is back in the prompt: clear it
    assert leave(child) == 0
    [request] = fake_llm.chat_requests()  # the refused one sent nothing
    sent = user_texts(request.body)[-1]
    assert f"Reading MCP resource: {DOC} (from everything, attached by the user)" in sent
    assert "MIME: text/markdown" in sent and "what is in it?" in sent


def test_run_attaches_a_resource_with_at_server_uri(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config({"mcp": {"everything": everything()}})
    fake_llm.push(Reply(text="It lists the features."))
    proc = workspace.run("run", f"@everything:{DOC} what is in it?")
    assert proc.returncode == 0, proc.stderr
    sent = user_texts(fake_llm.chat_requests()[0].body)[-1]
    assert f"Reading MCP resource: {DOC} (from everything" in sent and "MIME: text/markdown" in sent
    refused = workspace.run("run", "@everything:demo://resource/nope look")
    assert refused.returncode == 2 and "cannot attach everything:demo://resource/nope" in refused.stderr
    assert len(fake_llm.chat_requests()) == 1


def test_run_command_runs_an_mcp_prompt(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config({"mcp": {"everything": everything()}})
    fake_llm.push(Reply(text="Sunny."))
    # The server is still starting when the run begins: the prompt waits for it, as in the chat.
    proc = workspace.run("run", "--command", "everything:args-prompt", "Paris", "France")
    assert proc.returncode == 0, proc.stderr
    assert "Sunny" in proc.stdout
    assert user_texts(fake_llm.chat_requests()[0].body)[-1] == "What's weather in Paris, France?"
    missing = workspace.run("run", "--command", "everything:args-prompt")
    assert missing.returncode == 2 and "needs city" in missing.stderr
    unknown = workspace.run("run", "--command", "everything:no-such-prompt")
    assert unknown.returncode == 2 and "everything:args-prompt" in unknown.stderr  # the ones there are
    assert len(fake_llm.chat_requests()) == 1  # the refused commands sent nothing
