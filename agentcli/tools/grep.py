"""grep: lines matching a regular expression, grouped by file, newest files first.

Uses ripgrep when it is on PATH (fast, honours every .gitignore); otherwise a pure-Python
search with ``re`` over the same tree walk that glob and list use.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentcli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agentcli.tools.common import (
    check_abort,
    check_access,
    first_line,
    is_inside,
    is_secret,
    refuse_special,
    resolve,
    special_kind,
)
from agentcli.tools.walk import matches, mtime, walk_files

LIMIT = 100
MAX_LINE_CHARS = 2000
_SNIFF_BYTES = 8192

DESCRIPTION = """Search file contents with a regular expression, in a codebase of any size.

Usage:
- pattern is a regular expression, e.g. "log.*Error" or "function\\s+\\w+".
- include limits the search to files matching a glob, e.g. "*.js" or "*.{ts,tsx}".
- path is the directory (or file) to search; default: the working directory.
- Returns matching lines with their file path and line number, files most recently modified
  first, at most 100 matches.
- Binary files, .env files, folders such as .git and node_modules, and what .gitignore lists are
  skipped (grep a .env file by its path to be given it, if the user allows).
- To find files by name use the glob tool. Call several searches at once when useful."""


@dataclass
class Match:
    path: Path
    line: int
    text: str


def _rg_text(field: dict[str, Any]) -> str:
    if "text" in field:
        return str(field["text"])
    return base64.b64decode(field.get("bytes", "")).decode("utf-8", errors="replace")


def _run_aborting(cmd: list[str], ctx: ToolContext) -> tuple[int, bytes, bytes]:
    """Run ripgrep, killing it as soon as the call is aborted."""
    with subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL
    ) as proc:
        box: dict[str, bytes] = {}
        reader = threading.Thread(
            target=lambda: box.update(zip(("out", "err"), proc.communicate(), strict=True)), daemon=True
        )
        reader.start()
        while reader.is_alive():
            reader.join(0.05)
            if ctx.abort.is_set():
                proc.kill()
                reader.join(1)
                check_abort(ctx)
        return proc.returncode, box.get("out", b""), box.get("err", b"")


def search_rg(rg: str, pattern: str, target: Path, include: str | None, ctx: ToolContext) -> list[Match]:
    cmd = [
        rg,
        "--json",
        "--hidden",
        "--glob",
        "!.git/*",
        "--glob",
        "!.env",
        "--glob",
        "!.env.*",
        "--regexp",
        pattern,
    ]
    if include:
        cmd += ["--glob", include]
    code, stdout, stderr = _run_aborting([*cmd, "--", str(target)], ctx)
    if code == 2 and not stdout:
        raise ToolError(f"grep failed: {first_line(stderr.decode('utf-8', errors='replace'))}")
    found: list[Match] = []
    for raw in stdout.splitlines():
        event = json.loads(raw)
        if event.get("type") != "match":
            continue
        data = event["data"]
        text = _rg_text(data["lines"]).rstrip("\r\n")
        found.append(Match(Path(_rg_text(data["path"])), int(data["line_number"]), text))
    return found


def _is_binary(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return b"\x00" in fh.read(_SNIFF_BYTES)
    except OSError:
        return True


def _may_search(path: Path, ctx: ToolContext) -> bool:
    real = Path(os.path.realpath(path)) if path.is_symlink() else path
    return not is_secret(real) and (real is path or is_inside(real, Path(os.path.realpath(ctx.root))))


def search_python(regex: re.Pattern[str], target: Path, include: str | None, ctx: ToolContext) -> list[Match]:
    files = [(target, target.name)] if target.is_file() else walk_files(target)
    found: list[Match] = []
    for path, rel in files:
        check_abort(ctx)
        if include and not matches(include, rel):
            continue
        if path != target and not _may_search(path, ctx):
            continue  # credential files and links out of the project are only read when asked by path
        if special_kind(path) or _is_binary(path):
            continue  # a FIFO or device would block the search forever
        try:
            with path.open(encoding="utf-8", errors="replace") as fh:
                for number, line in enumerate(fh, start=1):
                    if number % 50_000 == 0:
                        check_abort(ctx)
                    if regex.search(line):
                        found.append(Match(path, number, line.rstrip("\r\n")))
        except OSError:
            continue  # unreadable files are skipped, as ripgrep does
    return found


def _compile(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ToolError(f"Invalid regex pattern {pattern!r}: {exc}") from None


class GrepTool(Tool):
    name = "grep"
    description = DESCRIPTION
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "The regex pattern to search for in file contents"},
            "path": {
                "type": "string",
                "description": "The directory to search in. Defaults to the current working directory.",
            },
            "include": {
                "type": "string",
                "description": 'File pattern to include in the search (e.g. "*.js", "*.{ts,tsx}")',
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }

    def __init__(self, use_ripgrep: bool = True) -> None:
        self.use_ripgrep = use_ripgrep

    def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        pattern: str = args["pattern"]
        if not pattern:
            raise ToolError("pattern is required")
        target = resolve(ctx, args.get("path") or ".")
        check_access(ctx, target, "grep", reading=True)
        if not target.exists():
            raise ToolError(f"Search path not found: {target}")
        refuse_special(target)
        include = args.get("include") or None
        rg = shutil.which("rg") if self.use_ripgrep else None
        found = (
            search_rg(rg, pattern, target, include, ctx)
            if rg
            else search_python(_compile(pattern), target, include, ctx)
        )

        times: dict[Path, float] = {}
        for m in found:
            if m.path not in times:
                times[m.path] = mtime(m.path)
        found.sort(key=lambda m: (-times[m.path], str(m.path), m.line))
        if not found:
            return ToolResult(
                output="No files found", title=pattern, metadata={"matches": 0, "truncated": False}
            )

        shown = found[:LIMIT]
        truncated = len(found) > LIMIT
        lines = [f"Found {len(found)} matches" + (f" (showing the first {LIMIT})" if truncated else "")]
        current: Path | None = None
        for m in shown:
            if m.path != current:
                if current is not None:
                    lines.append("")
                current = m.path
                lines.append(f"{m.path}:")
            text = m.text if len(m.text) <= MAX_LINE_CHARS else m.text[:MAX_LINE_CHARS] + "..."
            lines.append(f"  Line {m.line}: {text}")
        if truncated:
            lines += ["", "(Results truncated. Consider using a more specific path or pattern.)"]
        return ToolResult(
            output="\n".join(lines),
            title=pattern,
            metadata={"matches": len(found), "truncated": truncated},
        )
