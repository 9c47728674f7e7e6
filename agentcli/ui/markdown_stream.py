"""Streaming markdown that keeps the terminal's scrollback intact (Aider's proven approach).

Every update renders the whole reply so far. All but the last few lines are taken as stable and
printed once, above a small ``Live`` region; only that unstable tail is repainted. Repainting a
tall Live region breaks scrollback, printing finished lines does not.

On a console that cannot repaint (a pipe, a file, TERM=dumb) the raw markdown is written instead,
line by line as lines complete, so ``agentcli run … > out.md`` gives the reply verbatim.
"""

from __future__ import annotations

import time
from types import TracebackType

from rich.console import Console
from rich.live import Live
from rich.markdown import Markdown
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from agentcli.ui import theme

_TARGET_DELAY = 1 / 20  # 20 frames a second when rendering is cheap
_MAX_DELAY = 2.0  # never slower than this, however long the reply gets


class MarkdownStream:
    """Feed ``update(text_so_far)`` as deltas arrive, then ``finish()`` once.

    ``update`` expects the whole text so far (not a delta). ``style`` is laid over everything
    rendered (the dim reasoning look); ``live_window`` is how many trailing lines stay repaintable;
    ``min_delay`` is the shortest time between repaints (it grows when rendering gets slow; 0 repaints
    on every update).
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
        self.text = ""
        self._live: Live | None = None
        self._printed_lines = 0  # rendered lines already printed above the Live region
        self._written = ""  # plain mode: the text already written
        self._last_render = 0.0
        self._finished = False

    # --- public --------------------------------------------------------------------------

    @property
    def plain(self) -> bool:
        """True when the console cannot repaint (a pipe, a file, TERM=dumb): raw text goes out
        instead of rendered markdown."""
        return not self.console.is_terminal or self.console.is_dumb_terminal

    def update(self, text: str) -> None:
        if self._finished:
            return
        self.text = text
        if self.plain:
            self._write_plain(final=False)
            return
        now = time.monotonic()
        if now - self._last_render < self.min_delay:
            return  # throttled: the newest text is kept and drawn on a later update or at finish
        self._render(final=False)

    def finish(self, text: str | None = None) -> None:
        """Print whatever is left and release the terminal. Safe to call more than once."""
        if self._finished:
            return
        if text is not None:
            self.text = text
        self._finished = True
        if self.plain:
            self._write_plain(final=True)
            return
        try:
            self._render(final=True)
        finally:
            if self._live is not None:
                self._live.update(Text(""), refresh=True)
                self._live.stop()
                self._live = None

    def __enter__(self) -> MarkdownStream:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.finish()

    # --- plain (not a terminal) ---------------------------------------------------------

    def _write_plain(self, *, final: bool) -> None:
        text = self.text
        if not text.startswith(self._written):
            # Replaced rather than extended: start it afresh on a new line; nothing is lost.
            self._emit("\n")
            self._written = ""
        done = len(self._written)
        # Only whole lines go out before the end, so nothing written ever needs taking back.
        end = len(text) if final else text.rfind("\n", done) + 1
        if end > done:
            chunk = text[done:end]
            self._emit(chunk if chunk.endswith("\n") else chunk + "\n")
            self._written = text[:end]

    def _emit(self, chunk: str) -> None:
        self.console.print(chunk, end="", style=self.style, markup=False, highlight=False, soft_wrap=True)

    # --- terminal -----------------------------------------------------------------------

    def _render_lines(self) -> list[list[Segment]]:
        markdown = Markdown(self.text, code_theme=self.code_theme)
        options = self.console.options.update(width=self.console.width)
        lines = self.console.render_lines(markdown, options, pad=False)
        if self.style is not None:
            lines = [list(Segment.apply_style(line, post_style=self.style)) for line in lines]
        return lines

    def _render(self, *, final: bool) -> None:
        started = time.monotonic()
        lines = self._render_lines()
        stable = len(lines) if final else max(0, len(lines) - self.live_window)

        if self._live is None and not final:
            self._live = Live(Text(""), console=self.console, auto_refresh=False, transient=True)
            self._live.start()

        if stable > self._printed_lines:
            fresh = lines[self._printed_lines : stable]
            # Through the Live's console, so the lines land above the repainted region.
            self.console.print(_to_text(fresh), soft_wrap=True, highlight=False)
            self._printed_lines = stable

        if self._live is not None:
            self._live.update(_to_text(lines[self._printed_lines :]), refresh=True)

        # Adaptive throttle: a render that took 10 ms allows at most one per 100 ms.
        elapsed = time.monotonic() - started
        if self.target_delay > 0:  # 0 turns throttling off altogether
            self.min_delay = min(max(elapsed * 10, self.target_delay), _MAX_DELAY)
        self._last_render = time.monotonic()


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
