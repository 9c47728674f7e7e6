"""A session as a Markdown document (``sessions export --format md``): for reading and sharing,
not re-importing. Everything is in it — compactions as headed sections with their summary, pruned tool
outputs marked as such but included."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from agentcli.store.records import (
    AssistantMessage,
    CompactionPart,
    FilePart,
    ReasoningPart,
    SessionInfo,
    TextPart,
    ToolPart,
    WithParts,
)
from agentcli.ui.fmt import format_tokens
from agentcli.ui.markup import for_people


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")


def _fence(text: str, lang: str = "") -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}"


def _tool(part: ToolPart) -> list[str]:
    state = part.state
    args = state.input.get("command") if part.tool == "bash" else json.dumps(state.input, ensure_ascii=False)
    out = [f"**{part.tool}** `{args}`" if args and "`" not in str(args) else f"**{part.tool}**"]
    if state.status == "error":
        out.append(f"> error: {state.error}")
    elif state.output:
        if state.time.compacted:
            out.append("*(pruned: hidden from the model since)*")
        out.append(_fence(for_people(state.output)))
    return out


def _marker(part: CompactionPart) -> str:
    kind = "overflow" if part.overflow else ("auto" if part.auto else "manual")
    focus = f" — focus: {part.focus}" if part.focus else ""
    return f"---\n\n## Compaction ({kind}){focus}"


def session_markdown(session: SessionInfo, messages: list[WithParts]) -> str:
    lines = [
        f"# {session.title or 'Untitled session'}",
        "",
        f"- session: `{session.id}`",
        f"- directory: `{session.directory}`",
        f"- model: {session.model or '?'}",
        f"- created: {_when(session.created)}",
        f"- {session.messages} messages · {format_tokens(session.tokens.count())} tokens · "
        f"{session.compactions} compactions",
        *(f"- ⚠ {_when(n.time)}: {n.text}" for n in session.notices),  # an MCP server failed or died
        "",
    ]
    for msg in messages:
        marker = msg.compaction()
        info = msg.info
        if marker is not None:
            lines += [_marker(marker), ""]
            continue
        if isinstance(info, AssistantMessage):
            lines += ["### Summary" if info.summary else f"### Assistant ({info.model or '?'})", ""]
        else:
            lines += [f"### User · {_when(info.created)}", ""]
        for part in msg.parts:
            if isinstance(part, TextPart) and part.text and not part.ignored:
                lines += [f"*{part.text}*" if part.synthetic else part.text, ""]
            elif isinstance(part, ReasoningPart) and part.text.strip():
                lines += ["> " + part.text.strip().replace("\n", "\n> "), ""]
            elif isinstance(part, ToolPart):
                lines += [*_tool(part), ""]
            elif isinstance(part, FilePart):
                lines += [f"📎 {part.filename or part.url[:60]} ({part.mime})", ""]
        if isinstance(info, AssistantMessage) and info.error is not None:
            lines += [f"> ✗ {info.error.name}: {info.error.message}", ""]
    return "\n".join(lines).rstrip() + "\n"
