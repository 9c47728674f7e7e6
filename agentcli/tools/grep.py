"""grep: lines matching a regular expression, grouped by file, newest files first.

Uses ripgrep when it is on PATH (fast, honours every .gitignore); otherwise a pure-Python
search with ``re`` over the same tree walk that glob and list use.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from pydantic import Field

from agentcli.tools.base import PermissionRequest, Tool, ToolContext, ToolError, ToolResult
from agentcli.tools.common import (
    check_abort,
    check_access,
    display,
    first_line,
    is_inside,
    is_secret,
    refuse_special,
    resolve,
    special_kind,
)
from agentcli.tools.params import ToolParams
from agentcli.tools.walk import matches, mtime, walk_files

LIMIT = 100
COLLECT = 10 * LIMIT  # matches read before ripgrep is stopped: sorting a million only to show 100 is waste
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
  skipped (grep a .env file by its path, or name it in include, to be given it if the user allows).
- To find files by name use the glob tool. Call several searches at once when useful."""


@dataclass
class Match:
    path: Path
    line: int
    text: str


@dataclass
class Found:
    """Matches as they are read, up to COLLECT; those in files that may hold credentials apart,
    until the user allows reading them."""

    matches: list[Match] = field(default_factory=list)
    secret: list[Match] = field(default_factory=list)
    capped: bool = False  # stopped reading at COLLECT: there are more

    def add(self, match: Match) -> bool:
        """Keep one match; False once full (the search should stop)."""
        (self.secret if is_secret(match.path) else self.matches).append(match)
        self.capped = len(self.matches) + len(self.secret) >= COLLECT
        return not self.capped


def _rg_command(rg: str, pattern: str, target: Path, include: str | None) -> list[str]:
    cmd = [
        rg, "--no-config", "--no-heading", "--with-filename", "--line-number", "--null", "--color", "never",
        # A 10 MB minified line comes back as its first columns, not 10 MB per match.
        "--max-columns", str(MAX_LINE_CHARS), "--max-columns-preview", "--hidden", "--glob", "!.git/*",
    ]  # fmt: skip
    if include:
        cmd += ["--glob", include]  # .env files it names are searched, and asked about before shown
    else:
        cmd += ["--glob", "!.env", "--glob", "!.env.*"]
    return [*cmd, "--regexp", pattern, "--", str(target)]


def _kill_on_abort(proc: subprocess.Popen[bytes], ctx: ToolContext, done: threading.Event) -> None:
    while not done.wait(0.05):
        if ctx.abort.is_set():
            proc.kill()
            return


def _drain(stream: IO[bytes], head: bytearray) -> None:
    """Read ripgrep's errors to the end (a full pipe would stall it), keeping the first few."""
    head.extend(stream.read(4096))
    while stream.read(65536):
        pass


def search_rg(rg: str, pattern: str, target: Path, include: str | None, ctx: ToolContext) -> Found:
    """Stream ripgrep's output, stopping it once COLLECT matches are in."""
    found = Found()
    errors = bytearray()
    with subprocess.Popen(
        _rg_command(rg, pattern, target, include),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        err = proc.stderr
        drain = threading.Thread(target=_drain, args=(err, errors), daemon=True)
        done = threading.Event()
        watcher = threading.Thread(target=_kill_on_abort, args=(proc, ctx, done), daemon=True)
        drain.start()
        watcher.start()
        try:
            pending = b""
            for raw in proc.stdout:
                record = pending + raw
                path, sep, rest = record.partition(b"\0")
                if not sep:
                    pending = record  # a file name with a newline in it: the record goes on
                    continue
                pending = b""
                number, _, text = rest.partition(b":")
                line = text.rstrip(b"\r\n").decode("utf-8", errors="replace")
                at = int(number) if number.isdigit() else 0
                if not found.add(Match(Path(os.fsdecode(path)), at, line)):
                    break
        finally:
            done.set()
            if proc.poll() is None:
                proc.kill()
            drain.join(1)
    check_abort(ctx)
    if proc.returncode == 2 and not (found.matches or found.secret) and not found.capped:
        raise ToolError(f"grep failed: {first_line(errors.decode('utf-8', errors='replace'))}")
    return found


def _is_binary(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return b"\x00" in fh.read(_SNIFF_BYTES)
    except OSError:
        return True


def _may_search(path: Path, ctx: ToolContext, include: str | None) -> bool:
    """Links out of the project are only read when asked by path; credential files only when
    ``include`` names them (and then asked about before shown)."""
    real = Path(os.path.realpath(path)) if path.is_symlink() else path
    if is_secret(real) and (not include or real is not path):
        return False
    return real is path or is_inside(real, Path(os.path.realpath(ctx.root)))


def search_python(regex: re.Pattern[str], target: Path, include: str | None, ctx: ToolContext) -> Found:
    files = [(target, target.name)] if target.is_file() else walk_files(target)
    found = Found()
    for path, rel in files:
        check_abort(ctx)
        if include and not matches(include, rel):
            continue
        if path != target and not _may_search(path, ctx, include):
            continue
        if special_kind(path) or _is_binary(path):
            continue  # a FIFO or device would block the search forever
        try:
            with path.open(encoding="utf-8", errors="replace") as fh:
                for number, line in enumerate(fh, start=1):
                    if number % 50_000 == 0:
                        check_abort(ctx)
                    if regex.search(line):
                        text = line.rstrip("\r\n")
                        if not found.add(Match(path, number, text[: MAX_LINE_CHARS + 1])):
                            return found
        except OSError:
            continue  # unreadable files are skipped, as ripgrep does
    return found


def _compile(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ToolError(f"Invalid regex pattern {pattern!r}: {exc}") from None


def allowed_secrets(found: Found, ctx: ToolContext, target: Path) -> tuple[list[Match], str]:
    """Matches in credential files (.env) are shown only where the user allows reading the file —
    the question ``read`` asks for it, file by file — or searched that very file by path."""
    paths = sorted({m.path for m in found.secret})
    if not paths or is_secret(Path(os.path.realpath(target))):
        return found.secret, ""  # grep .env (or ~/.ssh) by path: check_access asked already
    refused = []
    for path in paths:
        real = str(Path(os.path.realpath(path)))
        request = PermissionRequest(
            tool="read", title=f"grep {real} (a file that may hold credentials)", patterns=[real]
        )
        if ctx.ask(request) == "deny":
            refused.append(path)
    if not refused:
        return found.secret, ""
    shown = [m for m in found.secret if m.path not in refused]
    names = ", ".join(display(ctx, p) for p in refused[:5]) + (" …" if len(refused) > 5 else "")
    return (
        shown,
        f"(matches in files that may hold credentials are not shown, reading them was refused: {names})",
    )


class GrepParams(ToolParams):
    pattern: str = Field(description="The regex pattern to search for in file contents")
    path: str | None = Field(
        None, description="The directory to search in. Defaults to the current working directory."
    )
    include: str | None = Field(
        None, description='File pattern to include in the search (e.g. "*.js", "*.{ts,tsx}")'
    )


class GrepTool(Tool[GrepParams]):
    name = "grep"
    description = DESCRIPTION
    params = GrepParams

    def __init__(self, use_ripgrep: bool = True) -> None:
        self.use_ripgrep = use_ripgrep

    def execute(self, args: GrepParams, ctx: ToolContext) -> ToolResult:
        pattern = args.pattern
        if not pattern:
            raise ToolError("pattern is required")
        target = resolve(ctx, args.path or ".")
        check_access(ctx, target, "grep", reading=True)
        if not target.exists():
            raise ToolError(f"Search path not found: {target}")
        refuse_special(target)
        include = args.include or None
        rg = shutil.which("rg") if self.use_ripgrep else None
        search = (
            search_rg(rg, pattern, target, include, ctx)
            if rg
            else search_python(_compile(pattern), target, include, ctx)
        )
        secret, note = allowed_secrets(search, ctx, target)
        found = search.matches + secret

        times: dict[Path, float] = {}
        for m in found:
            if m.path not in times:
                times[m.path] = mtime(m.path)
        found.sort(key=lambda m: (-times[m.path], str(m.path), m.line))
        if not found:
            return ToolResult(
                output="\n\n".join(filter(None, ["No files found", note])),
                title=pattern,
                metadata={"matches": 0, "truncated": False},
            )
        return ToolResult(
            output=_report(found, search.capped, note),
            title=pattern,
            metadata={"matches": len(found), "truncated": len(found) > LIMIT or search.capped},
        )


def _report(found: list[Match], capped: bool, note: str) -> str:
    truncated = len(found) > LIMIT or capped
    count = f"more than {len(found)}" if capped else str(len(found))
    lines = [f"Found {count} matches" + (f" (showing the first {LIMIT})" if truncated else "")]
    current: Path | None = None
    for m in found[:LIMIT]:
        if m.path != current:
            if current is not None:
                lines.append("")
            current = m.path
            lines.append(f"{m.path}:")
        text = m.text if len(m.text) <= MAX_LINE_CHARS else m.text[:MAX_LINE_CHARS] + "..."
        lines.append(f"  Line {m.line}: {text}")
    if truncated:
        lines += ["", "(Results truncated. Consider using a more specific path or pattern.)"]
    if note:
        lines += ["", note]
    return "\n".join(lines)
