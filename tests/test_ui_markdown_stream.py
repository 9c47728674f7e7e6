"""Streaming markdown: what ends up on a terminal (replayed through a small terminal model), what
ends up in a pipe, and that finished lines are never repainted (so scrollback stays intact)."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field

import pytest
from rich.console import Console
from rich.markdown import Markdown

from agentcli.ui.markdown_stream import MarkdownStream, ReasoningStream

DOC = (
    "# Plan\n\n"
    "Some *emphasis* and `code` in a paragraph that is long enough to wrap across more than one "
    "line of the terminal.\n\n"
    + "".join(f"- item {i}\n" for i in range(25))
    + "\n```python\ndef main():\n    print('hi')\n```\n\n"
    "| a | b |\n|---|---|\n| 1 | 2 |\n\n"
    "Done."
)

_ESCAPE = re.compile(r"\x1b\[([?0-9;]*)([A-Za-z])|\x1b\]8;[^\x1b]*\x1b\\")


@dataclass
class Terminal:
    """Just enough of a terminal for rich's Live: text, CR, LF, cursor up, erase line, colours
    (ignored). ``max_rewind`` is how far above the lowest line ever written the cursor went back."""

    lines: list[str] = field(default_factory=lambda: [""])
    row: int = 0
    col: int = 0
    max_rewind: int = 0

    def feed(self, raw: str) -> Terminal:
        i = 0
        while i < len(raw):
            m = _ESCAPE.match(raw, i)
            if m:
                params, command = m.group(1) or "", m.group(2)
                if command == "A":
                    self.row = max(0, self.row - int(params or 1))
                    self.max_rewind = max(self.max_rewind, len(self.lines) - 1 - self.row)
                elif command == "K":
                    self.lines[self.row] = "" if params == "2" else self.lines[self.row][: self.col]
                elif command not in (None, "m", "h", "l"):
                    raise AssertionError(f"unexpected escape {m.group()!r}")
                i = m.end()
                continue
            ch = raw[i]
            if ch == "\r":
                self.col = 0
            elif ch == "\n":
                self.row += 1
                self.col = 0
                if self.row == len(self.lines):
                    self.lines.append("")
            else:
                line = self.lines[self.row].ljust(self.col)
                self.lines[self.row] = line[: self.col] + ch + line[self.col + 1 :]
                self.col += 1
            i += 1
        return self

    def screen(self) -> list[str]:
        lines = [line.rstrip() for line in self.lines]
        while lines and not lines[-1]:
            lines.pop()
        return lines


def _tty(width: int = 60) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=width, force_terminal=True, color_system="truecolor"), out


def _reference_screen(text: str, width: int = 60) -> list[str]:
    console, out = _tty(width)
    console.print(Markdown(text))
    return Terminal().feed(out.getvalue()).screen()


def _stream_in_pieces(stream: MarkdownStream, text: str, step: int) -> None:
    for end in range(step, len(text) + step, step):
        stream.update(text[:end])
    stream.finish()


def test_terminal_ends_with_exactly_the_rendered_markdown_after_many_updates() -> None:
    console, out = _tty()
    stream = MarkdownStream(console, min_delay=0)  # repaint on every update
    _stream_in_pieces(stream, DOC, step=3)
    term = Terminal().feed(out.getvalue())
    assert term.screen() == _reference_screen(DOC)
    assert any("item 24" in line for line in term.screen())
    assert "\x1b[1A" in out.getvalue()  # it really did repaint a live region on the way


def test_finished_lines_are_printed_once_and_never_repainted() -> None:
    console, out = _tty()
    stream = MarkdownStream(console, min_delay=0, live_window=6)
    _stream_in_pieces(stream, DOC, step=5)
    term = Terminal().feed(out.getvalue())
    # Only the unstable tail is ever rewritten: the cursor never climbs above it into scrollback.
    assert 0 < term.max_rewind <= 6
    # And nothing printed above it was duplicated into scrollback.
    assert sum("item 0" in line for line in term.screen()) == 1
    assert term.screen() == _reference_screen(DOC)


def test_throttle_skips_repaints_but_loses_nothing() -> None:
    unthrottled_console, unthrottled = _tty()
    _stream_in_pieces(MarkdownStream(unthrottled_console, min_delay=0), DOC, step=2)
    console, out = _tty()
    stream = MarkdownStream(console)  # 20 fps target: a burst of updates is mostly skipped
    _stream_in_pieces(stream, DOC, step=2)
    assert len(out.getvalue()) * 5 < len(unthrottled.getvalue())
    assert Terminal().feed(out.getvalue()).screen() == _reference_screen(DOC)


def test_throttle_adapts_to_slow_renders() -> None:
    console, _ = _tty()
    stream = MarkdownStream(console, min_delay=0.05)
    stream.update(DOC * 20)  # a long document takes a while to render
    assert stream.min_delay >= 0.05
    assert stream.min_delay <= 2.0
    stream.finish()


def test_finish_without_updates_and_twice_is_harmless() -> None:
    console, out = _tty()
    stream = MarkdownStream(console)
    stream.finish("Just **one** line.")
    stream.finish()
    stream.update("ignored after finish")
    assert Terminal().feed(out.getvalue()).screen() == ["Just one line."]


def test_context_manager_prints_what_arrived_when_interrupted() -> None:
    console, out = _tty()
    with pytest.raises(KeyboardInterrupt), MarkdownStream(console, min_delay=10) as stream:
        stream.update("First line.\n\nSecond")
        stream.update("First line.\n\nSecond line, cut off by")
        raise KeyboardInterrupt
    assert Terminal().feed(out.getvalue()).screen() == ["First line.", "", "Second line, cut off by"]


def test_pipe_gets_the_raw_markdown_verbatim() -> None:
    console = Console(record=True, width=60, force_terminal=False)
    stream = MarkdownStream(console)
    _stream_in_pieces(stream, DOC, step=7)
    assert console.export_text() == DOC + "\n"


def test_dumb_terminal_gets_plain_text_too() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, _environ={"TERM": "dumb"})
    stream = MarkdownStream(console, min_delay=0)
    _stream_in_pieces(stream, "# Title\n\n*hi*", step=3)
    assert out.getvalue() == "# Title\n\n*hi*\n"


def test_pipe_output_is_progressive_whole_lines() -> None:
    out = io.StringIO()
    console = Console(file=out, width=60, force_terminal=False)
    stream = MarkdownStream(console)
    stream.update("line one\nline t")
    assert out.getvalue() == "line one\n"
    stream.update("line one\nline two\nthree")
    assert out.getvalue() == "line one\nline two\n"
    stream.finish()
    assert out.getvalue() == "line one\nline two\nthree\n"


def test_pipe_replaced_text_is_written_again_rather_than_lost() -> None:
    out = io.StringIO()
    stream = MarkdownStream(Console(file=out, force_terminal=False))
    stream.update("draft one\n")
    stream.update("final answer")
    stream.finish()
    assert out.getvalue() == "draft one\n\nfinal answer\n"


def test_reasoning_is_dimmed_on_a_terminal() -> None:
    console, out = _tty()
    stream = ReasoningStream(console, min_delay=0)
    _stream_in_pieces(stream, "Thinking about **the plan**.\n\nThen more.", step=4)
    raw = out.getvalue()
    assert Terminal().feed(raw).screen() == ["Thinking about the plan.", "", "Then more."]
    # Every visible run of text carries the dim attribute (SGR 2).
    runs = re.findall(r"\x1b\[([0-9;]*)m([^\x1b]+)", raw)
    visible = [codes for codes, text in runs if text.strip()]
    assert visible and all("2" in codes.split(";") for codes in visible)


def test_reasoning_in_a_pipe_is_plain_text() -> None:
    console = Console(record=True, force_terminal=False)
    stream = ReasoningStream(console)
    stream.update("a thought\n")
    stream.finish("a thought\nand another")
    assert console.export_text() == "a thought\nand another\n"


RICH_DOC = (
    "# Title\n\nIntro paragraph.\nsecond line of it.\n\n## Section\n\n- a\n- b\n  continued b\n- c\n\n"
    "1. one\n2. two\n\n3. three after a gap\n\n```python\nx = 1\n\ny = 2\n```\n\n> a quote\n\n"
    "| a | b |\n|---|---|\n| 1 | 2 |\n\n---\n\n    indented code\n\nThe end, with `code` and **bold**.\n"
)


class _Counting(MarkdownStream):
    """Counts the markdown source characters rendered, the cost that must follow the new text."""

    rendered = 0

    def _render_lines(self, source: str):  # type: ignore[no-untyped-def]
        self.rendered += len(source)
        return super()._render_lines(source)


@pytest.mark.parametrize("step", [1, 4, 17])
def test_block_by_block_rendering_matches_the_whole_render(step: int) -> None:
    console, out = _tty()
    _stream_in_pieces(MarkdownStream(console, min_delay=0), RICH_DOC, step=step)
    assert Terminal().feed(out.getvalue()).screen() == _reference_screen(RICH_DOC)


def test_rendering_cost_follows_the_new_text_not_the_whole_reply() -> None:
    paragraphs = "".join(f"Paragraph {i} says something *useful* about item {i}.\n\n" for i in range(80))
    items = "".join(f"- list item number {i}\n" for i in range(200))
    for doc in (paragraphs, items):
        console, out = _tty()
        stream = _Counting(console, min_delay=0)  # a render on every one of the ~200 updates
        for start in range(0, len(doc), 20):
            stream.append(doc[start : start + 20])
        stream.finish()
        updates = len(doc) // 20
        # Re-rendering the whole reply each time would render about updates * len(doc) / 2 characters.
        assert stream.rendered < 40 * len(doc) < updates * len(doc) / 2
        assert Terminal().feed(out.getvalue()).screen() == _reference_screen(doc)


class _Recording(MarkdownStream):
    """Keeps every markdown source rendered, in order."""

    def __init__(self, console: Console) -> None:
        super().__init__(console, min_delay=0)
        self.sources: list[str] = []

    def _render_lines(self, source: str):  # type: ignore[no-untyped-def]
        self.sources.append(source)
        return super()._render_lines(source)


def test_cutting_finished_paragraphs_off_does_not_render_them_again() -> None:
    # The lines a cut moves out are counted on the render just made: rendering the text before the
    # cut once more (a prefix of that render) was a third of a long reply's streaming cost.
    doc = "".join(f"Paragraph {i} says something *useful* about item {i}.\n\n" for i in range(80))
    console, out = _tty()
    stream = _Recording(console)
    for start in range(0, len(doc), 60):
        stream.append(doc[start : start + 60])
    stream.finish()
    rendered_again = [
        source
        for previous, source in zip(stream.sources, stream.sources[1:], strict=False)
        if "\n\n" in source.strip() and previous.startswith(source) and previous != source
    ]
    assert len(stream.sources) > 80 and not rendered_again
    assert Terminal().feed(out.getvalue()).screen() == _reference_screen(doc)


def test_updates_that_come_too_fast_are_drawn_at_the_next_frame() -> None:
    import time

    console, out = _tty()
    stream = MarkdownStream(console, min_delay=0.05)
    stream.append("first words")  # drawn at once
    for word in (" and", " more", " words"):
        stream.append(word)  # too soon: coalesced into one later repaint
    deadline = time.monotonic() + 5
    while (
        "more words" not in "\n".join(Terminal().feed(out.getvalue()).screen())
        and time.monotonic() < deadline
    ):
        time.sleep(0.02)
    assert Terminal().feed(out.getvalue()).screen() == ["first words and more words"]
    stream.finish()
    assert Terminal().feed(out.getvalue()).screen() == ["first words and more words"]


def test_a_burst_of_blocks_is_not_rendered_again_with_every_later_update() -> None:
    burst = "".join(f"Paragraph {i} says something *useful* about item {i}.\n\n" for i in range(80))
    later = "".join(f"then point {i} follows, " for i in range(50)) + "and that is all.\n"  # one paragraph
    console, out = _tty()
    stream = _Counting(console, min_delay=0)
    stream.append(burst)  # a slow frame: many blocks arrive together
    for start in range(0, len(later), 20):
        stream.append(later[start : start + 20])
    stream.finish()
    # Carrying the whole burst along as context would render it again on each of ~60 updates.
    assert stream.rendered < 20 * len(burst + later)  # (about 55 times with the burst as context)
    assert Terminal().feed(out.getvalue()).screen() == _reference_screen(burst + later)
