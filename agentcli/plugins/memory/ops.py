"""The operations of the ``memory`` tool, over the plugin's read-only store view. Each returns
Markdown that names the ids the next call needs and says how to see more when it is cut short."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentcli.plugins.api import PluginContext, ToolCallContext
from agentcli.plugins.memory.block import STATUS, band
from agentcli.store.records import AssistantMessage, ReasoningPart, TextPart, ToolPart, WithParts
from agentcli.tools.base import PermissionDenied, ToolError

MAX_LIMIT = 200

HELP: dict[str, str] = {
    "help": "help {tool?}: this list, or one operation's arguments.",
    "summary": "summary: this session, the project's sessions and the context at a glance.",
    "sessions": "sessions {limit=10, offset=0, projectPath?}: sessions, newest first, with their ids.",
    "messages": "messages {sessionId?, limit=50, offset=0, role?, showTools=false, maxLength=2000}: "
    "a session's messages (newest `limit`, shown oldest first) with their ids.",
    "message": "message {messageId, showTools=true, maxLength=8000, offset=0}: one message in full.",
    "search": "search {query, limit=10, sessionId?}: ranked full-text search over all sessions, "
    "with snippets.",
    "compactions": "compactions {sessionId?, read?}: a session's summaries; read: N prints summary N "
    "in full (1-based).",
    "context": "context: how full the context window is, and what to do about it.",
    "children": "children {sessionId?}: sessions started from a session.",
    "plans": "plans {read?}: plan files of the project (.opencode/plans, .agentcli/plans); "
    "read: name prints one.",
}


def _time(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M")


def _int(args: dict[str, Any], key: str, default: int, low: int = 0, high: int = 1_000_000) -> int:
    value = args.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ToolError(f"'{key}' must be a number")
    try:
        number = int(value)
    except ValueError:
        raise ToolError(f"'{key}' must be a number, not '{value}'") from None
    return max(low, min(high, number))


def _bool(args: dict[str, Any], key: str, default: bool) -> bool:
    value = args.get(key, default)
    return value if isinstance(value, bool) else str(value).lower() in ("1", "true", "yes")


def _cut(text: str, limit: int, offset: int = 0) -> tuple[str, bool]:
    piece = text[offset : offset + limit]
    return piece, offset + limit < len(text)


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _tool_line(part: ToolPart, limit: int) -> str:
    args = _one_line(json.dumps(part.state.input, ensure_ascii=False), 120)
    result = part.state.error if part.state.status == "error" else part.state.output
    if part.state.time.compacted:
        result = "[output cleared by pruning]"
    return f"- tool `{part.tool}` {args} → {part.state.status}: {_one_line(result or '', limit)}"


def _body(msg: WithParts, show_tools: bool, tool_chars: int) -> str:
    lines = []
    for part in msg.parts:
        if isinstance(part, TextPart) and part.text.strip() and not part.ignored:
            lines.append(part.text.strip())
        elif isinstance(part, ToolPart) and show_tools:
            lines.append(_tool_line(part, tool_chars))
        elif isinstance(part, ReasoningPart) and show_tools and part.text.strip():
            lines.append(f"(reasoning) {part.text.strip()}")
    if msg.compaction() is not None:
        lines.insert(0, "[compaction marker]")
    if isinstance(msg.info, AssistantMessage) and msg.info.summary:
        lines.insert(0, "[summary]")
    return "\n".join(lines)


class MemoryOps:
    def __init__(self, context: PluginContext, call: ToolCallContext) -> None:
        self.ctx, self.view, self.sid, self.call = context, context.store, call.session_id, call

    def run(self, op: str, args: dict[str, Any]) -> str:
        handlers: dict[str, Callable[[dict[str, Any]], str]] = {
            "help": self.help,
            "summary": self.summary,
            "sessions": self.sessions,
            "messages": self.messages,
            "message": self.message,
            "search": self.search,
            "compactions": self.compactions,
            "context": self.context,
            "children": self.children,
            "plans": self.plans,
        }
        handler = handlers.get(op)
        if handler is None:
            raise ToolError(
                f"Unknown operation '{op}'. Use one of: {', '.join(handlers)} (memory {{tool: \"help\"}})."
            )
        return handler(args)

    def _session_id(self, args: dict[str, Any]) -> str:
        ref = str(args.get("sessionId") or self.sid)
        try:
            return self.view.session(ref).id
        except Exception:
            raise ToolError(
                f"No session '{ref}'. List sessions with memory {{tool: \"sessions\"}}."
            ) from None

    # --- operations ----------------------------------------------------------------------

    def help(self, args: dict[str, Any]) -> str:
        name = str(args.get("tool") or "")
        if name:
            if name not in HELP:
                raise ToolError(f"Unknown operation '{name}'. Operations: {', '.join(HELP)}.")
            return HELP[name]
        return (
            "memory {tool, args}: read your own history.\n"
            + "\n".join(f"- {h}" for h in HELP.values())
            + "\nmemory_compact {}: compact this session now (declines below 50 % context)."
        )

    def summary(self, args: dict[str, Any]) -> str:
        info = self.view.session(self.sid)
        figures = self.ctx.session.context(self.sid)
        project = self.view.sessions(directory=info.directory)
        return "\n".join(
            [
                f"Session: {info.id} — {info.title or '(untitled)'}",
                f"Messages: {info.messages}; compactions: {info.compactions}",
                f"Context: {figures.percent}% ({figures.tokens:,} / {figures.context_limit:,} tokens, "
                f"{figures.model})",
                f'Sessions in this project: {len(project)} (memory {{tool: "sessions"}} lists them)',
            ]
        )

    def sessions(self, args: dict[str, Any]) -> str:
        limit = _int(args, "limit", 10, 1, MAX_LIMIT)
        offset = _int(args, "offset", 0)
        project = args.get("projectPath")
        rows = self.view.sessions(directory=str(project) if project else None)
        page = rows[offset : offset + limit]
        if not page:
            return "No sessions." if not rows else f"No sessions at offset {offset} (there are {len(rows)})."
        lines = ["| ID | Title | Updated | Messages |", "| --- | --- | --- | --- |"]
        lines += [
            f"| {s.id} | {_one_line(s.title or '(untitled)', 60)} | {_time(s.updated)} | {s.messages} |"
            for s in page
        ]
        lines.append(
            f"\nShowing {offset + 1}–{offset + len(page)} of {len(rows)}."
            + (f" More: offset={offset + len(page)}." if offset + len(page) < len(rows) else "")
            + ' Read one: memory {tool: "messages", args: {sessionId}}.'
        )
        return "\n".join(lines)

    def messages(self, args: dict[str, Any]) -> str:
        sid = self._session_id(args)
        limit = _int(args, "limit", 50, 1, MAX_LIMIT)
        offset = _int(args, "offset", 0)
        role = args.get("role")
        show_tools = _bool(args, "showTools", False)
        max_len = _int(args, "maxLength", 2000, 100, 20_000)
        picked: list[tuple[WithParts, str]] = []
        skipped = 0
        more = False
        for msg in self.view.recent(sid):  # newest first; stop as soon as the page is full
            if role and msg.role != role:
                continue
            body = _body(msg, show_tools, 200)
            if not body:
                continue  # a tool step with no text is not an entry (open-memory lists blanks)
            if skipped < offset:
                skipped += 1
                continue
            if len(picked) == limit:
                more = True
                break
            picked.append((msg, body))
        if not picked:
            return (
                f"No messages in {sid}"
                + (f" with role {role}" if role else "")
                + (f" at offset {offset}." if offset else ".")
            )
        picked.reverse()
        out = []
        for msg, body in picked:
            text, cut = _cut(body, max_len)
            out.append(
                f"### {msg.role} · {msg.id} · {_time(msg.info.created)}\n{text}"
                + (
                    f'\n[cut at {max_len} chars: memory {{tool: "message", args: {{messageId: "{msg.id}"}}}}]'
                    if cut
                    else ""
                )
            )
        footer = f"\n{len(picked)} message(s) of {sid}, oldest first."
        if more:
            footer += f" Older: offset={offset + len(picked)}."
        footer += ' Full text: memory {tool: "message", args: {messageId}}.'
        return "\n\n".join(out) + footer

    def message(self, args: dict[str, Any]) -> str:
        mid = str(args.get("messageId") or "")
        if not mid:
            raise ToolError("message needs messageId (the ids are listed by messages and search).")
        try:
            msg = self.view.message(mid)
        except Exception:
            raise ToolError(f"No message '{mid}'. The ids are listed by messages and search.") from None
        max_len = _int(args, "maxLength", 8000, 100, 50_000)
        offset = _int(args, "offset", 0)
        body = _body(msg, _bool(args, "showTools", True), 2000)
        text, cut = _cut(body, max_len, offset)
        head = f"### {msg.role} · {msg.id} · session {msg.info.session_id} · {_time(msg.info.created)}"
        tail = f"\n[{len(body):,} chars in all; next: offset={offset + max_len}]" if cut else ""
        return f"{head}\n{text}{tail}"

    def search(self, args: dict[str, Any]) -> str:
        query = str(args.get("query") or "").strip()
        if not query:
            raise ToolError("search needs a query.")
        limit = _int(args, "limit", 10, 1, 50)
        session = self._session_id(args) if args.get("sessionId") else None
        hits = self.view.search(query, limit=limit, session_id=session)
        if not hits:
            return f"No matches for '{query}'."
        out = [
            f"**{_one_line(h.session_title or '(untitled)', 60)}** · session {h.session_id} · {h.role} · "
            f"message {h.message_id}\n> {_one_line(h.snippet, 300)}"
            for h in hits
        ]
        return (
            "\n\n".join(out)
            + f"\n\n{len(hits)} match(es), best first"
            + (f" (limit {limit}: raise it for more)" if len(hits) == limit else "")
            + '. Read one: memory {tool: "message", args: {messageId}}.'
        )

    def compactions(self, args: dict[str, Any]) -> str:
        sid = self._session_id(args)
        compactions = self.view.compactions(sid)
        if args.get("read") is not None:
            n = _int(args, "read", 0, -1)
            if not compactions:
                raise ToolError(f"Session {sid} has no compactions.")
            if not 1 <= n <= len(compactions):
                raise ToolError(
                    f"Invalid compaction index. Session has {len(compactions)} compaction(s). "
                    f"Use 1-{len(compactions)}."
                )
            c = compactions[n - 1]
            return (
                f"Compaction {n} of {len(compactions)} · {_time(c.summary.info.created)} · "
                f"auto: {c.part.auto} · "
                f"overflow: {c.part.overflow} · summary message {c.summary.id}\n\n{c.text}"
            )
        if not compactions:
            return f"Session {sid} has no compactions."
        lines = ["| # | Time | Auto | Summary |", "| --- | --- | --- | --- |"]
        lines += [
            f"| {i} | {_time(c.summary.info.created)} | {'yes' if c.part.auto else 'no'} "
            f"| {_one_line(c.text, 60)} |"
            for i, c in enumerate(compactions, 1)
        ]
        lines.append('\nRead one in full: memory {tool: "compactions", args: {read: N}}.')
        return "\n".join(lines)

    def context(self, args: dict[str, Any]) -> str:
        f = self.ctx.session.context(self.sid)
        lines = [
            f"Context: {f.percent}%",
            f"Tokens: {f.tokens:,} / {f.context_limit:,} (usable before automatic compaction: {f.usable:,})",
            f"Model: {f.model}",
        ]
        if f.context_limit:
            b = band(f.percent)
            lines.append(f"Status: {STATUS[b]}")
            if b in ("red", "critical"):
                lines.append("Recommendation: call memory_compact at the next natural break.")
        return "\n".join(lines)

    def children(self, args: dict[str, Any]) -> str:
        sid = self._session_id(args)
        kids = self.view.children(sid)
        if not kids:
            return f"Session {sid} has no child sessions."
        return "\n".join(f"- {s.id} — {s.title or '(untitled)'} ({s.messages} messages)" for s in kids)

    def plans(self, args: dict[str, Any]) -> str:
        """Plan files are read as the read tool reads: a plan (or plans folder) that is a link out of
        the project, or to a credential store, asks first (`ToolCallContext.check_read`)."""
        root = self.ctx.project_root
        dirs = [root / ".opencode" / "plans", root / ".agentcli" / "plans"]
        found, refused = self._plan_folders(dirs)
        note = "".join(f"\n({d.relative_to(root)}: not read, permission refused)" for d in refused)
        files = sorted((p for d in found for p in d.glob("*.md")), key=lambda p: p.name)
        name = args.get("read")
        if name:
            match = next((p for p in files if p.name == name or p.stem == name), None)
            if match is None:
                listed = ", ".join(p.name for p in files) or "(none)"
                raise ToolError(f"No plan '{name}'. Plans: {listed}.{note}")
            real = self.call.check_read(match, "memory plans")
            text, cut = _cut(real.read_text(encoding="utf-8", errors="replace"), 20_000)
            return text + ("\n[cut at 20,000 chars]" if cut else "")
        if not files:
            return f"No plan files in {', '.join(str(Path(d).relative_to(root)) for d in dirs)}.{note}"
        return (
            "\n".join(f"- {p.name}" for p in files)
            + '\nRead one: memory {tool: "plans", args: {read: NAME}}.'
            + note
        )

    def _plan_folders(self, dirs: list[Path]) -> tuple[list[Path], list[Path]]:
        """The plan folders that exist and may be listed (listing a folder is reading it), and those
        whose permission question was answered no."""
        found: list[Path] = []
        refused: list[Path] = []
        for folder in (d for d in dirs if d.is_dir()):
            try:
                self.call.check_read(folder, "memory plans")
            except PermissionDenied:
                refused.append(folder)
                continue
            found.append(folder)
        return found, refused
