"""What the model sees of a session, rebuilt from the records for every request.

Pure functions over ``WithParts`` lists: the window since the last completed pivot
(``filter_compacted``), the newest messages by id (``latest``), and the conversion to the OpenAI
chat-completions messages litellm takes (``to_model_messages``). No database, no litellm.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentcli.store.records import (
    AssistantMessage,
    CompactionPart,
    FilePart,
    ReasoningPart,
    StepStartPart,
    TextPart,
    ToolPart,
    WithParts,
    is_media,
)

SUMMARY_MARKER_TEXT = "What did we do so far?"
PRUNED_PLACEHOLDER = "[Old tool result content cleared]"
INTERRUPTED_TEXT = "[Tool execution was interrupted]"
TOOL_MEDIA_TEXT = "Attached media from tool result:"
# File parts whose content was already turned into text when the user attached them.
TEXTUAL_FILE_MIMES = frozenset({"text/plain", "application/x-directory"})


def _estimate(text: str) -> int:
    """OpenCode's token estimate: round(UTF-16 length / 4), halves rounded up like JS Math.round."""
    # TODO: use agentcli.llm.tokens.estimate once the LLM door provides it.
    length = len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2
    return (length + 2) // 4


def estimate_messages(msgs: Sequence[WithParts]) -> int:
    """The estimated size of messages as the model would get them (unstripped, like OpenCode).

    ``JSON.stringify`` has no spaces and keeps non-ASCII text as is, hence the dump options."""
    dumped = json.dumps(to_model_messages(msgs), separators=(",", ":"), ensure_ascii=False)
    return _estimate(dumped)


def attached_text(mime: str, filename: str | None) -> str:
    """The text that stands in for a media file the model will not get."""
    return f"[Attached {mime}: {filename or 'file'}]"


def truncate_output(text: str, max_chars: int | None) -> str:
    if max_chars is None or len(text) <= max_chars:
        return text
    return (
        text[:max_chars] + f"\n[Tool output truncated for compaction: omitted {len(text) - max_chars} chars]"
    )


# --- the window ---------------------------------------------------------------------------


def completes_pivot(msg: WithParts) -> bool:
    """A summary that finished without error: its marker is a cut-off for the window."""
    info = msg.info
    return isinstance(info, AssistantMessage) and info.summary and bool(info.finish) and info.error is None


def filter_compacted(newest_first: Iterable[WithParts]) -> list[WithParts]:
    """The messages since the last completed pivot, in model order.

    ``newest_first`` is consumed lazily and no further than the cut-off, so the store can page it.
    With a kept tail the order is [marker, summary, tail..., newer...]; see reference §4.1."""
    result: list[WithParts] = []
    completed: set[str] = set()
    retain: str | None = None
    for msg in newest_first:
        result.append(msg)
        if retain is not None:
            if msg.id == retain:
                break
            continue
        if msg.role == "user" and msg.id in completed:
            part = msg.compaction()
            if part is None:
                continue
            if part.tail_start_id is None:
                break
            retain = part.tail_start_id
            if retain == msg.id:
                break
            continue
        if completes_pivot(msg):
            completed.add(msg.info.parent_id)  # type: ignore[union-attr]
    result.reverse()
    return _summary_before_tail(result)


def _summary_before_tail(msgs: list[WithParts]) -> list[WithParts]:
    """Move the newest marker/summary pair that keeps a tail in front of that tail."""
    marker_index = next(
        (
            i
            for i in range(len(msgs) - 1, -1, -1)
            if msgs[i].role == "user" and (p := msgs[i].compaction()) is not None and p.tail_start_id
        ),
        None,
    )
    if marker_index is None:
        return msgs
    marker = msgs[marker_index]
    tail_start_id = marker.compaction().tail_start_id  # type: ignore[union-attr]
    summary_index = next(
        (
            i
            for i in range(marker_index + 1, len(msgs))
            if isinstance(msgs[i].info, AssistantMessage)
            and msgs[i].info.summary  # type: ignore[union-attr]
            and msgs[i].info.parent_id == marker.id  # type: ignore[union-attr]
        ),
        None,
    )
    tail_index = next((i for i, m in enumerate(msgs) if m.id == tail_start_id), None)
    if summary_index is None or tail_index is None or not tail_index < marker_index < summary_index:
        return msgs
    return msgs[marker_index : summary_index + 1] + msgs[tail_index:marker_index] + msgs[summary_index + 1 :]


@dataclass(frozen=True)
class Latest:
    """The newest user, assistant and finished assistant by id (the window is not in id order),
    and the compaction tasks newer than the last finished assistant, oldest first."""

    user: WithParts | None = None
    assistant: WithParts | None = None
    finished: WithParts | None = None
    tasks: list[CompactionPart] = field(default_factory=list)


def latest(msgs: Iterable[WithParts]) -> Latest:
    msgs = list(msgs)
    users = [m for m in msgs if m.role == "user"]
    assistants = [m for m in msgs if m.role == "assistant"]
    finished_ones = [m for m in assistants if m.info.finish]  # type: ignore[union-attr]
    user = max(users, key=lambda m: m.id, default=None)
    assistant = max(assistants, key=lambda m: m.id, default=None)
    finished = max(finished_ones, key=lambda m: m.id, default=None)
    tasks = [
        part
        for m in sorted(msgs, key=lambda m: m.id)
        if finished is None or m.id > finished.id
        for part in m.parts
        if isinstance(part, CompactionPart)
    ]
    return Latest(user=user, assistant=assistant, finished=finished, tasks=tasks)


# --- conversion to chat-completions messages ------------------------------------------------


def _file_item(mime: str, filename: str | None, url: str) -> dict[str, Any]:
    if mime.startswith("image/"):
        return {"type": "image_url", "image_url": {"url": url}}
    return {"type": "file", "file": {"file_data": url, "filename": filename or "file"}}


def _user_message(msg: WithParts, strip_media: bool) -> dict[str, Any] | None:
    items: list[dict[str, Any]] = []
    for part in msg.parts:
        if isinstance(part, TextPart):
            if part.text and not part.ignored:
                items.append({"type": "text", "text": part.text})
        elif isinstance(part, FilePart):
            if part.mime in TEXTUAL_FILE_MIMES:
                continue
            if strip_media and is_media(part.mime):
                items.append({"type": "text", "text": attached_text(part.mime, part.filename)})
            else:
                items.append(_file_item(part.mime, part.filename, part.url))
        elif isinstance(part, CompactionPart):
            items.append({"type": "text", "text": SUMMARY_MARKER_TEXT})
    if not items:
        return None
    if all(item["type"] == "text" for item in items):
        return {"role": "user", "content": "\n\n".join(item["text"] for item in items)}
    return {"role": "user", "content": items}


def assistant_included(msg: WithParts) -> bool:
    """An assistant with an error is left out, unless the user aborted it after it said something."""
    info = msg.info
    if not isinstance(info, AssistantMessage) or info.error is None:
        return True
    return info.error.name == "MessageAbortedError" and any(
        not isinstance(p, StepStartPart | ReasoningPart) for p in msg.parts
    )


def tool_result_text(part: ToolPart, max_chars: int | None) -> str:
    """What the model is told a tool call returned."""
    state = part.state
    if state.status == "completed":
        if state.time.compacted:
            return PRUNED_PLACEHOLDER
        return truncate_output(state.output, max_chars)
    if state.status == "error":
        # An interrupted command still produced output worth showing as its result.
        partial = state.metadata.get("output")
        if state.metadata.get("interrupted") is True and isinstance(partial, str):
            return truncate_output(partial, max_chars)
        return state.error or ""
    return INTERRUPTED_TEXT


def _split_steps(parts: list[Any]) -> list[list[Any]]:
    steps: list[list[Any]] = [[]]
    for part in parts:
        if isinstance(part, StepStartPart):
            if steps[-1]:
                steps.append([])
        else:
            steps[-1].append(part)
    return [step for step in steps if step]


def _assistant_messages(
    msg: WithParts, target_model: str | None, strip_media: bool, max_chars: int | None
) -> list[dict[str, Any]]:
    model = msg.info.model
    other_model = target_model is not None and model is not None and model != target_model
    out: list[dict[str, Any]] = []
    for step in _split_steps(msg.parts):
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []
        media: list[dict[str, Any]] = []
        for part in step:
            if isinstance(part, TextPart) and part.text:
                texts.append(part.text)
            elif isinstance(part, ReasoningPart) and other_model and part.text.strip():
                # Another model's reasoning cannot be replayed as reasoning; it is still context.
                texts.append(part.text)
            elif isinstance(part, ToolPart):
                calls.append(
                    {
                        "id": part.call_id,
                        "type": "function",
                        "function": {"name": part.tool, "arguments": json.dumps(part.state.input)},
                    }
                )
                results.append(
                    {
                        "role": "tool",
                        "tool_call_id": part.call_id,
                        "content": tool_result_text(part, max_chars),
                    }
                )
                keep_media = (
                    part.state.status == "completed" and not part.state.time.compacted and not strip_media
                )
                if keep_media:
                    media += [
                        _file_item(a.mime, a.filename, a.url)
                        for a in part.state.attachments
                        if is_media(a.mime)
                    ]
        if not texts and not calls:
            continue
        message: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts) if texts else None}
        if calls:
            message["tool_calls"] = calls
        out.append(message)
        out += results
        if media:
            # Chat-completions tool messages carry text only; the media follow as the user's.
            out.append({"role": "user", "content": [{"type": "text", "text": TOOL_MEDIA_TEXT}, *media]})
    return out


def to_model_messages(
    msgs: Iterable[WithParts],
    *,
    target_model: str | None = None,
    strip_media: bool = False,
    tool_output_max_chars: int | None = None,
) -> list[dict[str, Any]]:
    """The records as OpenAI chat-completions messages (reference §4.3, adapted)."""
    out: list[dict[str, Any]] = []
    for msg in msgs:
        if not msg.parts:
            continue
        if msg.role == "user":
            user = _user_message(msg, strip_media)
            if user is not None:
                out.append(user)
        elif assistant_included(msg):
            out += _assistant_messages(msg, target_model, strip_media, tool_output_max_chars)
    return out
