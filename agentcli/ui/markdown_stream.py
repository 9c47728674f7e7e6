"""Streaming markdown that keeps the terminal's scrollback intact, at a cost per update that follows
the new text, not the whole reply.

The reply is cut into finished blocks as it grows (at blank lines outside code fences, and between the
items of a list). Only the text after the last cut is rendered on each update, together with the one
block before it (the *anchor*) so that spacing between blocks comes out exactly as rich renders the
whole document; the anchor's own lines are dropped. Of those rendered lines, all but the last few are
printed once, above a small ``Live`` region; only that unstable tail is repainted (Aider's approach:
repainting a tall Live region breaks scrollback, printing finished lines does not). Repaints are
coalesced to the frame rate: an update that comes too soon is drawn by a timer at the next frame.

On a console that cannot repaint (a pipe, a file, TERM=dumb) the raw markdown is written instead,
line by line as lines complete, so ``agentcli run … > out.md`` gives the reply verbatim.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterable, Iterator
from types import TracebackType

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich.console import Console, ConsoleOptions, RenderResult
from rich.live import Live
from rich.markdown import Markdown
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from agentcli.ui import theme

_TARGET_DELAY = 1 / 20  # 20 frames a second when rendering is cheap
_MAX_DELAY = 2.0  # never slower than this, however long the reply gets
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r"^([-*+]|\d{1,9}[.)])( |$)")


class _Markdown(Markdown):
    """rich's Markdown with one shared parser: building a MarkdownIt parser costs more than parsing a
    block, and a stream parses on every frame. (The attributes are the ones rich's __init__ sets.)"""

    _parser: MarkdownIt | None = None

    def __init__(self, markup: str, code_theme: str = "monokai") -> None:
        parser = _Markdown._parser
        if parser is None:
            parser = _Markdown._parser = MarkdownIt().enable("strikethrough").enable("table")
        self.markup = markup
        self.parsed = parser.parse(markup)
        self.code_theme = code_theme
        self.justify = None
        self.style = "none"
        self.hyperlinks = True
        self.inline_code_lexer = None
        self.inline_code_theme = code_theme
        # Filled while rendering: for each top-level block, its first source line -> how many lines
        # were rendered before it. A prefix of whole blocks renders as the whole document's first
        # lines, so this counts a cut's lines without rendering the prefix again.
        self.lines_before: dict[int, int] = {}
        self._newlines = 0

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        self.lines_before, self._newlines = {}, 0
        for item in super().__rich_console__(console, options):
            if isinstance(item, Segment) and "\n" in item.text:
                self._newlines += item.text.count("\n")
            yield item

    def _flatten_tokens(self, tokens: Iterable[Token]) -> Iterator[Token]:
        # rich pulls tokens lazily: when a top-level block's first token is pulled, every segment of
        # the blocks before it has been yielded (and counted) and none of its own.
        for token in super()._flatten_tokens(tokens):
            if token.level == 0 and token.nesting >= 0 and token.map is not None:
                self.lines_before.setdefault(token.map[0], self._newlines)
            yield token


class MarkdownStream:
    """Feed ``append(delta)`` (or ``update(text_so_far)``) as text arrives, then ``finish()`` once.

    ``style`` is laid over everything rendered (the dim reasoning look); ``live_window`` is how many
    trailing lines stay repaintable; ``min_delay`` is the shortest time between repaints (it grows
    when rendering gets slow; 0 repaints on every update).
    """

    def __init__(
        self,
        console: Console,
        *,
        style: str | None = None,
        live_window: int = 6,
        code_theme: str = "monokai",
        min_delay: float = _TARGET_DELAY,
    ) -> None:
        self.console = console
        self.style = Style.parse(style) if style else None
        self.live_window = live_window
        self.code_theme = code_theme
        self.target_delay = min_delay
        self.min_delay = min_delay
        self._parts: list[str] = []  # everything so far, joined on demand
        self._length = 0
        self._lock = threading.RLock()
        self._timer: threading.Timer | None = None
        self._live: Live | None = None
        self._last_render = 0.0
        self._finished = False
        # Terminal: source = anchor + tail; lines of the anchor's own render are not shown again.
        self._anchor = ""  # the last cut-off block (context for spacing), already on screen
        self._anchor_lines = 0
        self._anchor_gap = True  # a blank line follows the anchor (False: a line break inside a list)
        self._tail: list[str] = []  # source after the last cut
        self._printed = 0  # lines after the anchor's that are printed above the Live region
        self._plain: bool | None = None
        # Plain: the part of the current line not written yet.
        self._pending_line: list[str] = []
        self._last_lines: tuple[tuple[str, int], list[list[Segment]]] | None = None
        self._last_markdown: _Markdown | None = None  # the last render's, for its block boundaries

    # --- public --------------------------------------------------------------------------

    @property
    def plain(self) -> bool:
        """True when the console cannot repaint (a pipe, a file, TERM=dumb): raw text goes out
        instead of rendered markdown. (Asked once: it is a system call per delta otherwise.)"""
        if self._plain is None:
            self._plain = not self.console.is_terminal or self.console.is_dumb_terminal
        return self._plain

    @property
    def text(self) -> str:
        if len(self._parts) > 1:
            self._parts[:] = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    def append(self, delta: str) -> None:
        """Add newly arrived text."""
        if not delta:
            return
        with self._lock:
            if self._finished:
                return
            self._parts.append(delta)
            self._length += len(delta)
            if self.plain:
                self._write_plain(delta, final=False)
                return
            self._tail.append(delta)
            self._draw_when_due()

    def update(self, text: str) -> None:
        """The whole text so far: the new end is appended; a text that is not a continuation
        starts afresh below what was shown (nothing is lost)."""
        with self._lock:
            if self._finished:
                return
            if len(text) >= self._length and text.startswith(self.text):
                self.append(text[self._length :])
                return
            self._restart()
            self.append(text)

    def finish(self, text: str | None = None) -> None:
        """Print whatever is left and release the terminal. Safe to call more than once."""
        with self._lock:
            if self._finished:
                return
            if text is not None:
                self.update(text)
            self._finished = True
            self._cancel_timer()
            if self.plain:
                self._write_plain("", final=True)
                return
            try:
                self._render(final=True)
            finally:
                self._stop_live()

    def __enter__(self) -> MarkdownStream:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.finish()

    # --- plain (not a terminal) ---------------------------------------------------------

    def _write_plain(self, delta: str, *, final: bool) -> None:
        # Only whole lines go out before the end, so nothing written ever needs taking back.
        cut = delta.rfind("\n")
        if cut >= 0:
            self._emit("".join(self._pending_line) + delta[: cut + 1])
            self._pending_line = [delta[cut + 1 :]] if cut + 1 < len(delta) else []
        elif delta:
            self._pending_line.append(delta)
        if final:
            rest = "".join(self._pending_line)
            if rest:
                self._emit(rest + "\n")
            self._pending_line = []

    def _emit(self, chunk: str) -> None:
        self.console.print(chunk, end="", style=self.style, markup=False, highlight=False, soft_wrap=True)

    # --- terminal -----------------------------------------------------------------------

    def _restart(self) -> None:
        """Close what is shown and begin again with an empty text (a replaced, not extended, reply)."""
        if self.plain:
            self._write_plain("", final=True)
            if self._length:
                self._emit("\n")
        else:
            self._render(final=True)
            self._stop_live()
            self._anchor, self._anchor_lines, self._anchor_gap, self._tail, self._printed = "", 0, True, [], 0
        self._parts, self._length = [], 0

    def _draw_when_due(self) -> None:
        wait = self._last_render + self.min_delay - time.monotonic()
        if wait <= 0:
            self._cancel_timer()
            self._render(final=False)
        elif self._timer is None:  # coalesce: one repaint at the next frame, however many updates
            self._timer = threading.Timer(wait, self._on_timer)
            self._timer.daemon = True
            self._timer.start()

    def _on_timer(self) -> None:
        with self._lock:
            self._timer = None
            if not self._finished:
                self._render(final=False)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _stop_live(self) -> None:
        if self._live is not None:
            self._live.update(Text(""), refresh=True)
            self._live.stop()
            self._live = None

    def _render_lines(self, source: str) -> list[list[Segment]]:
        # The same source is often rendered twice in a row (a cut's block with no anchor before it
        # is both the joined text and the block): the last render is kept for the next call.
        width = self.console.width
        if self._last_lines is not None and self._last_lines[0] == (source, width):
            return self._last_lines[1]
        markdown = _Markdown(source, code_theme=self.code_theme)
        options = self.console.options.update(width=width)
        lines = self.console.render_lines(markdown, options, pad=False)
        if self.style is not None:
            lines = [list(Segment.apply_style(line, post_style=self.style)) for line in lines]
        self._last_lines = ((source, width), lines)
        self._last_markdown = markdown
        return lines

    def _prefix_lines(self, rendered: _Markdown | None, tail: str, start: int, end: int) -> int:
        """How many lines ``_joined(tail[:start])`` renders to, where ``tail[end:]`` begins a
        top-level block: read off ``rendered`` (the render of ``_joined(tail)``) when it can be (a
        cut between the items of a list is inside one block, so that prefix is rendered)."""
        if rendered is not None:
            line = rendered.markup.count("\n", 0, len(rendered.markup) - len(tail) + end)
            before = rendered.lines_before.get(line)
            if before is not None:
                return before
        return len(self._render_lines(self._joined(tail[:start])))

    def _render(self, *, final: bool) -> None:
        started = time.monotonic()
        tail = "".join(self._tail)
        self._tail = [tail] if tail else []
        lines = self._render_lines(self._joined(tail))[self._anchor_lines :] if tail else []
        stable = len(lines) if final else max(0, len(lines) - self.live_window)

        if self._live is None and not final:
            self._live = Live(Text(""), console=self.console, auto_refresh=False, transient=True)
            self._live.start()

        if stable > self._printed:
            # Through the Live's console, so the lines land above the repainted region.
            self.console.print(_to_text(lines[self._printed : stable]), soft_wrap=True, highlight=False)
            self._printed = stable

        if self._live is not None:
            self._live.update(_to_text(lines[self._printed :]), refresh=True)
        if not final:
            self._cut(tail, lines)

        # Adaptive throttle: a render that took 10 ms allows at most one per 100 ms.
        elapsed = time.monotonic() - started
        if self.target_delay > 0:  # 0 turns throttling off altogether
            self.min_delay = min(max(elapsed * 10, self.target_delay), _MAX_DELAY)
        self._last_render = time.monotonic()

    def _joined(self, tail: str) -> str:
        if not self._anchor:
            return tail
        return self._anchor + ("\n\n" if self._anchor_gap else "\n") + tail

    def _cut(self, tail: str, lines: list[list[Segment]]) -> None:
        """Move finished blocks whose lines are all printed out of the tail, so later renders skip them."""
        if not self._printed:
            return
        tries = 0
        cuts = _cuts(tail)
        rendered = self._last_markdown
        if rendered is not None and rendered.markup != self._joined(tail):
            rendered = None
        for i in range(len(cuts) - 1, -1, -1):
            start, end, gap = cuts[i]
            if tail.count("\n", end) < self.live_window:
                continue  # its lines are surely still in the live region
            block = tail[:start]
            block_lines = self._prefix_lines(rendered, tail, start, end) - self._anchor_lines
            if 0 < block_lines <= self._printed:
                # The anchor is the last finished block alone: when many blocks came at once, later
                # renders must not carry all of them along.
                self._anchor = tail[cuts[i - 1][1] : start] if i else block
                self._anchor_gap = gap
                self._anchor_lines = len(self._render_lines(self._anchor))
                self._printed -= block_lines
                self._tail = [tail[end:]] if end < len(tail) else []
                return
            tries += 1
            if tries == 3:
                return


def _cuts(tail: str) -> list[tuple[int, int, bool]]:
    """The places the source can be cut between finished blocks: (end of the block, start of the
    next, whether a blank line separates them). Cuts at blank lines outside code fences before an
    unindented line, and between the items of a tight list. The text after a cut must have begun."""
    found: list[tuple[int, int, bool]] = []
    fence: str | None = None
    position = 0
    previous_item = False
    previous_blank = False
    block_end = 0
    for line in tail.splitlines(keepends=True):
        start = position
        position += len(line)
        if not line.endswith("\n"):
            break  # an unfinished line: nothing after it can be judged yet
        bare = line.rstrip("\r\n")
        fenced = _FENCE.match(bare)
        if fence is not None:
            if (
                fenced
                and fenced.group(1)[0] == fence[0]
                and len(fenced.group(1)) >= len(fence)
                and not bare.strip().strip(fence[0])
            ):
                fence = None
            previous_blank = previous_item = False
            block_end = position
            continue
        if not bare.strip():
            previous_blank = True
            continue
        item = bool(_LIST_ITEM.match(bare))
        if start > 0 and not bare[0].isspace():
            if previous_blank and not item and block_end > 0:
                found.append((block_end - 1, start, True))
            elif item and previous_item and not previous_blank:
                found.append((start - 1, start, False))
        if fenced:
            fence = fenced.group(1)
        previous_item = item or (previous_item and bare[0].isspace())
        previous_blank = False
        block_end = position
    return found


class ReasoningStream(MarkdownStream):
    """The model's reasoning: the same stream, dimmed, so it reads as an aside."""

    def __init__(self, console: Console, *, live_window: int = 6, min_delay: float = _TARGET_DELAY) -> None:
        super().__init__(console, style=theme.REASONING, live_window=live_window, min_delay=min_delay)


def _to_text(lines: list[list[Segment]]) -> Text:
    """Rendered lines back into one ``Text``, without re-wrapping (they already fit the width)."""
    text = Text(no_wrap=True, overflow="ignore", end="")
    for i, line in enumerate(lines):
        if i:
            text.append("\n")
        for segment in _strip_padding(line):
            text.append(segment.text, segment.style)
    return text


def _strip_padding(line: list[Segment]) -> list[Segment]:
    """Drop the invisible trailing spaces Markdown pads lines with (they pollute copy-paste), but
    keep padding that paints a background, such as a code block's."""
    segments = [s for s in line if not s.control and s.text != "\n"]
    while segments:
        last = segments[-1]
        if last.style is not None and last.style.bgcolor is not None:
            break
        stripped = last.text.rstrip()
        if stripped:
            segments[-1] = Segment(stripped, last.style)
            break
        segments.pop()
    return segments
