"""read: a file's lines, numbered, a page at a time (OpenCode's current output format)."""

from __future__ import annotations

import base64
import difflib
import io
import mimetypes
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field

from agentcli.store.records import Attachment
from agentcli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agentcli.tools.common import check_abort, check_access, display, refuse_special, resolve
from agentcli.tools.params import ToolParams

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
LINE_CUT_SUFFIX = f"... (line truncated to {MAX_LINE_CHARS} chars)"
MAX_BYTES = 50 * 1024

BINARY_EXTENSIONS = frozenset(
    [
        ".zip",
        ".tar",
        ".gz",
        ".tgz",
        ".bz2",
        ".xz",
        ".7z",
        ".rar",
        ".exe",
        ".dll",
        ".so",
        ".dylib",
        ".class",
        ".jar",
        ".war",
        ".doc",
        ".docx",
        ".xls",
        ".xlsx",
        ".ppt",
        ".pptx",
        ".odt",
        ".ods",
        ".odp",
        ".bin",
        ".dat",
        ".obj",
        ".o",
        ".a",
        ".lib",
        ".wasm",
        ".pyc",
        ".pyo",
        ".whl",
        ".sqlite",
        ".db",
    ]
)

DESCRIPTION = """Read a file from the local filesystem.

Usage:
- filePath should be an absolute path; a relative path is taken relative to the working directory.
- By default up to 2000 lines are returned, starting at the first line.
- offset is the 1-based line number to start from and limit the number of lines to return; for
  long files read the part you need, otherwise read the whole file by leaving both out.
- Lines longer than 2000 characters are cut.
- Each line is prefixed with its line number ("12: text"); the line number and its colon are not
  part of the file's content.
- A note at the end says whether more lines remain and which offset continues.
- Images and PDF files are returned as attachments you can see.
- Binary files cannot be read. To see a directory's contents use the list tool.
- Call this tool for several files at once when they may all be useful."""


@dataclass
class _Page:
    lines: list[str] = field(default_factory=list)
    count: int = 0  # lines in the file (counted to the end even past the page)
    more: bool = False  # lines remain after the page
    cut: bool = False  # the byte cap stopped the page


def _text_page(path: Path, offset: int, limit: int, ctx: ToolContext) -> _Page:
    """The page from the editor's buffer when one holds the file (``ctx.files``), else from disk.
    Universal newlines either way: \n, \r\n and \r all end a line, as in OpenCode's readline."""
    held = ctx.files.read_text(path) if ctx.files is not None else None
    if held is not None:
        return _read_page(io.StringIO(held, newline=None), offset, limit, ctx)
    with path.open(encoding="utf-8", errors="replace", newline=None) as fh:
        return _read_page(fh, offset, limit, ctx)


def _read_page(lines: Iterable[str], offset: int, limit: int, ctx: ToolContext) -> _Page:
    page = _Page()
    size = 0
    for raw in lines:
        page.count += 1
        if page.count % 50_000 == 0:
            check_abort(ctx)  # counting the lines of a huge file must not outlive an abort
        if page.count < offset or page.more:
            continue
        if len(page.lines) >= limit:
            page.more = True
            continue
        text = raw.rstrip("\n")
        if len(text) > MAX_LINE_CHARS:
            text = text[:MAX_LINE_CHARS] + LINE_CUT_SUFFIX
        cost = len(text.encode("utf-8")) + (1 if page.lines else 0)
        if size + cost > MAX_BYTES:
            page.cut = page.more = True
            continue  # keep counting so the note can say how long the file is
        page.lines.append(text)
        size += cost
    return page


def is_binary(path: Path) -> bool:
    """Known binary extensions, a NUL byte, or mostly control characters in the first 4 KB."""
    if path.suffix.lower() in BINARY_EXTENSIONS:
        return True
    with path.open("rb") as fh:
        sample = fh.read(4096)
    if not sample:
        return False
    if b"\x00" in sample:
        return True
    control = sum(1 for b in sample if b < 9 or 13 < b < 32)
    return control / len(sample) > 0.3


def media_type(path: Path) -> str | None:
    """The MIME type when the file is an image or a PDF the model can be shown."""
    mime, _ = mimetypes.guess_type(path.name)
    if mime == "application/pdf" or (mime and mime.startswith("image/") and mime != "image/svg+xml"):
        return mime
    return None


def _not_found(path: Path) -> ToolError:
    """'File not found', with up to three close names from the same directory."""
    try:
        names = [p.name for p in path.parent.iterdir()]
    except OSError:
        names = []
    base = path.name.lower()
    similar = [n for n in names if base in n.lower() or n.lower() in base]
    similar += [n for n in difflib.get_close_matches(path.name, names, n=3, cutoff=0.6) if n not in similar]
    if similar:
        hints = ", ".join(str(path.parent / n) for n in similar[:3])
        return ToolError(f"File not found: {path}. Did you mean one of these? {hints}")
    return ToolError(f"File not found: {path}")


class ReadParams(ToolParams):
    filePath: str = Field(description="The absolute path to the file to read")
    offset: int | None = Field(None, description="The line number to start reading from (1-indexed)")
    limit: int | None = Field(None, description="The maximum number of lines to read (defaults to 2000)")


class ReadTool(Tool[ReadParams]):
    name = "read"
    description = DESCRIPTION
    params = ReadParams
    self_truncates = True  # pages by lines and bytes itself; the note tells the model how to go on

    def execute(self, args: ReadParams, ctx: ToolContext) -> ToolResult:
        offset = 1 if args.offset is None else args.offset
        limit = DEFAULT_LIMIT if args.limit is None else args.limit
        if offset < 1:
            raise ToolError("offset must be greater than or equal to 1")
        if limit < 1:
            raise ToolError("limit must be greater than or equal to 1")
        path = resolve(ctx, args.filePath)
        title = display(ctx, path)
        check_access(ctx, path, "read", reading=True)
        if not path.exists():
            raise _not_found(path)
        if path.is_dir():
            raise ToolError(
                f"Path is a directory, not a file: {path}. Use the list tool to see its contents."
            )
        refuse_special(path)

        mime = media_type(path)
        if mime:
            kind = "PDF" if mime == "application/pdf" else "Image"
            url = f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"
            ctx.file_times.record_read(path)
            return ToolResult(
                output=f"{kind} read successfully",
                title=title,
                metadata={"preview": f"{kind} read successfully", "truncated": False},
                attachments=[Attachment(mime=mime, filename=path.name, url=url)],
            )
        if is_binary(path):
            raise ToolError(f"Cannot read binary file: {path}")

        page = _text_page(path, offset, limit, ctx)
        if page.count < offset and not (page.count == 0 and offset == 1):
            raise ToolError(f"Offset {offset} is out of range for this file ({page.count} lines)")

        body = "\n".join(f"{offset + i}: {line}" for i, line in enumerate(page.lines))
        last = offset + len(page.lines) - 1
        if page.cut:
            note = (
                f"(Output capped at {MAX_BYTES // 1024} KB. Showing lines {offset}-{last}. "
                f"Use offset={last + 1} to continue.)"
            )
        elif page.more:
            note = f"(Showing lines {offset}-{last} of {page.count}. Use offset={last + 1} to continue.)"
        else:
            note = f"(End of file - total {page.count} lines)"
        output = f"<path>{path}</path>\n<type>file</type>\n<content>\n{body}\n\n{note}\n</content>"
        ctx.file_times.record_read(path)
        return ToolResult(
            output=output,
            title=title,
            metadata={"preview": "\n".join(page.lines[:20]), "truncated": page.more},
        )
