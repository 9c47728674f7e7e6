"""Taking back keys typed ahead, so text typed while the model works cannot answer a question the
user has not seen yet (an early "o⏎" must not approve a command, an early "y⏎" must not trust a
folder): `ask_key` is every such one-key question of the chat."""

from __future__ import annotations

import contextlib
import os
import select
import sys
import termios
from collections.abc import Callable, Mapping
from typing import TypeVar

T = TypeVar("T")
KEPT = "(what you typed before this question is kept for your {} message)"


def _pending_tty_input(fd: int) -> bytes:
    """What sits in the terminal's input queue, partial lines included, then an empty queue."""
    old = termios.tcgetattr(fd)
    raw = termios.tcgetattr(fd)
    raw[3] &= ~(termios.ICANON | termios.ECHO)  # a half-typed line becomes readable too
    raw[6][termios.VMIN], raw[6][termios.VTIME] = 0, 0
    chunks: list[bytes] = []
    try:
        termios.tcsetattr(fd, termios.TCSANOW, raw)
        while select.select([fd], [], [], 0)[0]:
            data = os.read(fd, 4096)
            if not data:
                break
            chunks.append(data)
    finally:
        termios.tcflush(fd, termios.TCIFLUSH)  # whatever arrived meanwhile is discarded too
        termios.tcsetattr(fd, termios.TCSANOW, old)
    return b"".join(chunks)


def printable(text: str) -> str:
    """Typed text without terminal control sequences (arrow keys and the like)."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\x1b":  # skip an escape sequence: ESC [ ... final byte
            i += 1
            if i < len(text) and text[i] in "[O":
                i += 1
                while i < len(text) and not ("@" <= text[i] <= "~"):
                    i += 1
            i += 1
            continue
        if ch == "\r":
            ch = "\n"
        if ch == "\n" or ch == "\t" or ch >= " ":
            out.append(ch)
        i += 1
    return "".join(out)


def take_typeahead() -> str:
    """Remove and return the keys typed before now: those prompt_toolkit already read (its typeahead
    store) and those still in the terminal's queue."""
    if not sys.stdin.isatty():
        return ""
    from prompt_toolkit.input import create_input
    from prompt_toolkit.input.typeahead import get_typeahead

    stored = "".join(key.data for key in get_typeahead(create_input(sys.stdin)))
    pending = b""
    with contextlib.suppress(termios.error, OSError):
        pending = _pending_tty_input(sys.stdin.fileno())
    return printable(stored + pending.decode("utf-8", errors="replace"))


ESC = "\x1b"
ESC_WAIT = 0.05  # seconds: bytes after an Esc sooner than this belong to one key (an arrow key)
_EOF_KEYS = ("\x04",)  # Ctrl-D


def _read_key(fd: int) -> str:
    """One key press from the terminal, already in cbreak mode: a character, Enter as "\\n", a lone
    Esc as ESC; an escape sequence (an arrow key) comes back whole and matches no answer."""
    data = os.read(fd, 1)
    if data == b"\x1b":
        while select.select([fd], [], [], ESC_WAIT)[0]:  # more bytes soon after: a sequence
            data += os.read(fd, 16)
        return data.decode("utf-8", errors="replace")
    while data and data[0] >= 0xC0 and select.select([fd], [], [], ESC_WAIT)[0]:  # the rest of a UTF-8 char
        data += os.read(fd, 1)
        if len(data) >= 4 or (data[0] < 0xE0 and len(data) == 2) or (data[0] < 0xF0 and len(data) == 3):
            break
    text = data.decode("utf-8", errors="replace")
    return "\n" if text == "\r" else text


def ask_key(
    prompt: str,
    answers: Mapping[str, T],
    *,
    tell: Callable[[str], None],
    kept_for: str,
    cancel: str | None = None,
    hint: str = "",
) -> tuple[T | None, str]:
    """Ask ``prompt``, answered by one key (no Enter): the first key that is one of ``answers`` (lowercased;
    "\\n" is Enter, ESC is Esc); any other key prints ``hint`` (the keys) on a line of its own and asks
    again. With a ``cancel`` key, it, Ctrl-D and Ctrl-C raise KeyboardInterrupt, for the caller to cancel
    what asked; without one Ctrl-D (or the input's end) is None. The keys typed before the question was
    on screen are taken away first (``tell`` says so) and returned with the answer, to become the start
    of the ``kept_for`` message."""
    import tty

    early = take_typeahead()
    if early.strip():
        tell(KEPT.format(kept_for))
    sys.stdout.write(prompt)
    sys.stdout.flush()
    fd = sys.stdin.fileno()
    old = termios.tcgetattr(fd)
    key = ""
    try:
        tty.setcbreak(fd)  # one key at a time, not echoed; Ctrl-C still interrupts
        while True:
            key = _read_key(fd)
            if key in _EOF_KEYS or key == "" or key.lower() in answers:
                break
            if hint:
                sys.stdout.write(f"\n{hint}\n{prompt}")
                sys.stdout.flush()
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, old)
        shown = {"\n": "⏎", ESC: "esc"}.get(key, key if key.isprintable() else "")
        sys.stdout.write(shown + "\n")
        sys.stdout.flush()
    if cancel is not None and (key == cancel or key in _EOF_KEYS):
        raise KeyboardInterrupt
    if key in _EOF_KEYS or key == "":
        return None, early
    return answers[key.lower()], early
