"""A session as OpenCode 1.18.33's ``opencode export`` writes it, so that ``opencode import`` takes it.

OpenCode decodes the file with its own schemas (Session, MessageV2 Info and Part, see the shapes in
``opencode_import``): camelCase ids, ``model: {providerID, modelID}`` on user messages,
``path: {cwd, root}`` on assistant messages, errors as ``{name, data}``, a tool state per status with
the fields that status requires. It drops keys it does not know, so what OpenCode has no field for
(agentcli's carryover parts, a compaction's focus and diagnostics, undo data, the todo list, …) rides
in the one place OpenCode keeps as is: the session's ``metadata``, under ``agentcli``, keyed by the
record's id. ``opencode_import`` puts it back, so agentcli → OpenCode → agentcli gives the same session;
OpenCode ignores it, and drops the entries of records it deletes.
"""

from __future__ import annotations

import re
from typing import Any

from agentcli.session.archive.model import SessionArchive
from agentcli.session.archive.opencode_import import STASH_KEY, message_fields, part_fields
from agentcli.store.records import (
    AssistantMessage,
    CompactionPart,
    FilePart,
    MessageError,
    Part,
    ReasoningPart,
    StepFinishPart,
    StepStartPart,
    TextPart,
    Tokens,
    ToolPart,
    ToolState,
    UserMessage,
)

OPENCODE_VERSION = "1.18.33"  # the version whose schemas this file follows
UNKNOWN_MODEL = ("unknown", "unknown")  # OpenCode requires a model on every message


def _split_model(name: str | None, fallback: str | None) -> tuple[str, str]:
    name = name or fallback
    if not name:
        return UNKNOWN_MODEL
    provider, sep, model = name.partition("/")
    return (provider, model) if sep and provider and model else ("", name)


def _tokens(tokens: Tokens, *, total: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {
        "input": tokens.input,
        "output": tokens.output,
        "reasoning": tokens.reasoning,
        "cache": {"read": tokens.cache.read, "write": tokens.cache.write},
    }
    if total and tokens.total:
        out["total"] = tokens.total
    return out


def _error(error: MessageError, provider: str) -> dict[str, Any]:
    """OpenCode's error union: each name has its own ``data`` fields (unknown names: UnknownError)."""
    data: dict[str, Any] = {"message": error.message}
    name = error.name
    if name == "APIError":
        data["isRetryable"] = error.retryable
        if error.status is not None:
            data["statusCode"] = error.status
        if error.response_body is not None:
            data["responseBody"] = error.response_body
    elif name == "ContextOverflowError":
        if error.response_body is not None:
            data["responseBody"] = error.response_body
    elif name == "ProviderAuthError":
        data["providerID"] = provider
    elif name == "MessageOutputLengthError":
        data = {}
    elif name not in ("MessageAbortedError", "ContentFilterError", "UnknownError"):
        name = "UnknownError"
    return {"name": name, "data": data}


def _message(
    msg: UserMessage | AssistantMessage, directory: str, fallback_model: str | None
) -> dict[str, Any]:
    provider, model = _split_model(msg.model, fallback_model)
    base = {"id": msg.id, "sessionID": msg.session_id, "role": msg.role, "agent": msg.agent}
    if isinstance(msg, UserMessage):
        return {
            **base,
            "time": {"created": msg.created},
            "model": {"providerID": provider, "modelID": model},
            "summary": {"diffs": []},
        }
    out = {
        **base,
        "time": {"created": msg.created, **({"completed": msg.completed} if msg.completed else {})},
        "parentID": msg.parent_id,
        "modelID": model,
        "providerID": provider,
        "mode": msg.mode,
        "path": {
            "cwd": directory,
            "root": "/",
        },  # the git root, which agentcli does not keep: "/" as OpenCode without git
        "cost": msg.cost,
        "tokens": _tokens(msg.tokens),
    }
    if msg.summary:
        out["summary"] = True
    if msg.finish:
        out["finish"] = msg.finish
    if msg.error is not None:
        out["error"] = _error(msg.error, provider)
    return out


def _tool_state(part: ToolPart) -> dict[str, Any]:
    state: ToolState = part.state
    start = state.time.start
    end = state.time.end if state.time.end is not None else start
    base = {"status": state.status, "input": state.input}
    if state.status == "pending":
        return {**base, "raw": state.raw}
    if state.status == "running":
        return {**base, "title": state.title, "metadata": state.metadata, "time": {"start": start}}
    if state.status == "error":
        return {
            **base,
            "error": state.error or "",
            "metadata": state.metadata,
            "time": {"start": start, "end": end},
        }
    times: dict[str, Any] = {"start": start, "end": end}
    if state.time.compacted is not None:
        times["compacted"] = state.time.compacted
    out: dict[str, Any] = {
        **base,
        "output": state.output,
        "title": state.title,
        "metadata": state.metadata,
        "time": times,
    }
    if state.attachments:
        # OpenCode keeps a tool's attachments as whole file parts, with ids of their own.
        out["attachments"] = [
            {
                "id": f"{part.id}_{i}",
                "sessionID": part.session_id,
                "messageID": part.message_id,
                "type": "file",
                "mime": a.mime,
                "url": a.url,
                **({"filename": a.filename} if a.filename else {}),
            }
            for i, a in enumerate(state.attachments)
        ]
    return out


def _given(**fields: Any) -> dict[str, Any]:
    """The optional fields that have a value (OpenCode leaves unset ones out)."""
    return {k: v for k, v in fields.items() if v}


def _part(part: Part) -> dict[str, Any] | None:
    """The part as OpenCode's Part union has it; None for a type OpenCode has not (carryover)."""
    out: dict[str, Any] = {"id": part.id, "sessionID": part.session_id, "messageID": part.message_id}
    if isinstance(part, TextPart):
        time = part.time.model_dump(exclude_none=True) if part.time is not None else None
        out.update(type="text", text=part.text)
        # OpenCode marks the "continue" after an automatic compaction in the metadata (we lift it out).
        metadata = {**part.metadata, **({"compaction_continue": True} if part.compaction_continue else {})}
        out.update(_given(synthetic=part.synthetic, ignored=part.ignored, time=time, metadata=metadata))
    elif isinstance(part, ReasoningPart):
        out.update(type="reasoning", text=part.text, time=part.time.model_dump(exclude_none=True))
        out.update(_given(metadata=part.metadata))
    elif isinstance(part, FilePart):
        out.update(type="file", mime=part.mime, url=part.url, **_given(filename=part.filename))
        if part.source is not None and part.source.type == "file":
            value = part.source.text
            out["source"] = {
                "type": "file",
                "path": part.source.path,
                "text": {"value": value, "start": 0, "end": len(value)},
            }
    elif isinstance(part, ToolPart):
        out.update(type="tool", callID=part.call_id, tool=part.tool, state=_tool_state(part))
    elif isinstance(part, CompactionPart):
        out.update(type="compaction", auto=part.auto, overflow=part.overflow)
        if part.tail_start_id:
            out["tail_start_id"] = part.tail_start_id
    elif isinstance(part, StepStartPart):
        out["type"] = "step-start"
    elif isinstance(part, StepFinishPart):
        out.update(type="step-finish", reason=part.reason, cost=part.cost, tokens=_tokens(part.tokens))
    else:
        return None
    return out


def _differs(original: dict[str, Any], restored: dict[str, Any]) -> dict[str, Any]:
    """The fields OpenCode's record cannot give back (a tool state's one level down)."""
    out = {k: v for k, v in original.items() if restored.get(k) != v and k != "state"}
    if "state" in original:
        state = _differs(original["state"], restored.get("state") or {})
        if state:
            out["state"] = state
    return out


def _slug(title: str, session_id: str) -> str:
    """OpenCode names plan files after the slug: words from the title, else from the id."""
    words = re.findall(r"[a-z0-9]+", title.lower())[:4]
    return "-".join(words) or f"agentcli-{session_id[-8:].lower()}"


def to_opencode(archive: SessionArchive) -> dict[str, Any]:
    info = archive.info
    sid = info.id
    stash: dict[str, Any] = {"messages": {}, "parts": {}, "extra_parts": {}}
    messages: list[dict[str, Any]] = []
    for msg in archive.messages:
        raw_info = _message(msg.info, info.directory, info.model)
        restored = message_fields(raw_info, sid)
        extra = _differs(msg.info.model_dump(mode="json"), restored)
        if extra:
            stash["messages"][msg.id] = extra
        parts: list[dict[str, Any]] = []
        for index, part in enumerate(msg.parts):
            raw = _part(part)
            dump = part.model_dump(mode="json")
            if raw is None:
                stash["extra_parts"].setdefault(msg.id, []).append({"index": index, "part": dump})
                continue
            restored_part = part_fields(raw, sid, msg.id)
            extra = _differs(dump, restored_part)
            if extra:
                stash["parts"][part.id] = extra
            parts.append(raw)
        messages.append({"info": raw_info, "parts": parts})
    provider, model = _split_model(info.model, None)
    session: dict[str, Any] = {
        "id": sid,
        "slug": _slug(info.title, sid),
        "projectID": "global",  # `opencode import` puts its own project, directory and path
        "directory": info.directory,
        "title": info.title,
        "version": OPENCODE_VERSION,
        "cost": info.cost,
        "tokens": _tokens(info.tokens, total=False),
        "time": {"created": info.created, "updated": info.updated},
    }
    if info.parent_id:
        session["parentID"] = info.parent_id
    agent = info.agent or next((m.info.agent for m in reversed(archive.messages)), None)
    if agent:
        session["agent"] = agent
    if info.model:
        session["model"] = {"id": model, "providerID": provider}
    stash["session"] = info.model_dump(
        mode="json", include={"agent", "model", "notices", "context_estimated"}
    )
    stash["todos"] = archive.todos
    session["metadata"] = {STASH_KEY: {k: v for k, v in stash.items() if v}}
    return {"info": session, "messages": messages}
