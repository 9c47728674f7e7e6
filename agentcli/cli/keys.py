"""The keys a user presses while a chat turn runs (OpenCode's and Claude Code's): Esc interrupts the
turn, as Ctrl-C does; anything else typed meanwhile is kept, unseen, as the start of the next message.

While a turn runs the terminal is in cbreak mode without echo, so a lone Esc can be read at once
(cooked mode would hold it until Enter) and typed-ahead text does not scribble over the streamed
answer; Ctrl-C still interrupts (its signal is untouched). The mode is restored when the turn ends."""

from __future__ import annotations

import contextlib
import os
import select
import sys
import termios
from collections.abc import Callable, Iterator

from agentcli.cli.typeahead import ESC_WAIT, printable

ESC = 0x1B


class KeyWatch:
    """Reads the keys waiting on the terminal; ``escape()`` is True once a lone Esc came."""

    def __init__(self, fd: int, keep: Callable[[str], None]) -> None:
        self.fd = fd
        self.keep = keep  # where typed-ahead text goes (the next message's start)

    def escape(self) -> bool:
        """Read what is waiting, without waiting; True when a lone Esc was among it."""
        data = b""
        pressed = False
        while select.select([self.fd], [], [], 0)[0]:
            chunk = os.read(self.fd, 4096)
            if not chunk:
                break
            data += chunk
            # An Esc last in what came: a key of its own, unless more bytes follow at once (an arrow).
            if data.endswith(b"\x1b") and not select.select([self.fd], [], [], ESC_WAIT)[0]:
                data, pressed = data[:-1], True
                break
        if data:
            self.keep(printable(data.decode("utf-8", errors="replace")))
        return pressed


@contextlib.contextmanager
def watching(keep: Callable[[str], None]) -> Iterator[KeyWatch | None]:
    """A KeyWatch on stdin while the block runs (None when stdin is not a terminal)."""
    if not sys.stdin.isatty():
        yield None
        return
    import tty

    fd = sys.stdin.fileno()
    try:
        old = termios.tcgetattr(fd)
        tty.setcbreak(fd)
    except termios.error:
        yield None
        return
    try:
        yield KeyWatch(fd, keep)
    finally:
        with contextlib.suppress(termios.error):
            termios.tcsetattr(fd, termios.TCSADRAIN, old)
