"""`agentcli acp` sessions a client opens and comes back to (Toad resumes the session it opened), and
the context figures it is sent: the real agent as a subprocess, the `acp` package's client side."""

from __future__ import annotations

from tests.acp_client import Editor, every_line_is_json_rpc, run, running_agent
from tests.fakellm import FakeLLM, Reply, ToolCall, Usage
from tests.workspace import Workspace


def test_a_session_opened_and_never_prompted_loads_in_a_new_agent(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    first = Editor()

    async def open_only() -> str:
        async with running_agent(workspace, first) as agent:
            return await agent.start(first, workspace.project)

    sid = run(open_only())
    again = Editor()
    (workspace.project / "notes.txt").write_text("milk\n")
    fake_llm.push(
        Reply(tool_calls=[ToolCall("read", {"filePath": "notes.txt"})], usage=Usage(900, 5)),
        Reply(text="It says milk.", usage=Usage(950, 5)),
    )

    async def load() -> None:
        async with running_agent(workspace, again) as agent:
            await agent.conn.initialize(protocol_version=1)
            await agent.conn.load_session(cwd=str(workspace.project), session_id=sid, mcp_servers=[])
            assert (await agent.say(sid, "what do my notes say?")).stop_reason == "end_turn"
        every_line_is_json_rpc(agent.stdout_lines)

    run(load())
    assert again.text().endswith("It says milk.")
    # The context figures: sent when they change, never the same figures twice in a row.
    usage = [(u.used, u.size, u.cost.amount if u.cost else None) for u in again.of_kind("usage_update")]
    assert usage and all(a != b for a, b in zip(usage, usage[1:], strict=False)), usage
