"""One-line messages (notices, errors, warnings) in a terminal narrower than they are: wrapped between
words, the later lines indented under the first (a hanging indent), never cut inside a word as the
terminal's own wrapping does. Off a terminal a message stays one line, for logs and ``grep``.

A word longer than a whole line (a long path or URL) is the one thing split: at the line's end.
"""

from __future__ import annotations

import re
import shutil
import sys
from typing import TextIO

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from agentcli.ui import theme

INDENT = 2  # the hanging indent of a wrapped message's later lines
_WORD = re.compile(r"\S+")


def line_spans(plain: str, width: int, indent: int = INDENT) -> list[tuple[int, int]]:
    """Where to cut one line of text (no newline in it): (start, end) of each screen line, the first
    ``width`` cells wide, the later ones ``width - indent``. Leading spaces stay on the first line."""
    spans: list[tuple[int, int]] = []
    room = max(1, width)
    start = end = used = 0  # the screen line being filled is plain[start:end], ``used`` cells wide
    for match in _WORD.finditer(plain):
        s, e = match.span()
        gap, word = cell_len(plain[end:s]), cell_len(plain[s:e])
        if end > start and used + gap + word > room:  # the word starts the next line
            spans.append((start, end))
            room, start, end, used, gap = max(1, width - indent), s, s, 0, 0
        while used + gap + word > room:  # longer than a whole line: split where the line ends
            cut = _cut_at(plain, s, room - used - gap)
            spans.append((start, cut))
            room, start, s, used, gap = max(1, width - indent), cut, cut, 0, 0
            word = cell_len(plain[s:e])
        end, used = e, used + gap + word
    if end > start or not spans:
        spans.append((start, end))
    return spans


def _cut_at(plain: str, start: int, cells: int) -> int:
    """The index after as many characters from ``start`` as fill ``cells`` (at least one)."""
    used, index = 0, start
    while index < len(plain) and used + cell_len(plain[index]) <= cells:
        used += cell_len(plain[index])
        index += 1
    return max(index, start + 1)


def wrap_plain(text: str, width: int, indent: int = INDENT) -> str:
    """``text`` wrapped to ``width`` cells between words, later lines of each line indented."""
    pad = " " * indent
    out: list[str] = []
    for line in text.split("\n"):
        spans = line_spans(line, width, indent)
        out += [line[s:e] if n == 0 else pad + line[s:e] for n, (s, e) in enumerate(spans)]
    return "\n".join(out)


def for_stream(line: str, stream: TextIO | None = None) -> str:
    """``line`` as it should be written to ``stream`` (stderr by default): wrapped to the terminal's
    width when it is one, untouched for a pipe or a file."""
    stream = stream if stream is not None else sys.stderr
    if not getattr(stream, "isatty", lambda: False)():
        return line
    return wrap_plain(line, shutil.get_terminal_size().columns)


def stderr_console() -> Console:
    """The console for notices on stderr: rich's word wrapping on a terminal, one line per message
    (soft wrap) off one."""
    return Console(stderr=True, highlight=False, soft_wrap=not sys.stderr.isatty())


class Wrapped:
    """A message wrapped with a hanging indent to the console's width (markup given as a ``str``)."""

    def __init__(self, message: Text | str, indent: int = INDENT) -> None:
        self.text = Text.from_markup(message) if isinstance(message, str) else message
        self.indent = indent

    def lines(self, width: int) -> list[Text]:
        pad = " " * self.indent
        out: list[Text] = []
        for line in self.text.split("\n", allow_blank=True):
            for n, (s, e) in enumerate(line_spans(line.plain, width, self.indent)):
                piece = line[s:e]
                out.append(Text.assemble(pad, piece) if n else piece)
        return out

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if not console.is_terminal:
            yield self.text  # a pipe or a file: one line, as written
            return
        joined = Text("\n").join(self.lines(options.max_width))
        joined.no_wrap = True
        joined.end = self.text.end
        yield joined

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        width = min(options.max_width, max((line.cell_len for line in self.text.split("\n")), default=0))
        return Measurement(min(width, 1), width)


def described(rows: list[tuple[str, str]], *, indent: int = 2, gap: int = 2) -> Table:
    """Names and what they do, two columns: a description too long for the line wraps under its own
    column (never back under the names)."""
    table = Table.grid(padding=(0, gap, 0, 0), pad_edge=False)
    table.add_column(no_wrap=True)
    table.add_column(overflow="fold")
    for name, description in rows:
        table.add_row(Text(" " * indent + name), Text(description))
    return table


_ROW = re.compile(r"^  (\S.*?)\s{2,}(\S.*)$")  # "  /name [args]    what it does"


def help_renderable(text: str) -> Group:
    """A help text written for a wide terminal (rows of "  command  description", free lines, a line
    indented further continuing the one above) laid out for the console's width."""
    logical: list[str] = []
    for line in text.splitlines():
        if logical and line.startswith("   ") and not _ROW.match(line):
            logical[-1] += " " + line.strip()
        else:
            logical.append(line)
    parts: list[Table | Wrapped] = []
    rows: list[tuple[str, str]] = []
    for line in logical:
        if (row := _ROW.match(line)) is not None:
            rows.append((row.group(1), row.group(2)))
            continue
        if rows:
            parts.append(described(rows))
            rows = []
        label = line.find(": ")
        parts.append(Wrapped(Text(line), indent=label + 2 if 0 < label < 24 else INDENT))
    if rows:
        parts.append(described(rows))
    return Group(*parts)


def error_line(message: str, note: str = "") -> Wrapped:
    """ "error: message" (``note`` dimmed after it), wrapped as any notice."""
    return Wrapped(
        Text.assemble(("error:", theme.ERROR), " ", message, (f" {note}" if note else "", theme.META))
    )


def warning_line(message: str) -> Wrapped:
    return Wrapped(Text.assemble(("warning:", "yellow"), " ", message))
