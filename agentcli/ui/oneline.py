"""A renderable that never wraps: clipped with "…" to the width it is given.

Rich's ``Console.print`` joins plain ``Text`` objects into a new one and drops their ``no_wrap``,
so a status line has to clip itself at render time to stay one line.
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.spinner import Spinner
from rich.text import Text


class OneLine:
    """``text``: the full, unclipped line (a ``Spinner`` is rendered at the console's time)."""

    def __init__(self, text: Text | Spinner) -> None:
        self.source = text

    @property
    def text(self) -> Text:
        if isinstance(self.source, Text):
            return self.source
        shown = self.source.text  # a Spinner's text is what it was given: a Text here
        return shown if isinstance(shown, Text) else Text(str(shown))

    @property
    def plain(self) -> str:
        return self.text.plain

    def __str__(self) -> str:
        return self.plain

    def _line(self, console: Console) -> Text:
        if isinstance(self.source, Spinner):
            frame = self.source.render(console.get_time())
            return frame if isinstance(frame, Text) else Text(str(frame))
        return self.source.copy()

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        line = self._line(console)
        line.no_wrap = True
        line.truncate(options.max_width, overflow="ellipsis")
        yield line

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        width = min(options.max_width, self._line(console).cell_len)
        return Measurement(width, width)
