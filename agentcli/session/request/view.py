"""What the model sees, in one place: the window → the model's view of it → request messages → size.

- ``model_view``: the window as the model should see it (failed markers and replayed originals out).
- ``to_model_messages``: records → OpenAI chat-completions messages (what litellm takes).
- ``convert``: the same, message by message, each sized once, so any run of messages (a turn, a
  tail, the whole window) is sized from prefix sums without converting again (``Converted``).
- ``View``: the system prompt and the plugin transforms (``chat_system_transform``,
  ``chat_messages_transform``) around both kinds of request — the chat request (``request``) and
  the summary request (``summary_request``) — each sized once and the size kept on the result.

Sizes use the one estimator, ``agentcli.llm.tokens`` (OpenCode's chars/4 of the JSON, the same
whether litellm is loaded or not).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli.llm.replay import keeps_reasoning
from agentcli.llm.tokens import estimate_request, json_text
from agentcli.session.capabilities import modality
from agentcli.session.request import system
from agentcli.session.request.history import INTERRUPTED_TEXT, completes_compaction
from agentcli.session.request.sizes import Converted, Entry, entry
from agentcli.store.artifacts import render as render_carryover
from agentcli.store.records import (
    AssistantMessage,
    CarryoverPart,
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
TOOL_MEDIA_TEXT = "Attached media from tool result:"
# File parts whose content was already turned into text when the user attached them.
TEXTUAL_FILE_MIMES = frozenset({"text/plain", "application/x-directory"})

ChatMessage = dict[str, Any]


def attached_text(mime: str, filename: str | None) -> str:
    """The text that stands in for a media file the model will not get."""
    return f"[Attached {mime}: {filename or 'file'}]"


TOOL_INPUT_MAX_CHARS = 50 * 1024  # a call's arguments longer than this go back to the model cut
TOOL_INPUT_KEEP_CHARS = 2_000  # ... each long value to its start and a note


def capped_input(args: dict[str, Any]) -> dict[str, Any]:
    """A tool call's arguments as the model is sent them back: a huge value (a 20 MB ``write``
    content) is not repeated in every later request, only its start and how much was left out.
    Deterministic, so the request's prefix stays the same from step to step."""
    if len(json_text(args)) <= TOOL_INPUT_MAX_CHARS:
        return args
    return {key: _cut_value(value) for key, value in args.items()}


def tool_arguments(args: dict[str, Any]) -> str:
    """``capped_input`` as the JSON text of a tool call (encoded once when nothing is cut)."""
    text = json.dumps(args)
    return text if len(text) <= TOOL_INPUT_MAX_CHARS else json.dumps(capped_input(args))


def _cut_value(value: Any) -> Any:
    if isinstance(value, str) and len(value) > TOOL_INPUT_KEEP_CHARS:
        left = len(value) - TOOL_INPUT_KEEP_CHARS
        return f"{value[:TOOL_INPUT_KEEP_CHARS]}… [{left:,} more characters, not repeated here]"
    if isinstance(value, dict):
        return {key: _cut_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_cut_value(item) for item in value]
    return value


def truncate_output(text: str, max_chars: int | None) -> str:
    if max_chars is None or len(text) <= max_chars:
        return text
    return (
        text[:max_chars] + f"\n[Tool output truncated for compaction: omitted {len(text) - max_chars} chars]"
    )


# --- the model's view of the window ---------------------------------------------------------


def model_view(window: Sequence[WithParts]) -> list[WithParts]:
    """The window as the model should see it: a marker whose summary failed (or is still being
    written) is not sent as a bare "What did we do so far?", nor the summary itself, and a question
    replayed after an overflow compaction is sent once
    (its original and the failed answer fall inside the kept tail's range)."""
    completed = {m.info.parent_id for m in window if completes_compaction(m)}  # type: ignore[union-attr]
    replayed = {p.replay_of for m in window for p in m.parts if isinstance(p, TextPart) and p.replay_of}
    out = []
    for msg in window:
        if isinstance(msg.info, AssistantMessage) and msg.info.summary and not completes_compaction(msg):
            continue  # a summary that failed or never finished says nothing the model needs
        if msg.id in replayed or (isinstance(msg.info, AssistantMessage) and msg.info.parent_id in replayed):
            continue
        if msg.role == "user" and msg.id not in completed and msg.compaction() is not None:
            parts = [p for p in msg.parts if not isinstance(p, CompactionPart)]
            if not parts:
                continue
            msg = msg.model_copy(update={"parts": parts})
        out.append(msg)
    return out


# --- conversion to chat-completions messages ------------------------------------------------


def _file_item(mime: str, filename: str | None, url: str) -> dict[str, Any]:
    if mime.startswith("image/"):
        return {"type": "image_url", "image_url": {"url": url}}
    return {"type": "file", "file": {"file_data": url, "filename": filename or "file"}}


def unsupported_text(mime: str, filename: str | None, url: str, media: frozenset[str] | None) -> str | None:
    """OpenCode's words in place of a file the model cannot read (``ProviderTransform.unsupportedParts``):
    an empty image, or media of a modality the model does not take (``media``: those it takes; None:
    every one). None: the file goes as it is."""
    _, base64, data = url.partition(";base64,")
    if mime.startswith("image/") and url.startswith("data:") and base64 and not data:
        return "ERROR: Image file is empty or corrupted. Please provide a valid image."
    kind = modality(mime)
    if media is None or kind is None or kind in media:
        return None
    name = f'"{filename}"' if filename else kind
    return f"ERROR: Cannot read {name} (this model does not support {kind} input). Inform the user."


def _media_item(mime: str, filename: str | None, url: str, media: frozenset[str] | None) -> dict[str, Any]:
    """A file as the request carries it: the file, or OpenCode's error text where the model cannot read it."""
    refused = unsupported_text(mime, filename, url, media)
    return {"type": "text", "text": refused} if refused is not None else _file_item(mime, filename, url)


def _user_message(
    msg: WithParts, strip_media: bool, media: frozenset[str] | None = None
) -> ChatMessage | None:
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
                items.append(_media_item(part.mime, part.filename, part.url, media))
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


def partial_output(part: ToolPart) -> str | None:
    """What an interrupted call printed before it was cut short, if the tool kept it."""
    partial = part.state.meta.output
    return partial if part.state.status == "error" and part.state.interrupted else None


def tool_result_text(part: ToolPart, max_chars: int | None) -> str:
    """What the model is told a tool call returned."""
    state = part.state
    if state.status == "completed":
        if state.time.compacted:
            return PRUNED_PLACEHOLDER
        return truncate_output(state.output, max_chars)
    if state.status == "error":
        # An interrupted command still produced output worth showing as its result.
        partial = partial_output(part)
        return truncate_output(partial, max_chars) if partial is not None else state.error or ""
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
    msg: WithParts,
    target_model: str | None,
    strip_media: bool,
    max_chars: int | None,
    media_ok: frozenset[str] | None = None,
) -> list[ChatMessage]:
    model = msg.info.model
    other_model = target_model is not None and model is not None and model != target_model
    out: list[ChatMessage] = []
    for step in _split_steps(msg.parts):
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        results: list[ChatMessage] = []
        media: list[dict[str, Any]] = []
        thinking = [] if other_model else _thinking_blocks(step)
        replayed = "" if other_model or not keeps_reasoning(target_model) else _plain_reasoning(step)
        for part in step:
            if isinstance(part, TextPart) and part.text:
                texts.append(part.text)
            elif isinstance(part, ReasoningPart) and other_model and part.text.strip():
                # Another model's reasoning cannot be replayed as reasoning; it is still context.
                texts.append(part.text)
            elif isinstance(part, CarryoverPart) and (carried := render_carryover(part.carryover)):
                texts.append(carried)  # a summary's ledger and the user's words: after its text
            elif isinstance(part, ToolPart):
                arguments = tool_arguments(part.state.input)
                calls.append(
                    {
                        "id": part.call_id,
                        "type": "function",
                        "function": {"name": part.tool, "arguments": arguments},
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
                        _media_item(a.mime, a.filename, a.url, media_ok)
                        for a in part.state.attachments
                        if is_media(a.mime)
                    ]
        if not texts and not calls:
            continue
        message: ChatMessage = {"role": "assistant", "content": "\n\n".join(texts) if texts else None}
        if thinking:
            message["thinking_blocks"] = thinking
        if replayed:
            message["reasoning_content"] = replayed  # DeepSeek, Kimi: their reasoning goes back
        if calls:
            message["tool_calls"] = calls
        out.append(message)
        out += results
        if media:
            # Chat-completions tool messages carry text only; the media follow as the user's.
            out.append({"role": "user", "content": [{"type": "text", "text": TOOL_MEDIA_TEXT}, *media]})
    return out


def _plain_reasoning(step: list[Any]) -> str:
    """The step's reasoning text that no provider sealed (sealed reasoning goes as thinking blocks)."""
    return "".join(
        p.text for p in step if isinstance(p, ReasoningPart) and not p.metadata.get("anthropic") and p.text
    )


def _thinking_blocks(step: list[Any]) -> list[dict[str, Any]]:
    """The model's own sealed reasoning of one step, to send back exactly as it came (Anthropic
    verifies the signature, and wants it before the step's tool calls when thinking is on)."""
    blocks: list[dict[str, Any]] = []
    for part in step:
        sealed = part.metadata.get("anthropic") if isinstance(part, ReasoningPart) else None
        if not isinstance(sealed, dict):
            continue
        if sealed.get("signature"):
            blocks.append({"type": "thinking", "thinking": part.text, "signature": sealed["signature"]})
        elif sealed.get("redactedData"):
            blocks.append({"type": "redacted_thinking", "data": sealed["redactedData"]})
    return blocks


def message_to_chat(
    msg: WithParts,
    *,
    target_model: str | None = None,
    strip_media: bool = False,
    tool_output_max_chars: int | None = None,
    media: frozenset[str] | None = None,
) -> list[ChatMessage]:
    """One record as the chat messages it becomes (none, one, or several for a multi-step answer).
    ``media``: the modalities the model takes (``capabilities.media_accepted``); a file of another
    goes as OpenCode's error text (``unsupported_text``). None: every file goes."""
    if not msg.parts:
        return []
    if msg.role == "user":
        user = _user_message(msg, strip_media, media)
        return [user] if user is not None else []
    if not assistant_included(msg):
        return []
    return _assistant_messages(msg, target_model, strip_media, tool_output_max_chars, media)


def to_model_messages(
    msgs: Iterable[WithParts],
    *,
    target_model: str | None = None,
    strip_media: bool = False,
    tool_output_max_chars: int | None = None,
    media: frozenset[str] | None = None,
) -> list[ChatMessage]:
    """The records as OpenAI chat-completions messages (reference §4.3, adapted)."""
    out: list[ChatMessage] = []
    for msg in msgs:
        out += message_to_chat(
            msg,
            target_model=target_model,
            strip_media=strip_media,
            tool_output_max_chars=tool_output_max_chars,
            media=media,
        )
    return out


# --- sizes ---------------------------------------------------------------------------------


def convert(
    msgs: Iterable[WithParts], *, target_model: str | None = None, reuse: dict[str, Entry] | None = None
) -> Converted:
    """``msgs`` converted and sized once each; ``reuse`` supplies entries already converted."""
    entries = []
    for msg in msgs:
        known = reuse.get(msg.id) if reuse else None
        entries.append(
            known if known is not None else entry(msg, message_to_chat(msg, target_model=target_model))
        )
    return Converted(entries)


def estimate_messages(msgs: Sequence[WithParts]) -> int:
    """The estimated size of messages as the model would get them (unstripped, like OpenCode)."""
    return convert(msgs).tokens()


# --- requests --------------------------------------------------------------------------------

REMINDER_OPEN, REMINDER_CLOSE = "<system-reminder>", "</system-reminder>"


def reminder_message(reminders: Sequence[str]) -> ChatMessage:
    """Plugins' per-step text as one user message after the newest one (where Claude Code puts its
    reminders): changing it every step costs the provider's cache nothing before it."""
    return {"role": "user", "content": "\n".join([REMINDER_OPEN, *reminders, REMINDER_CLOSE])}


def is_reminder(message: ChatMessage) -> bool:
    content = message.get("content")
    return message.get("role") == "user" and isinstance(content, str) and content.startswith(REMINDER_OPEN)


@dataclass(frozen=True)
class RequestView:
    """A request as it will be sent, sized once when it was built."""

    messages: list[ChatMessage]
    tokens: int
    system: list[str] = field(default_factory=list)


@dataclass
class View:
    """The system prompt and plugin transforms around the requests of one session loop.

    ``conversions`` counts whole windows converted (``window``), so a test or benchmark can check
    that one compaction converts its window once."""

    directory: Path
    config: Any  # agentcli.config.Config
    plugins: Any  # agentcli.plugins.manager.Plugins
    global_config_dir: Path | None = None
    confine: Path | None = None  # an untrusted project's root: its instruction links outside stay out
    conversions: int = 0
    head: str | None = None  # the agent's prompt (``agents.system_head``); None: the build prompt
    prompts: system.Frozen = field(init=False)

    def __post_init__(self) -> None:
        self.prompts = system.Frozen(
            self.directory,
            extra_instructions=list(self.config.instructions),
            global_dirs=[d for d in [self.global_config_dir] if d],
            confine=self.confine,
        )

    def new_turn(self, session_id: str) -> None:
        """A user turn starts: instruction files are read again for its requests."""
        self.prompts.new_turn(session_id)

    def system(self, session_id: str, model: str, *, purpose: str = "chat") -> list[str]:
        """The agent's system prompt blocks (frozen per session) after ``chat_system_transform``."""
        return self._system_transform(session_id, model, self._blocks(session_id, model), purpose)[0]

    def _blocks(self, session_id: str, model: str) -> list[str]:
        return self.prompts.blocks(session_id, model, self.head)

    def _system_transform(
        self, session_id: str, model: str, blocks: list[str], purpose: str
    ) -> tuple[list[str], list[str]]:
        """The system blocks and the reminders plugins want after the newest message."""
        from agentcli.plugins.host import transform_system

        return transform_system(self.plugins, blocks, session_id=session_id, model=model, purpose=purpose)

    def transformed(
        self, session_id: str, msgs: Sequence[WithParts], *, purpose: str = "chat"
    ) -> list[WithParts]:
        """A copy of ``msgs`` after ``chat_messages_transform`` (plugins may edit it freely)."""
        if not self.plugins.hook.chat_messages_transform.get_hookimpls():
            return list(msgs)  # nothing to transform: no deep copy of a long window
        out = {"messages": copy.deepcopy(list(msgs))}
        self.plugins.hook.chat_messages_transform(
            input={"session_id": session_id, "purpose": purpose}, output=out
        )
        return list(out["messages"])

    def window(self, msgs: Iterable[WithParts], *, target_model: str | None = None) -> Converted:
        """A window converted and sized once (for compaction: sizes before/after, the tail)."""
        self.conversions += 1
        return convert(msgs, target_model=target_model)

    def request(
        self,
        session_id: str,
        window: Sequence[WithParts],
        *,
        model: str,
        tools: list[dict[str, Any]] | None = None,
        media: frozenset[str] | None = None,
    ) -> RequestView:
        """The chat request for the next step: system prompt, the transformed model view, sized once.
        ``media``: the modalities the model takes (None: every file goes)."""
        visible = self.transformed(session_id, model_view(window))
        blocks, reminders = self._system_transform(session_id, model, self._blocks(session_id, model), "chat")
        messages = [{"role": "system", "content": b} for b in blocks] + to_model_messages(
            visible, target_model=model, media=media
        )
        if reminders:  # what changes every step goes last: the prefix before it stays cacheable
            messages.append(reminder_message(reminders))
        return RequestView(messages, estimate_request(messages, tools), blocks)

    def summary_request(
        self,
        session_id: str,
        *,
        model: str,
        head: Sequence[WithParts],
        build: Callable[[Sequence[WithParts]], list[ChatMessage]],
    ) -> RequestView:
        """The summary request: ``build`` writes ``head`` (after ``chat_messages_transform``) out as
        [system, user] messages; the system prompt then goes through ``chat_system_transform``.
        Sized once."""
        built = build(self.transformed(session_id, head, purpose="compaction"))
        prompts = [m["content"] for m in built if m["role"] == "system"]
        blocks = self._system_transform(session_id, model, prompts, "compaction")[0]
        messages = [{"role": "system", "content": b} for b in blocks] + [
            m for m in built if m["role"] != "system"
        ]
        return RequestView(messages, estimate_request(messages, None), blocks)
