"""One compact line per tool call, the way Claude Code shows them:

    ● read src/app.py (120 lines)
    ● bash pytest -q → exit 1
    ✗ edit app.py: oldString not found

Built from a ``ToolPart`` alone (its input, title, metadata and status), so the same line serves the
live chat and ``sessions show``. A line never wraps: it is clipped with "…" at the console width.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rich.spinner import Spinner
from rich.text import Text

from agentcli.store.records import ToolMetadata, ToolPart
from agentcli.ui import theme
from agentcli.ui.fmt import first_line, format_duration
from agentcli.ui.oneline import OneLine

_PATH_TOOLS = {"read", "write", "edit", "multiedit", "patch"}
# OpenCode's read output numbers each line ("1: text", older "00001| text"); count those, not the
# wrapper lines around them.
_NUMBERED_LINE = re.compile(r"^\s*\d+(?::|\|)\s?", re.MULTILINE)
_SHOW_DURATION_MS = 1000  # quick calls don't need a time; slow ones do


def _display_path(path: str, cwd: str | Path | None) -> str:
    if not path:
        return ""
    p = Path(path)
    if cwd is not None and p.is_absolute():
        try:
            return str(p.relative_to(Path(cwd)))
        except ValueError:
            pass
    home = str(Path.home())
    if path.startswith(home + "/"):
        return "~" + path[len(home) :]
    return path


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def tool_subject(part: ToolPart, cwd: str | Path | None = None) -> str:
    """What the call is about: the path, the command, the pattern, the URL…"""
    args = part.state.input
    name = part.tool
    if name in _PATH_TOOLS:
        subject = _display_path(_str(args.get("filePath")) or _str(args.get("path")), cwd)
    elif name == "bash":
        command = _str(args.get("command")).strip()
        subject = first_line(command) + (" …" if "\n" in command else "")
    elif name in ("glob", "grep"):
        subject = _str(args.get("pattern"))
        if name == "grep" and subject:
            subject = f'"{subject}"'
        if args.get("include"):
            subject += f" ({args['include']})"
        if args.get("path"):
            subject += f" in {_display_path(_str(args['path']), cwd)}"
    elif name == "list":
        subject = _display_path(_str(args.get("path")), cwd) or "."
    elif name == "webfetch":
        subject = _str(args.get("url"))
    elif name in ("websearch", "codesearch"):
        subject = _str(args.get("query"))
    elif name == "task":
        subject = _str(args.get("description"))
    elif name == "skill":
        subject = _str(args.get("name"))
    elif name == "todowrite":
        todos = args.get("todos")
        subject = f"{len(todos)} todos" if isinstance(todos, list) else ""
    else:
        subject = ""
    if not subject:
        subject = first_line(part.state.title) or _brief_args(args)
    return subject


def _brief_args(args: dict[str, Any]) -> str:
    return " ".join(
        f"{k}={v!r}" if not isinstance(v, str) else f"{k}={first_line(v)}" for k, v in args.items()
    )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _diff_counts(meta: ToolMetadata) -> tuple[int, int] | None:
    if meta.filediff is not None:
        return meta.filediff.additions, meta.filediff.deletions
    diff = meta.diff
    if not diff:
        return None
    lines = diff.splitlines()
    added = sum(1 for ln in lines if ln.startswith("+") and not ln.startswith("+++"))
    removed = sum(1 for ln in lines if ln.startswith("-") and not ln.startswith("---"))
    return added, removed


def tool_outcome(part: ToolPart) -> str:
    """The short result of a completed call: "(120 lines)", "→ exit 1", "(+3 −1)"."""
    state, meta, name = part.state, part.state.meta, part.tool
    truncated = " truncated" if meta.truncated else ""
    if name == "bash":
        if meta.timed_out:
            return "→ timed out"
        if meta.aborted:
            return "→ interrupted"
        if meta.exit:
            return f"→ exit {meta.exit}"
        # metadata "output" is the command's own output, without the notes added for the model.
        shown = meta.output if meta.output is not None else state.output
        n = len(shown.splitlines())
        return f"({_plural(n, 'line')})" if n else "(no output)"
    if name == "read":
        if state.attachments:
            return f"({state.attachments[0].mime})"
        n = len(_NUMBERED_LINE.findall(state.output)) or _int(state.metadata.get("lines")) or 0
        return f"({_plural(n, 'line')}{',' + truncated if truncated else ''})" if n else ""
    if name == "write":
        content = _str(state.input.get("content"))
        return f"({_plural(len(content.splitlines()), 'line')})"
    if name in ("edit", "multiedit", "patch"):
        counts = _diff_counts(meta)
        return f"(+{counts[0]} −{counts[1]})" if counts else ""
    counted = {"glob": ("count", "file"), "grep": ("matches", "match"), "list": ("count", "entry")}
    if name in counted:
        key, word = counted[name]
        given = _int(state.metadata.get(key))
        count = given if given is not None else len([ln for ln in state.output.splitlines() if ln.strip()])
        noun = _plural(count, word).replace("matchs", "matches").replace("entrys", "entries")
        return f"({noun}{truncated})"
    if name == "webfetch":
        size = _int(state.metadata.get("bytes"))
        return f"({(len(state.output.encode()) if size is None else size) / 1024:.1f} KB)"
    if name == "todowrite":
        todos = state.input.get("todos")
        if isinstance(todos, list):
            done = sum(1 for t in todos if isinstance(t, dict) and t.get("status") == "completed")
            return f"({done}/{len(todos)} done)"
    return ""


def _error_text(part: ToolPart) -> str:
    text = first_line(part.state.error or "") or first_line(part.state.output) or "failed"
    text = text.removeprefix("Error: ")
    # Tool errors coach the model at length; the user needs the first sentence.
    head, sep, _ = text.partition(". ")
    return head + "." if sep and len(text) > 60 else text


def tool_activity(part: ToolPart, cwd: str | Path | None = None) -> Text:
    """The name and subject alone: the text beside a spinner while the call runs."""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(part.tool, theme.TOOL_NAME)
    subject = tool_subject(part, cwd)
    if subject:
        text.append(" " + subject, theme.TOOL_SUBJECT)
    elif part.state.status == "pending":
        text.append(" …", theme.META)
    if part.state.status == "running" and (shown := progress_text(part)):
        text.append(" · " + shown, theme.META)
    return text


def progress_text(part: ToolPart) -> str:
    """How far a running call has got, as its tool reported (an MCP server's progress): "3/5 (60%)
    message", "42 message" when the total is unknown; "" when nothing was reported."""
    shown = part.state.metadata.get("progress")
    if not isinstance(shown, dict) or not isinstance(shown.get("progress"), int | float):
        return ""
    done, total, message = shown["progress"], shown.get("total"), shown.get("message")
    text = f"{done:g}"
    if isinstance(total, int | float) and total > 0:
        text = f"{done:g}/{total:g} ({min(100, round(100 * done / total))}%)"
    return f"{text} {message}" if isinstance(message, str) and message else text


def tool_line(part: ToolPart, *, cwd: str | Path | None = None, width: int | None = None) -> OneLine:
    """The call's one line in any state: ◌ pending/running, ● completed, ✗ error.

    Clipped with "…" to the console's width when printed, or to ``width`` now if given."""
    state = part.state
    line = Text(no_wrap=True, overflow="ellipsis")
    if state.status == "error":
        line.append(theme.GLYPH_ERROR + " ", theme.TOOL_ERROR)
        line.append_text(tool_activity(part, cwd))
        line.append(": " + _error_text(part), theme.TOOL_FAILED_OUTCOME)
    elif state.status == "completed":
        outcome = tool_outcome(part)
        failed = outcome.startswith("→")
        line.append(theme.GLYPH_OK + " ", theme.TOOL_ERROR if failed else theme.TOOL_OK)
        line.append_text(tool_activity(part, cwd))
        if outcome:
            line.append(" " + outcome, theme.TOOL_FAILED_OUTCOME if failed else theme.TOOL_OUTCOME)
    else:
        line.append(theme.GLYPH_ACTIVE + " ", theme.TOOL_ACTIVE)
        line.append_text(tool_activity(part, cwd))
    if state.status in ("completed", "error") and state.time.end is not None:
        elapsed = state.time.end - state.time.start
        if elapsed >= _SHOW_DURATION_MS:
            line.append(" " + format_duration(elapsed), theme.META)
    if state.time.compacted is not None:
        line.append(" [pruned]", theme.PRUNED)
    if width is not None:
        line.truncate(width, overflow="ellipsis")
    return OneLine(line)


def tool_spinner(part: ToolPart, *, cwd: str | Path | None = None, spinner: str = "dots") -> OneLine:
    """A one-line spinner with the call's activity text, for a ``Live`` region while it runs."""
    return OneLine(Spinner(spinner, text=tool_activity(part, cwd), style=theme.TOOL_ACTIVE))
