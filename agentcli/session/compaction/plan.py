"""What a compaction decides, kept apart from its I/O (``compaction.py``).

The compactor hands these functions the window it loaded and does what they decide: which messages
are summarised and which stay verbatim (``select_tail``), what the summary request says
(``serialize_for_summary``, ``build_summary_request``), what is written after the summary
(``continue_text``, ``replay_parts``), and how to compact without a model when even a shrunk summary
request does not fit (``shrink_for_retry``, ``fallback_compaction``). Reference §3 and §14.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from typing import Any, TypeGuard

from agentcli.session.request.view import (
    TEXTUAL_FILE_MIMES,
    Converted,
    assistant_included,
    attached_text,
    capped_input,
    convert,
    partial_output,
    tool_result_text,
)
from agentcli.store.compactions import completed_compactions
from agentcli.store.records import (
    AssistantMessage,
    CompactionPart,
    FilePart,
    TextPart,
    ToolPart,
    WithParts,
    is_media,
)

TOOL_OUTPUT_MAX_CHARS = 2_000  # per tool result in the summariser's input
RETRY_TOOL_OUTPUT_MAX_CHARS = 500
# A retry also cuts each user message to this many characters (halved again on each later retry):
# a huge paste would otherwise make every retry the same request.
RETRY_USER_TEXT_MAX_CHARS = 20_000
DEFAULT_TAIL_TURNS = 2
PRESERVE_MIN_TOKENS = 2_000
PRESERVE_MAX_TOKENS = 15_000

CONTINUE_TEXT = (
    "Continue if you have next steps, or stop and ask for clarification if you are unsure how to proceed."
)
OVERFLOW_NOTE = (
    "The previous request was larger than the provider accepts, most likely because of large media "
    "attachments. The conversation has been summarised and media files were removed from the context. "
    "If the user was asking about attached images or files, tell them the attachments were too large "
    "to process and suggest trying again with smaller or fewer files."
)
_HISTORY_INTRO = "The conversation to summarise, written out as text:"
_EMPTY_HISTORY = "(no messages since the previous summary)"
_MERGE_INSTRUCTION = (
    "The block above is the summary written the last time this conversation was shortened. "
    "Merge it with the conversation above into one summary: keep what is still true, drop what "
    "the conversation has made stale, and add what is new."
)
_ARGUMENTS = json.JSONEncoder(ensure_ascii=False)  # built once: json.dumps with options builds one per call
FOCUS_LINE = "The user asked the summary to focus on: {focus}"

# The deterministic summary of ``fallback_compaction``: enough to go on, bounded in size.
_REQUEST_CHARS = 300
_REPLY_CHARS = 1_000
_MAX_REQUESTS = 50
_MAX_FILES = 100


@cache
def prompt(name: str) -> str:
    return files("agentcli.session").joinpath("prompts", name).read_text(encoding="utf-8").strip()


def default_preserve_budget(usable: int) -> int:
    """Estimated tokens of recent turns kept verbatim after a compaction, when config does not say."""
    return min(PRESERVE_MAX_TOKENS, max(PRESERVE_MIN_TOKENS, usable // 4))


def failure_cause(summary: AssistantMessage) -> str:
    """A failed summary's cause in a few words: HTTP status and the provider's first line."""
    error = summary.error
    if error is None:
        return "no reply"
    first = (error.message.strip().splitlines() or [error.name])[0]
    first = first if len(first) <= 160 else first[:159] + "…"
    return f"HTTP {error.status}: {first}" if error.status else first


# --- earlier compactions -------------------------------------------------------------------------


def summary_of(msg: WithParts, marker_id: str) -> bool:
    """Whether ``msg`` is a summary (finished or not) of the marker ``marker_id``."""
    return isinstance(msg.info, AssistantMessage) and msg.info.summary and msg.info.parent_id == marker_id


def _starts_turn(msg: WithParts) -> bool:
    return msg.role == "user" and msg.compaction() is None


def previous_summary(history: Sequence[WithParts]) -> str | None:
    """The text of the newest completed summary, to be merged into the next one."""
    pairs = completed_compactions(history)
    if not pairs:
        return None
    texts = (p.text.strip() for p in pairs[-1][1].parts if isinstance(p, TextPart))
    return "\n\n".join(t for t in texts if t).strip() or None


def hide_completed(history: Sequence[WithParts]) -> list[WithParts]:
    """The history without earlier marker/summary pairs: they are neither summarised nor sized."""
    hidden = {m.id for pair in completed_compactions(history) for m in pair}
    return [m for m in history if m.id not in hidden]


# --- the verbatim tail --------------------------------------------------------------------


@dataclass(frozen=True)
class Selection:
    head: list[WithParts]  # summarised
    tail_start_id: str | None  # first message kept verbatim; None: nothing kept


def _turns(history: Sequence[WithParts]) -> list[tuple[int, int]]:
    """(start, end) of each turn: a real user message and everything up to the next one."""
    starts = [i for i, m in enumerate(history) if _starts_turn(m)]
    ends = [*starts[1:], len(history)] if starts else []  # no user turn (just compacted): none
    return list(zip(starts, ends, strict=True))


def _split_turn(sizes: Converted, start: int, end: int, remaining: int) -> int | None:
    """The earliest start inside a turn whose suffix fits what is left of the budget."""
    if remaining <= 0 or end - start <= 1:
        return None
    return next((s for s in range(start + 1, end) if sizes.tokens(s, end) <= remaining), None)


def unanswered_question(history: Sequence[WithParts]) -> int | None:
    """The index of the user's newest message if the model has not answered it yet (no assistant
    step after it finished without error): a compaction must keep it verbatim, not summarise it."""
    start = _newest_turn(history)
    if start is None:
        return None
    answered = any(_reply(m) and m.info.finish for m in history[start + 1 :])  # type: ignore[union-attr]
    return None if answered else start


def _newest_turn(history: Sequence[WithParts]) -> int | None:
    """The index of the newest real user message (the start of the newest turn)."""
    return next((i for i in range(len(history) - 1, -1, -1) if _starts_turn(history[i])), None)


def _reply(m: WithParts) -> bool:
    """A step of the model's answer that did not fail (a summary is not an answer)."""
    return isinstance(m.info, AssistantMessage) and not m.info.summary and m.info.error is None


def question_in_progress(visible: Sequence[WithParts], head: Sequence[WithParts]) -> WithParts | None:
    """The user's newest message when ``head`` summarises it while its turn is still in progress
    (tool steps, no answer yet): unanswered_question counts a tool step as an answer, so with a
    small tail the question would reach the model only inside the summary. An automatic compaction
    re-sends it verbatim after the summary instead of "continue", its turn's work being in the summary."""
    start = _newest_turn(visible)
    if start is None:
        return None
    question = visible[start]
    if question.id not in {m.id for m in head}:
        return None  # kept verbatim in the tail already
    if not any(isinstance(p, TextPart) and p.text and not p.synthetic for p in question.parts):
        return None  # agentcli's own "continue" nudge, not the user's words
    answered = any(
        _reply(m) and m.info.finish not in (None, "tool-calls", "unknown")  # type: ignore[union-attr]
        for m in visible[start + 1 :]
    )
    return None if answered else question


def select_tail(
    history: Sequence[WithParts],
    *,
    tail_turns: int | None,
    budget: int,
    sizes: Converted | None = None,
    keep_question: bool = False,
) -> Selection:
    """Keep the newest ``tail_turns`` turns verbatim as far as ``budget`` (estimated tokens) allows;
    the rest is the head to summarise. ``keep_question``: the user's newest message, if not
    answered yet, is kept whatever ``tail_turns`` and ``budget`` say. ``history`` must already be
    without completed pairs; ``sizes``: ``history`` already converted (else converted here). Linear."""
    chosen = _select_tail(history, tail_turns=tail_turns, budget=budget, sizes=sizes)
    question = unanswered_question(history) if keep_question else None
    if question is None or (chosen.tail_start_id is not None and len(chosen.head) <= question):
        return chosen
    return Selection(list(history[:question]), history[question].id)


def _select_tail(
    history: Sequence[WithParts], *, tail_turns: int | None, budget: int, sizes: Converted | None
) -> Selection:
    everything = Selection(list(history), None)
    limit = DEFAULT_TAIL_TURNS if tail_turns is None else tail_turns
    if limit <= 0:
        return everything
    sized = sizes if sizes is not None else convert(history)
    total = 0
    keep: int | None = None
    for start, end in reversed(_turns(history)[-limit:]):
        size = sized.tokens(start, end)
        if total + size <= budget:
            total += size
            keep = start
            continue
        split = _split_turn(sized, start, end, budget - total)
        if split is not None:
            keep = split
        break
    if not keep:  # None, or the tail would be the whole history: summarise it all
        return everything
    return Selection(list(history[:keep]), history[keep].id)


def choose_replay(messages: Sequence[WithParts], parent_id: str) -> tuple[WithParts | None, list[WithParts]]:
    """After a provider overflow: the last real user message before the marker is re-sent after the
    summary, and only what came before it is summarised. No replay when nothing would be left."""
    index = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].id == parent_id), None)
    if index is None or messages[index].role != "user":
        raise ValueError(f"Compaction parent must be a user message: {parent_id}")
    for i in range(index - 1, -1, -1):
        if _starts_turn(messages[i]):
            before = list(messages[:i])
            if any(_starts_turn(m) for m in before):
                return messages[i], before
            break
    return None, list(messages)


# --- the summary request ------------------------------------------------------------------


def _cut(text: str, max_chars: int | None) -> str:
    if max_chars is None or len(text) <= max_chars:
        return text
    return f"{text[:max_chars]}… [{len(text) - max_chars:,} more characters of this message left out]"


def _user_lines(msg: WithParts, max_chars: int | None = None) -> list[str]:
    lines: list[str] = []
    for part in msg.parts:
        if isinstance(part, TextPart):
            # The synthetic "continue" nudge after a compaction says nothing about the work.
            if part.text and not part.ignored and not part.compaction_continue:
                lines.append(f"[User]: {_cut(part.text, max_chars)}")
        elif isinstance(part, FilePart) and part.mime not in TEXTUAL_FILE_MIMES:
            lines.append(f"[User]: {attached_text(part.mime, part.filename)}")
    return lines


def _tool_lines(part: ToolPart, max_chars: int) -> list[str]:
    state = part.state
    lines = [f"[Assistant tool call]: {part.tool}({_ARGUMENTS.encode(capped_input(state.input))})"]
    failed = state.status == "error" and partial_output(part) is None
    lines.append(f"[{'Tool error' if failed else 'Tool result'}]: {tool_result_text(part, max_chars)}")
    if state.status == "completed" and not state.time.compacted:
        lines += [f"[Tool result]: {attached_text(a.mime, a.filename)}" for a in state.attachments]
    return lines


def _assistant_lines(msg: WithParts, max_chars: int) -> list[str]:
    if msg.info.summary or not assistant_included(msg):  # type: ignore[union-attr]
        return []
    lines: list[str] = []
    for part in msg.parts:
        if isinstance(part, TextPart) and part.text.strip():
            lines.append(f"[Assistant]: {part.text}")
        elif isinstance(part, ToolPart):
            lines += _tool_lines(part, max_chars)
    return lines


def serialize_for_summary(
    head: Sequence[WithParts],
    tool_output_max_chars: int = TOOL_OUTPUT_MAX_CHARS,
    user_text_max_chars: int | None = None,
) -> str:
    """The head as plain text, one block per message. Text instead of tool-call blocks, because some
    providers reject tool blocks in a request that offers no tools. Markers and summaries left out."""
    blocks = []
    for msg in head:
        lines = (
            _user_lines(msg, user_text_max_chars)
            if msg.role == "user"
            else _assistant_lines(msg, tool_output_max_chars)
        )
        if lines:
            blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def build_summary_request(
    head_text: str,
    previous_summary: str | None,
    plugin_context: Sequence[str],
    focus: str | None,
    prompt_override: str | None,
) -> list[dict[str, Any]]:
    """The two messages of a summary request: [system, user]; the caller sends them with no tools.

    A plugin's ``prompt_override`` replaces the instruction and template and, as in OpenCode,
    makes the plugin context strings moot; the history, previous summary and focus stay."""
    sections = [f"{_HISTORY_INTRO}\n<conversation>\n{head_text.strip() or _EMPTY_HISTORY}\n</conversation>"]
    if previous_summary:
        sections.append(f"<previous-summary>\n{previous_summary}\n</previous-summary>\n{_MERGE_INSTRUCTION}")
    sections.append(prompt_override if prompt_override is not None else prompt("compaction_template.txt"))
    if focus and focus.strip():
        sections.append(FOCUS_LINE.format(focus=focus.strip()))
    if prompt_override is None:
        sections += [c for c in plugin_context if c.strip()]
    return [
        {"role": "system", "content": prompt("compaction_system.txt")},
        {"role": "user", "content": "\n\n".join(sections)},
    ]


# --- after the summary --------------------------------------------------------------------


def continue_text(overflow: bool) -> str:
    """The synthetic user message that lets an automatic compaction carry on with the work."""
    return f"{OVERFLOW_NOTE}\n\n{CONTINUE_TEXT}" if overflow else CONTINUE_TEXT


def replay_parts(replay: WithParts) -> list[dict[str, Any]]:
    """The parts to copy onto the re-sent user message, as part fields without their ids (add
    ``id``, ``session_id`` and ``message_id`` and validate as a ``Part``). Media become a text note:
    they are the likely cause of the overflow."""
    out: list[dict[str, Any]] = []
    for part in replay.parts:
        if isinstance(part, CompactionPart):
            continue
        if isinstance(part, FilePart) and is_media(part.mime):
            out.append({"type": "text", "text": attached_text(part.mime, part.filename)})
        else:
            out.append(part.model_dump(exclude={"id", "session_id", "message_id"}))
    return out


# --- when the summary request cannot be made to fit ---------------------------------------


def shrink_for_retry(head: Sequence[WithParts], attempt: int) -> tuple[list[WithParts], int]:
    """The head and tool-output cap for retry ``attempt`` of a summary request that was too long:
    0 is the first try; 1 caps outputs at 500 chars; 2 also keeps only the newest half, 3 the newest
    quarter, and so on (never less than one message). Give up when the head stops shrinking."""
    if attempt < 0:
        raise ValueError(f"attempt must be 0 or more, not {attempt}")
    if attempt == 0:
        return list(head), TOOL_OUTPUT_MAX_CHARS
    keep = max(1, -(-len(head) // 2 ** (attempt - 1)))  # ceil(len / 2^(attempt-1))
    return list(head[len(head) - keep :]) if head else [], RETRY_TOOL_OUTPUT_MAX_CHARS


def retry_user_text_cap(attempt: int) -> int | None:
    """How long one user message may be in the summary request of ``attempt``: whole at first, then
    ``RETRY_USER_TEXT_MAX_CHARS`` halved on each later retry (so a retry is never the same request)."""
    if attempt <= 0:
        return None
    return max(1_000, RETRY_USER_TEXT_MAX_CHARS // 2 ** (attempt - 1))


@dataclass(frozen=True)
class FallbackPlan:
    summary_text: str
    prune_part_ids: list[str] = field(default_factory=list)  # tool parts to stamp as compacted
    tail_start_id: str | None = None  # first message kept after the summary; None: nothing kept


def _clearable(part: object) -> TypeGuard[ToolPart]:
    return isinstance(part, ToolPart) and part.state.status == "completed" and not part.state.time.compacted


def _with_outputs_cleared(msg: WithParts) -> WithParts:
    """A copy of ``msg`` as the model sees it once its tool outputs are stamped as compacted."""
    if not any(_clearable(p) for p in msg.parts):
        return msg
    parts = [
        p.model_copy(
            update={
                "state": p.state.model_copy(update={"time": p.state.time.model_copy(update={"compacted": 1})})
            }
        )
        if _clearable(p)
        else p
        for p in msg.parts
    ]
    return msg.model_copy(update={"parts": parts})


def fallback_compaction(
    history: Sequence[WithParts],
    *,
    budget: int,
    tail_turns: int | None,
    sizes: Converted | None = None,
    keep_question: bool = False,
) -> FallbackPlan:
    """A compaction made without a model. The newest turns that fit ``budget`` stay intact (as
    ``select_tail`` picks them); older turns stay with their tool outputs cleared, and the oldest
    are left out until the rest fits ``budget``. The summary is built from the records.
    ``sizes``: ``history`` (or a superset) already converted."""
    earlier = previous_summary(history)
    msgs = hide_completed(history)
    sized = convert(msgs, reuse=sizes.index() if sizes is not None else None)
    intact = select_tail(msgs, tail_turns=tail_turns, budget=budget, sizes=sized, keep_question=keep_question)
    intact_start = len(intact.head) if intact.tail_start_id else len(msgs)
    # Sizes as the model would see them once the outputs before the intact tail are cleared.
    per_message = [
        convert([_with_outputs_cleared(e.msg)]).entries[0].tokens
        if i < intact_start and any(_clearable(p) for p in e.msg.parts)
        else e.tokens
        for i, e in enumerate(sized.entries)
    ]
    suffix = [0] * (len(msgs) + 1)
    for i in range(len(msgs) - 1, -1, -1):
        suffix[i] = suffix[i + 1] + per_message[i]
    candidates = sorted({0, *(start for start, _ in _turns(msgs))} & set(range(intact_start)))
    start = next((s for s in candidates if suffix[s] <= budget), None)
    if start is None and intact.tail_start_id:
        start = intact_start
    if start is None or not msgs:
        return FallbackPlan(_fallback_summary(msgs, earlier, len(msgs)), [], None)
    prune = [p.id for m in msgs[start:intact_start] for p in m.parts if _clearable(p)]
    return FallbackPlan(_fallback_summary(msgs, earlier, start), prune, msgs[start].id)


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _request_text(msg: WithParts) -> str:
    return "\n".join(
        p.text for p in msg.parts if isinstance(p, TextPart) and p.text and not (p.ignored or p.synthetic)
    )


def _files_touched(msgs: Sequence[WithParts]) -> list[str]:
    seen: dict[str, None] = {}
    for msg in msgs:
        for part in msg.parts:
            if isinstance(part, ToolPart):
                for key in ("filePath", "path"):
                    value = part.state.input.get(key)
                    if isinstance(value, str) and value:
                        seen.setdefault(value, None)
    return list(seen)


def _fallback_summary(msgs: Sequence[WithParts], earlier: str | None, kept_from: int) -> str:
    turns = _turns(msgs)
    requests = [(n, text) for n, (s, _) in enumerate(turns, 1) if (text := _request_text(msgs[s]))]
    out = [
        "# Session summary (made without a model)",
        "The conversation grew too large for the model to summarise it, so this summary was put "
        "together from the session records. Tool outputs older than the recent turns were cleared; "
        "read the files or run the tools again where their content matters.",
    ]
    if earlier:
        out += ["## Earlier summary", earlier]
    if requests:
        listed = requests[-_MAX_REQUESTS:]
        lines = [f"{n}. {_one_line(text, _REQUEST_CHARS)}" for n, text in listed]
        if len(requests) > len(listed):
            lines.insert(0, f"({len(requests) - len(listed)} older requests not listed)")
        out += ["## User requests, oldest first", "\n".join(lines)]
    paths = _files_touched(msgs)
    if paths:
        more = [f"- ({len(paths) - _MAX_FILES} more)"] if len(paths) > _MAX_FILES else []
        out += ["## Files touched", "\n".join([f"- {p}" for p in paths[:_MAX_FILES]] + more)]
    last_reply = next(
        (
            m.text()
            for m in reversed(msgs)
            if isinstance(m.info, AssistantMessage) and not m.info.summary and m.text().strip()
        ),
        "",
    )
    if last_reply:
        out += ["## Last assistant reply", _one_line(last_reply, _REPLY_CHARS)]
    left_out = sum(1 for s, _ in turns if s < kept_from)
    if left_out:
        kept = "none of them are" if left_out == len(turns) else "the later ones are still in the context"
        out += ["## Left out of the context", f"Turns 1–{left_out} of {len(turns)} are left out; {kept}."]
    return "\n\n".join(out)
