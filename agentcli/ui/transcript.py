"""``agentcli sessions show``: a session's whole history, compactions and pruned outputs included.

Nothing is hidden for good by context management, so the transcript shows what the model no
longer sees too: pruned tool outputs are marked ``[pruned]`` (their text with ``full``), and each
compaction is a divider followed by the summary the conversation continued from.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from rich.console import Console, RenderableType
from rich.markdown import Markdown
from rich.padding import Padding
from rich.panel import Panel
from rich.rule import Rule
from rich.text import Text

from agentcli.store.artifacts import Carryover, render
from agentcli.store.records import (
    AssistantMessage,
    CompactionPart,
    FilePart,
    MessageError,
    ReasoningPart,
    SessionInfo,
    SessionNotice,
    StepFinishPart,
    TextPart,
    Tokens,
    ToolPart,
    WithParts,
)
from agentcli.ui import theme
from agentcli.ui.fmt import format_cost, format_duration, format_tokens, relative_time
from agentcli.ui.markup import for_people
from agentcli.ui.tool_line import tool_line

TRIM_LINES = 20  # tool inputs/outputs longer than this are cut unless ``full``
_INDENT = (0, 0, 0, 4)
_INLINE_INPUT_CHARS = 160  # an input this short stays on one line
# Records still open: killed (the next turn closes them as interrupted) or a turn running elsewhere.
_OPEN = "interrupted, or still running in another agentcli"


def transcript_json(
    session: SessionInfo, messages: list[WithParts], ledger: Carryover | None = None
) -> dict[str, Any]:
    """Everything, as the records store it (OpenCode's export shape: ``{info, messages}``), and
    the session's ledger as it stands now."""
    out = {
        "info": session.model_dump(mode="json"),
        "messages": [m.model_dump(mode="json") for m in messages],
    }
    if ledger is not None:
        out["ledger"] = ledger.model_dump(mode="json")
    return out


def render_transcript(
    console: Console,
    session: SessionInfo,
    messages: list[WithParts],
    full: bool = False,
    ledger: Carryover | None = None,
    cache_saved: float = 0.0,
) -> None:
    """``cache_saved``: dollars prompt caching saved over the session (negative: it cost more)."""
    for renderable in transcript_renderables(session, messages, full, cache_saved):
        console.print(renderable)
    if ledger is not None and (body := render(Carryover(ledger=ledger.ledger))):
        console.print(_carried(body, "ledger now (from the records)"))


def transcript_renderables(
    session: SessionInfo, messages: list[WithParts], full: bool = False, cache_saved: float = 0.0
) -> Iterator[RenderableType]:
    yield from _header(session, cache_saved)
    # A compaction's divider needs to know how its summary was made, and the summary follows it.
    summaries = {
        m.info.parent_id: m for m in messages if isinstance(m.info, AssistantMessage) and m.info.summary
    }
    notices = sorted(session.notices, key=lambda n: n.time)  # each shown where it happened
    for message in messages:
        while notices and notices[0].time <= message.info.created:
            yield _notice(notices.pop(0))
        marker = message.compaction()
        if marker is not None:
            yield from _compaction(marker, summaries.get(message.id))
        elif isinstance(message.info, AssistantMessage):
            if message.info.summary:
                yield from _summary(message)
            else:
                yield from _assistant(message, message.info, full, session.directory or None)
        else:
            yield from _user(message)
    for notice in notices:
        yield _notice(notice)


def _notice(notice: SessionNotice) -> Text:
    """A server that failed or died, as the user was told it (the model never sees it)."""
    whose = f" (@{notice.agent}'s own server)" if notice.agent else ""
    line = Text(f"⚠ {_clock(notice.time)} {notice.text}{whose}", style=theme.TOOL_ACTIVE)
    line.append("\n")
    return line


# --- header ---------------------------------------------------------------------------------


def _header(session: SessionInfo, cache_saved: float = 0.0) -> Iterator[RenderableType]:
    yield Rule(Text(session.title or "(untitled)", style="bold"), style=theme.DIVIDER)
    where = Text(style=theme.META)
    where.append(session.id)
    if session.directory:
        where.append(f" · {session.directory}")
    if session.model:
        where.append(f" · {session.model}")
    if session.agent:
        where.append(f" · agent {session.agent}")
    yield where
    if session.parent_id:
        yield Text(f"a task's session, started by {session.parent_id}", style=theme.META)
    yield Text(
        f"created {_clock(session.created, date=True)} · updated {relative_time(session.updated)}",
        style=theme.META,
    )
    totals = [
        f"{session.messages} messages",
        f"{format_tokens(session.tokens.count())} tokens",
    ]
    if session.cost:
        totals.append(format_cost(session.cost))
    if session.tokens.cache.read or session.tokens.cache.write:
        totals.append(_cache_totals(session.tokens, cache_saved))
    if session.context_tokens:
        totals.append(f"context {format_tokens(session.context_tokens)}")
    if session.compactions:
        totals.append(f"{session.compactions} compaction{'s' if session.compactions != 1 else ''}")
    yield Text(" · ".join(totals), style=theme.META)
    yield Text()


def _cache_totals(tokens: Tokens, saved: float) -> str:
    """The session's prompt caching: tokens read from and written to the cache, and the money saved."""
    text = f"{format_tokens(tokens.cache.read)} cached"
    if tokens.cache.write:
        text += f" / {format_tokens(tokens.cache.write)} cache write"
    if saved >= 0.00005:
        text += f" (caching saved {format_cost(saved)})"
    elif saved <= -0.00005:
        text += f" (caching cost {format_cost(-saved)} more)"
    return text


def _clock(ms: int, *, date: bool = False) -> str:
    return datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M" if date else "%H:%M")


# --- user -----------------------------------------------------------------------------------


def _user(message: WithParts) -> Iterator[RenderableType]:
    heading = Text("› You", style=theme.USER)
    heading.append(f"  {_clock(message.info.created, date=True)}", theme.META)
    yield heading
    for part in message.parts:
        if isinstance(part, TextPart) and part.text:
            if part.synthetic or part.ignored:
                label = "synthetic" if part.synthetic else "ignored"
                yield Padding(Text(f"({label}) {part.text}", style=theme.META), (0, 0, 0, 2))
            else:
                yield Padding(Text(part.text), (0, 0, 0, 2))
        elif isinstance(part, FilePart):
            yield Padding(_file_line(part), (0, 0, 0, 2))
    yield Text()


def _file_line(part: FilePart) -> Text:
    name = part.filename or (part.source.path if part.source else "") or part.url[:60]
    return Text(f"📎 {name} ({part.mime})", style=theme.META)


# --- compactions ---------------------------------------------------------------------------------


def _compaction_kind(marker: CompactionPart) -> str:
    if marker.overflow:
        return "overflow"
    return "auto" if marker.auto else "manual"


def _made_without_model(marker: CompactionPart, summary: WithParts | None) -> bool:
    if marker.diagnostics is not None and marker.diagnostics.fallback:
        return True
    return summary is not None and any(isinstance(p, TextPart) and p.fallback for p in summary.parts)


def _diagnostics(marker: CompactionPart) -> Text | None:
    """How the compaction went: sizes, summary requests, time, and why it fell back."""
    d = marker.diagnostics
    if d is None:
        return None
    bits = [f"context {format_tokens(d.tokens_before)} → {format_tokens(d.tokens_after)} tokens"]
    if d.attempts:
        bits.append(
            f"summary request {format_tokens(d.request_tokens)} tokens"
            + (f" · {d.attempts} attempts" if d.attempts > 1 else "")
        )
    bits.append(f"took {format_duration(d.duration_ms)}")
    if d.background:  # the turn did not wait for the summary: how long it took to write is apart
        bits.append(f"written in the background in {format_duration(d.summary_ms)}")
    if d.fallback_reason:
        bits.append(f"fallback: {d.fallback_reason}")
    return Text(" · ".join(bits), style=theme.META)


def _compaction(marker: CompactionPart, summary: WithParts | None) -> Iterator[RenderableType]:
    title = f" compaction · {_compaction_kind(marker)}"
    if _made_without_model(marker, summary):
        title += " · fallback: made without a model"
    elif summary is None:
        title += " · pending"
    yield Rule(Text(title + " ", style=f"bold {theme.DIVIDER}"), style=theme.DIVIDER, characters="═")
    if marker.focus:
        yield Text(f"focus: {marker.focus}", style=theme.META)
    if (diagnostics := _diagnostics(marker)) is not None:
        yield diagnostics


# A stored summary's redaction placeholders (agentcli.redact writes them); a code span already
# holding one is left as it is.
_PLACEHOLDER = re.compile(r"(?<!`)\[REDACTED:([a-z0-9\-]+)\](?!`)")


def _summary(message: WithParts) -> Iterator[RenderableType]:
    assert isinstance(message.info, AssistantMessage)
    body, redacted = mark_redactions(message.text())
    subtitle = _usage_text(message, message.info).plain or None
    yield Panel(
        Markdown(body) if body else Text("(empty summary)", style=theme.META),
        title="summary",
        title_align="left",
        subtitle=subtitle,
        subtitle_align="right",
        border_style=theme.SUMMARY_BORDER,
    )
    if (carried := message.carryover()) is not None and (body := render(carried)):
        yield _carried(body, "carried past the summary (from the records)")
    if redacted:
        kinds = ", ".join(sorted(set(redacted)))
        yield Text(
            f"  {theme.GLYPH_REDACTED} {len(redacted)} secret{'s' * (len(redacted) > 1)} redacted: {kinds}",
            style=theme.REDACTED,
        )
    if message.info.error is not None:
        yield _error_line(message.info.error)
    yield Text()


def _carried(body: str, title: str) -> Panel:
    return Panel(Text(body), title=title, title_align="left", border_style=theme.META)


def mark_redactions(markdown: str) -> tuple[str, list[str]]:
    """Redaction placeholders shown as code spans (set apart from prose), and the kinds redacted."""
    kinds: list[str] = []

    def mark(m: re.Match[str]) -> str:
        kinds.append(m.group(1))
        return f"`{m.group(0)}`"

    return _PLACEHOLDER.sub(mark, markdown), kinds


# --- assistant ------------------------------------------------------------------------------


def _assistant(
    message: WithParts, info: AssistantMessage, full: bool, cwd: str | None
) -> Iterator[RenderableType]:
    heading = Text("● Assistant", style=theme.ASSISTANT)
    if info.agent != "build":
        heading.append(f"  @{info.agent}", theme.META)
    if info.model:
        heading.append(f"  {info.model}", theme.META)
    yield heading
    for part in message.parts:
        if isinstance(part, TextPart) and part.text and not part.ignored:
            yield Padding(Markdown(part.text), (0, 0, 0, 2))
        elif isinstance(part, ReasoningPart) and part.text:
            yield Padding(Text("✻ " + part.text, style=theme.REASONING), (0, 0, 0, 2))
        elif isinstance(part, ToolPart):
            yield from _tool(part, full, cwd)
        elif isinstance(part, FilePart):
            yield Padding(_file_line(part), (0, 0, 0, 2))
    if info.error is not None:
        yield _error_line(info.error)
    elif info.finish is None:
        yield Text(f"  ◌ step unfinished ({_OPEN})", style=theme.TOOL_ACTIVE)
    usage = _usage_text(message, info)
    if usage.plain:
        yield Padding(usage, (0, 0, 0, 2))
    yield Text()


def _error_line(error: MessageError) -> Text:
    if error.name == "MessageAbortedError":
        return Text("  ✗ interrupted", style=theme.TOOL_ACTIVE)
    status = f" (HTTP {error.status})" if error.status else ""
    return Text(f"  ✗ {error.name}{status}: {error.message}", style=theme.ERROR)


def _usage_text(message: WithParts, info: AssistantMessage) -> Text:
    """The message's step totals in one dim line: "12.3k in · 456 out · 10k cached · $0.0123"."""
    steps = [p for p in message.parts if isinstance(p, StepFinishPart)]
    tokens = Tokens()
    for step in steps:
        tokens = tokens.add(step.tokens)
    cost = sum(step.cost for step in steps)
    if not steps:
        tokens, cost = info.tokens, info.cost
    bits = []
    if tokens.input or tokens.output:
        bits += [f"{format_tokens(tokens.input)} in", f"{format_tokens(tokens.output)} out"]
    if tokens.reasoning:
        bits.append(f"{format_tokens(tokens.reasoning)} reasoning")
    if tokens.cache.read:
        bits.append(f"{format_tokens(tokens.cache.read)} cached")
    if tokens.cache.write:
        bits.append(f"{format_tokens(tokens.cache.write)} cache write")
    if cost:
        bits.append(format_cost(cost))
    if len(steps) > 1:
        bits.append(f"{len(steps)} steps")
    if info.completed:
        bits.append(format_duration(max(0, info.completed - info.created)))
    return Text(" · ".join(bits), style=theme.META)


# --- tool calls -----------------------------------------------------------------------------


def _tool(part: ToolPart, full: bool, cwd: str | None) -> Iterator[RenderableType]:
    state = part.state
    if state.status in ("pending", "running"):
        # A transcript is not live: a call without a result shows as unfinished, never as running.
        state = state.model_copy(update={"status": "error", "error": f"no result recorded ({_OPEN})"})
        part = part.model_copy(update={"state": state})
    yield Padding(tool_line(part, cwd=cwd), (0, 0, 0, 2))
    if state.input:
        yield Padding(_input_block(part, full), _INDENT)
    pruned = state.time.compacted is not None
    if state.status == "error":
        if state.error and "\n" in state.error.strip():
            yield Padding(_trimmed(state.error, full, theme.TOOL_ERROR), _INDENT)
        return
    if pruned and not full:
        if state.output:
            n = len(state.output.splitlines())
            note = (
                f"[pruned] output of {n} line{'s' if n != 1 else ''} hidden from the model (--full shows it)"
            )
            yield Padding(Text(note, style=theme.PRUNED), _INDENT)
        return
    if pruned:
        yield Padding(Text("[pruned] hidden from the model since:", style=theme.PRUNED), _INDENT)
    if state.output:
        shown = for_people(state.output)
        yield Padding(
            Panel(_trimmed(shown, full), border_style=theme.TOOL_OUTPUT_BORDER, padding=(0, 1)),
            _INDENT,
        )


def _input_block(part: ToolPart, full: bool) -> Text:
    args = part.state.input
    if part.tool == "bash" and isinstance(args.get("command"), str):
        return _trimmed("$ " + args["command"], full, theme.META)
    compact = json.dumps(args, ensure_ascii=False)
    if len(compact) <= _INLINE_INPUT_CHARS:
        return Text(compact, style=theme.META)
    return _trimmed(json.dumps(args, ensure_ascii=False, indent=2), full, theme.META)


def _trimmed(text: str, full: bool, style: str = "") -> Text:
    """The first ``TRIM_LINES`` lines and a count of the rest, unless ``full``."""
    lines = text.rstrip("\n").splitlines()
    shown = lines if full or len(lines) <= TRIM_LINES else lines[:TRIM_LINES]
    out = (
        Text.from_ansi("\n".join(shown), style=style)
        if "\x1b" in text
        else Text("\n".join(shown), style=style)
    )
    if len(shown) < len(lines):
        out.append(f"\n… {len(lines) - len(shown)} more lines (--full shows all)", theme.META)
    return out
