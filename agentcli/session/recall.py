"""The ``recall`` tool: nothing said or done in this session is out of the model's reach.

A query returns the matching passages of the session's own records, best first, with their ids —
tool outputs pruned from the context and messages a compaction summarised away included (the
store keeps every part; ``agentcli.store.fulltext`` searches them). An id returns that part (or
every part of a message) in full, cut to the tool output limits like any tool's output.
It lives in ``session`` because it reads the store, which tools below it may not.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field

from agentcli.store.records import ReasoningPart, TextPart, ToolMetadata, ToolPart
from agentcli.store.store import NotFound, Store
from agentcli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agentcli.tools.params import ToolParams
from agentcli.tools.truncate import truncate_output

DEFAULT_LIMIT = 8
MAX_LIMIT = 30

DESCRIPTION = """Find and read anything from earlier in this session, word for word: what older \
messages said, tool calls and their full outputs — including what was summarised away when the \
conversation was compacted and old tool outputs cleared from the context.
- query: words to search for (all must match; "quoted words" match as a phrase; a word ending in * \
matches as a prefix). Returns the matching passages, best first, each with its id.
- id: a part id (prt_…) or message id (msg_…) from a result: returns it in full.
Use it before asking the user to repeat something or redoing work the session already did."""


class RecallParams(ToolParams):
    query: str | None = Field(None, description="Words to search this session's history for")
    id: str | None = Field(None, description="A part (prt_…) or message (msg_…) id to read in full")
    limit: int | None = Field(None, description=f"Passages to return (default {DEFAULT_LIMIT})")


def render_part(part: Any) -> str:
    """A part as the model reads it back: text as written, a tool call with its input and full output."""
    if isinstance(part, TextPart | ReasoningPart):
        return part.text
    if isinstance(part, ToolPart):
        state = part.state
        lines = [
            f"tool {part.tool} · status {state.status}",
            f"input: {json.dumps(state.input, ensure_ascii=False)}",
        ]
        if state.status == "completed":
            lines.append(f"output:\n{state.output}")
        elif state.status == "error":
            lines.append(f"error: {state.error or ''}")
        return "\n".join(lines)
    return ""


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit] + "…"


class RecallTool(Tool[RecallParams]):
    name = "recall"
    description = DESCRIPTION
    params = RecallParams

    def __init__(self, store: Store) -> None:
        self.store = store

    def execute(self, args: RecallParams, ctx: ToolContext) -> ToolResult:
        ref = (args.id or "").strip()
        query = (args.query or "").strip()
        if ref:
            text, title = self._read(ref, ctx.session_id)
        elif query:
            text, title = self._search(query, ctx.session_id, args.limit), f"recall: {query}"
        else:
            raise ToolError("recall needs a query (words to find) or an id (from a result) to read.")
        cut = truncate_output(
            text, max_lines=ctx.max_lines, max_bytes=ctx.max_bytes, output_dir=ctx.output_dir
        )
        path = str(cut.output_path) if cut.output_path else None
        return ToolResult(
            output=cut.content,
            title=title,
            metadata=ToolMetadata(truncated=cut.truncated, output_path=path).dump(),
        )

    def _search(self, query: str, session_id: str, limit: Any) -> str:
        n = limit if isinstance(limit, int) and not isinstance(limit, bool) else DEFAULT_LIMIT
        n = max(1, min(MAX_LIMIT, n))
        hits = self.store.search(query, limit=n, session_id=session_id)
        if not hits:
            return f"Nothing in this session matches '{query}'."
        out = []
        for hit in hits:
            try:
                part = self.store.get_part(hit.part_id)
            except NotFound:
                continue
            what = f"tool {part.tool}" if isinstance(part, ToolPart) else hit.role
            cleared = isinstance(part, ToolPart) and part.state.time.compacted is not None
            out.append(
                f"[{hit.part_id}] {what} · message {hit.message_id}"
                + (" · output cleared from the context" if cleared else "")
                + f"\n> {_one_line(hit.snippet)}"
            )
        return (
            "\n\n".join(out)
            + f'\n\n{len(out)} passage(s), best first. Read one in full: recall {{id: "prt_…"}}.'
        )

    def _read(self, ref: str, session_id: str) -> tuple[str, str]:
        try:
            if ref.startswith("msg_"):
                msg = self.store.get_message(ref)
                parts, owner = msg.parts, msg.info.session_id
                head = f"message {ref} ({msg.role})"
            else:
                part = self.store.get_part(ref)
                parts, owner = [part], part.session_id
                head = f"part {ref} of message {part.message_id}"
        except NotFound:
            raise ToolError(
                f"No part or message '{ref}' in this session. Search with recall {{query}}."
            ) from None
        if owner != session_id:
            raise ToolError(f"'{ref}' is not from this session. Search with recall {{query}}.")
        body = "\n\n".join(t for t in (render_part(p) for p in parts) if t)
        return f"{head}\n{body}", f"recall: {ref}"
