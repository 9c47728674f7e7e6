"""`sessions export --format opencode`: the shape OpenCode 1.18.33's `opencode import` decodes, and what
comes back through our own import of it (tests/test_e2e_opencode_roundtrip.py runs OpenCode itself)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentcli.session.archive.model import SessionArchive
from agentcli.session.archive.native import parse
from agentcli.session.archive.opencode_export import to_opencode
from agentcli.session.archive.opencode_import import from_opencode
from agentcli.store.artifacts import Carryover, Ledger
from agentcli.store.records import (
    AssistantMessage,
    Attachment,
    CarryoverPart,
    CompactionDiagnostics,
    CompactionPart,
    FileChange,
    FilePart,
    FileSource,
    MessageError,
    ReasoningPart,
    SessionInfo,
    StepFinishPart,
    StepStartPart,
    TextPart,
    Tokens,
    ToolPart,
    ToolState,
    ToolTime,
    UserMessage,
    WithParts,
)

OPENCODE_EXPORT = Path(__file__).parent / "fixtures" / "opencode_export.json"
SID = "ses_0000000000000100000000000a"

# Required keys of OpenCode 1.18.33's schemas (Session, UserMessage, AssistantMessage, the parts and
# tool states), as its binary defines them: a file missing one is refused ("Missing key slug").
SESSION_KEYS = {"id", "slug", "projectID", "directory", "title", "version", "time"}
USER_KEYS = {"id", "sessionID", "role", "time", "agent", "model"}
ASSISTANT_KEYS = {
    "id", "sessionID", "role", "time", "parentID", "modelID", "providerID", "mode", "agent", "path", "cost",
    "tokens",
}  # fmt: skip
PART_KEYS = {
    "text": {"text"},
    "reasoning": {"text", "time"},
    "file": {"mime", "url"},
    "tool": {"callID", "tool", "state"},
    "compaction": {"auto"},
    "step-start": set(),
    "step-finish": {"reason", "cost", "tokens"},
}
STATE_KEYS = {
    "pending": {"input", "raw"},
    "running": {"input", "time"},
    "completed": {"input", "output", "title", "metadata", "time"},
    "error": {"input", "error", "time"},
}


def _mid(n: int) -> str:
    return f"msg_{n:014x}aaaaaaaaaaaa"


def _pid(n: int) -> str:
    return f"prt_{n:014x}bbbbbbbbbbbb"


def _session() -> SessionArchive:
    """A session with what agentcli keeps beyond OpenCode: carryover, a compaction's focus and
    diagnostics, undo data, an interrupted call, replayed input, an estimate, notices, todos."""
    u1, a1, u2, a2, u3 = (_mid(n) for n in range(1, 6))

    def part(msg: str, n: int) -> dict[str, Any]:
        return {"id": _pid(n), "session_id": SID, "message_id": msg}

    tool_time = ToolTime(start=10, end=20)
    messages = [
        WithParts(
            info=UserMessage(id=u1, session_id=SID, created=1, model="local/test-model"),
            parts=[
                TextPart(**part(u1, 1), text="edit notes.txt @notes.txt"),
                FilePart(
                    **part(u1, 2),
                    mime="text/plain",
                    filename="notes.txt",
                    url="file:///p/notes.txt",
                    source=FileSource(path="notes.txt", text="@notes.txt"),
                ),
            ],
        ),
        WithParts(
            info=AssistantMessage(
                id=a1,
                session_id=SID,
                parent_id=u1,
                created=2,
                completed=3,
                model="local/test-model",
                tokens=Tokens(input=100, output=5, estimated=True),
                finish="tool-calls",
            ),
            parts=[
                StepStartPart(**part(a1, 3)),
                ReasoningPart(**part(a1, 4), text="thinking"),
                ToolPart(
                    **part(a1, 5),
                    call_id="call_1",
                    tool="edit",
                    state=ToolState(
                        status="completed",
                        input={"filePath": "/p/notes.txt"},
                        output="Edit applied",
                        title="notes.txt",
                        time=ToolTime(start=10, end=20, compacted=30),
                        change=FileChange.made("/p/notes.txt", "old\n", "new\n"),
                        attachments=[Attachment(mime="image/png", url="data:image/png;base64,AAAA")],
                    ),
                ),
                ToolPart(
                    **part(a1, 6),
                    call_id="call_2",
                    tool="bash",
                    state=ToolState(
                        status="error",
                        input={"command": "sleep 9"},
                        error="aborted",
                        interrupted=True,
                        time=tool_time,
                    ),
                ),
                StepFinishPart(**part(a1, 7), reason="tool-calls", tokens=Tokens(input=100, output=5)),
            ],
        ),
        WithParts(
            info=UserMessage(id=u2, session_id=SID, created=4, model="local/test-model"),
            parts=[
                CompactionPart(**part(u2, 8), auto=True, overflow=True, tail_start_id=u1, focus="the notes")
            ],
        ),
        WithParts(
            info=AssistantMessage(
                id=a2,
                session_id=SID,
                parent_id=u2,
                created=5,
                completed=6,
                model="local/test-model",
                summary=True,
                finish="stop",
                error=MessageError(name="APIError", message="rate limited", status=429, retryable=True),
            ),
            parts=[
                TextPart(**part(a2, 9), text="## Goal\nedit the notes", fallback=True),
                CarryoverPart(**part(a2, 10), carryover=Carryover(ledger=Ledger(through=a1))),
            ],
        ),
        WithParts(
            info=UserMessage(id=u3, session_id=SID, created=7),
            parts=[
                TextPart(**part(u3, 11), text="edit notes.txt", replay_of=u1),
                TextPart(**part(u3, 12), text="Continue", synthetic=True, compaction_continue=True),
            ],
        ),
    ]
    messages[2].parts[0] = (
        messages[2]
        .parts[0]
        .model_copy(
            update={"diagnostics": CompactionDiagnostics(tokens_before=900, tokens_after=90, attempts=1)}
        )
    )
    info = SessionInfo(id=SID, title="Notes: edit!", directory="/p", model="local/test-model", agent="build")
    return SessionArchive(info=info, messages=messages, todos=[{"content": "edit", "status": "pending"}])


def _missing(record: dict[str, Any], keys: set[str]) -> set[str]:
    return {k for k in keys if k not in record}


def test_the_export_has_every_key_opencodes_schemas_require() -> None:
    data = json.loads(json.dumps(to_opencode(_session())))
    assert not _missing(data["info"], SESSION_KEYS) and data["info"]["slug"] == "notes-edit"
    assert data["info"]["id"] == SID
    for entry in data["messages"]:
        info = entry["info"]
        assert not _missing(info, USER_KEYS if info["role"] == "user" else ASSISTANT_KEYS), info
        assert info["id"].startswith("msg") and info["sessionID"] == SID
        if info["role"] == "user":
            assert set(info["model"]) == {"providerID", "modelID"}  # even where agentcli kept none
        for raw in entry["parts"]:
            assert raw["id"].startswith("prt") and raw["messageID"] == info["id"]
            assert not _missing(raw, PART_KEYS[raw["type"]]), raw
            if raw["type"] == "tool":
                state = raw["state"]
                assert not _missing(state, STATE_KEYS[state["status"]]), state
                assert "end" in state["time"] or state["status"] == "running"
    error = data["messages"][3]["info"]["error"]
    assert error == {
        "name": "APIError",
        "data": {"message": "rate limited", "isRetryable": True, "statusCode": 429},
    }
    types = [p["type"] for m in data["messages"] for p in m["parts"]]
    assert "carryover" not in types  # OpenCode has no such part: it rides in the session's metadata
    assert data["messages"][4]["parts"][1]["metadata"] == {"compaction_continue": True}  # OpenCode's own flag


def test_an_agentcli_session_comes_back_whole_from_the_opencode_format() -> None:
    original = _session()
    back = from_opencode(json.loads(json.dumps(to_opencode(original))))
    assert [m.model_dump() for m in back.messages] == [m.model_dump() for m in original.messages]
    assert back.todos == original.todos
    assert back.info.agent == "build" and back.info.model == "local/test-model"


def test_an_opencode_session_exported_back_keeps_its_records() -> None:
    raw = json.loads(OPENCODE_EXPORT.read_text())
    again = to_opencode(parse(raw))  # imported as agentcli does (fresh ids), then exported
    assert len(again["messages"]) == len(raw["messages"])

    def shape(data: dict[str, Any]) -> list[Any]:
        out = []
        for m in data["messages"]:
            parts = []
            for p in m["parts"]:
                state = p.get("state") or {}
                parts.append(
                    (p["type"], p.get("text"), p.get("auto"), p.get("tool"), p.get("callID"),
                     state.get("status"), state.get("output"), (state.get("time") or {}).get("compacted"))
                )  # fmt: skip
            out.append((m["info"]["role"], m["info"].get("summary") is True, m["info"].get("finish"), parts))
        return out

    assert shape(again) == shape(raw)
