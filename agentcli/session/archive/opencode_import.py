"""OpenCode's ``opencode export`` JSON (``{info, messages: [{info, parts}]}``, MessageV2) as our records.

The shapes are nearly ours (our records follow MessageV2): the differences are camelCase ids,
``model: {providerID, modelID}`` on user messages, errors as ``{name, data: {message, …}}``, a
file source's text as ``{value, start, end}``, and part types with no meaning for the model here
(snapshot, patch, agent, subtask, retry), which are left out. Compaction markers (with their
``tail_start_id``), summaries (``summary: true``) and pruned outputs (``state.time.compacted``)
map one to one, so the imported session continues from the same window. A file from
``agentcli sessions export --format opencode`` carries what OpenCode has no field for in the session's
``metadata.agentcli`` (see ``opencode_export``): it is put back, so the session comes back whole.
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter, ValidationError

from agentcli.session.archive.model import ArchiveError, SessionArchive, totals
from agentcli.store.records import Message, Part, SessionInfo, WithParts

STASH_KEY = "agentcli"  # the session metadata key agentcli's OpenCode export keeps its own fields under
KEPT_PART_TYPES = frozenset({"text", "reasoning", "file", "tool", "compaction", "step-start", "step-finish"})
_message_adapter: TypeAdapter[Any] = TypeAdapter(Message)
_part_adapter: TypeAdapter[Any] = TypeAdapter(Part)


def _model_name(provider: Any, model: Any) -> str | None:
    return f"{provider}/{model}" if provider and model else (model or None)


def _error(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        return None
    given = raw.get("data")
    data: dict[str, Any] = given if isinstance(given, dict) else {}
    return {
        "name": str(raw.get("name") or "UnknownError"),
        "message": str(data.get("message") or raw.get("message") or ""),
        "status": data.get("statusCode"),
        "retryable": bool(data.get("isRetryable")),
        "response_body": data.get("responseBody"),
    }


def _message(raw: dict[str, Any], session_id: str) -> dict[str, Any]:
    """OpenCode's message info as the fields of our record (not yet validated)."""
    times = raw.get("time") or {}
    out: dict[str, Any] = {
        "id": raw["id"],
        "session_id": session_id,
        "role": raw.get("role"),
        "created": times.get("created") or 0,
        "agent": raw.get("agent") or "build",
    }
    if raw.get("role") == "user":
        model = raw.get("model") or {}
        out["model"] = _model_name(model.get("providerID"), model.get("modelID"))
        return out
    out.update(
        parent_id=raw.get("parentID") or "",
        completed=times.get("completed"),
        mode=raw.get("mode") or "build",
        model=_model_name(raw.get("providerID"), raw.get("modelID")),
        tokens=raw.get("tokens") or {},
        cost=raw.get("cost") or 0.0,
        finish=raw.get("finish"),
        error=_error(raw.get("error")),
        summary=bool(raw.get("summary")),
    )
    return out


def _file_source(source: Any) -> dict[str, Any] | None:
    if not isinstance(source, dict):
        return None
    text = source.get("text")
    return {
        "type": source.get("type") or "file",
        "path": source.get("path") or source.get("uri") or "",
        "text": text.get("value", "") if isinstance(text, dict) else (text or ""),
    }


def _tool_state(raw: dict[str, Any]) -> dict[str, Any]:
    state = dict(raw)
    times = state.get("time") or {}
    state["time"] = {k: v for k, v in times.items() if k in ("start", "end", "compacted") and v is not None}
    state["attachments"] = [
        {"mime": a.get("mime"), "filename": a.get("filename"), "url": a.get("url")}
        for a in state.get("attachments") or []
        if isinstance(a, dict) and a.get("mime") and a.get("url")
    ]
    if state.get("status") == "pending" and not isinstance(state.get("raw"), str):
        state["raw"] = ""
    return state


def _part(raw: dict[str, Any], session_id: str, message_id: str) -> dict[str, Any]:
    out = {**raw, "id": raw["id"], "session_id": session_id, "message_id": message_id}
    kind = raw.get("type")
    if kind == "tool":
        out["call_id"] = raw.get("callID") or raw["id"]
        out["state"] = _tool_state(raw.get("state") or {})
    elif kind == "file":
        out["source"] = _file_source(raw.get("source"))
    return out


def message_fields(
    raw: dict[str, Any], session_id: str, extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    """OpenCode's message info as our record's JSON (``extra``: fields of ours laid over it)."""
    return _message_adapter.validate_python({**_message(raw, session_id), **(extra or {})}).model_dump(
        mode="json"
    )


def part_fields(
    raw: dict[str, Any], session_id: str, message_id: str, extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    """OpenCode's part as our record's JSON (``extra``: fields of ours laid over it, a tool state's
    one level down)."""
    fields = _part(raw, session_id, message_id)
    if extra:
        state = {**fields.get("state", {}), **extra.get("state", {})}
        fields = {**fields, **extra, **({"state": state} if "state" in fields else {})}
    return _part_adapter.validate_python(fields).model_dump(mode="json")


def _stash(info: dict[str, Any]) -> dict[str, Any]:
    metadata = info.get("metadata")
    stash = metadata.get(STASH_KEY) if isinstance(metadata, dict) else None
    return stash if isinstance(stash, dict) else {}


def _with_parts(entry: dict[str, Any], sid: str, stash: dict[str, Any]) -> WithParts:
    raw_info = entry.get("info") or {}
    msg = message_fields(raw_info, sid, (stash.get("messages") or {}).get(raw_info.get("id")))
    mid = msg["id"]
    extras = stash.get("parts") or {}
    parts = [
        part_fields(p, sid, mid, extras.get(p.get("id")))
        for p in entry.get("parts") or []
        if isinstance(p, dict) and p.get("type") in KEPT_PART_TYPES
    ]
    # Parts OpenCode has no type for (carryover), back where they were.
    for kept in (stash.get("extra_parts") or {}).get(mid, []):
        parts.insert(
            min(int(kept["index"]), len(parts)), {**kept["part"], "session_id": sid, "message_id": mid}
        )
    return WithParts.model_validate({"info": msg, "parts": parts})


def from_opencode(data: dict[str, Any]) -> SessionArchive:
    info = data.get("info") or {}
    if not isinstance(info, dict) or not str(info.get("id", "")).startswith("ses"):
        raise ArchiveError("not an OpenCode export: 'info' has no session id")
    sid = info["id"]
    times = info.get("time") or {}
    stash = _stash(info)
    try:
        messages = [_with_parts(entry, sid, stash) for entry in data.get("messages") or []]
    except (ValidationError, KeyError, TypeError, AttributeError, ValueError) as exc:
        raise ArchiveError(
            f"an OpenCode message could not be read ({type(exc).__name__}: {str(exc).splitlines()[0]})"
        ) from None
    model = next((m.info.model for m in reversed(messages) if m.info.model), None)
    session = SessionInfo.model_validate(
        {
            "id": sid,
            "title": info.get("title") or "",
            "directory": info.get("directory") or "",
            "model": model,
            "created": times.get("created") or 0,
            "updated": times.get("updated") or 0,
            **(stash.get("session") or {}),
        }
    )
    todos = stash.get("todos")
    return SessionArchive(
        info=totals(session, messages), messages=messages, todos=todos if isinstance(todos, list) else []
    )
