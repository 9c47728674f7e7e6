"""What a continued chat shows before its prompt: the last exchanges of the session, briefly."""

from __future__ import annotations

from collections.abc import Iterator

from rich.console import RenderableType
from rich.markdown import Markdown
from rich.padding import Padding
from rich.text import Text

from agentcli.store.records import AssistantMessage, TextPart, ToolPart, WithParts
from agentcli.ui import theme

EXCHANGES = 2  # user turns shown
MAX_LINES = 12  # of each answer


def _typed(msg: WithParts) -> str:
    return "\n".join(
        p.text for p in msg.parts if isinstance(p, TextPart) and p.text and not p.synthetic and not p.ignored
    )


def _trim(text: str) -> str:
    lines = text.strip().splitlines()
    return "\n".join(
        lines[:MAX_LINES] + ([f"… ({len(lines) - MAX_LINES} more lines)"] if len(lines) > MAX_LINES else [])
    )


def recap(messages: list[WithParts], exchanges: int = EXCHANGES) -> Iterator[RenderableType]:
    """The last ``exchanges`` user turns (summaries and synthetic messages left out) with their answers."""
    starts = [i for i, m in enumerate(messages) if m.role == "user" and _typed(m) and m.compaction() is None]
    if not starts:
        return
    shown = messages[starts[-exchanges] if len(starts) >= exchanges else starts[0] :]
    yield Text(
        f"… {len(starts) - min(len(starts), exchanges)} earlier turns (sessions show for all)"
        if len(starts) > exchanges
        else "",
        style=theme.META,
    )
    for msg in shown:
        if msg.role == "user":
            if (text := _typed(msg)) and msg.compaction() is None:
                yield Text(f"› {_trim(text)}", style="bold")
        elif isinstance(msg.info, AssistantMessage) and not msg.info.summary:
            tools = [p.tool for p in msg.parts if isinstance(p, ToolPart)]
            if tools:
                yield Padding(Text("● " + ", ".join(tools), style=theme.META), (0, 0, 0, 2))
            if text := msg.text():
                yield Markdown(_trim(text))
