"""The process around a command: how it starts and how it ends, both on every command's clock.

Start: a command imports typer, pydantic, SQLAlchemy and our own modules, several hundred thousand
objects that live as long as the process. With the default thresholds the cyclic garbage collector
walks them again and again while they load (about 0.15 s of CPU in a 1 s ``run``), finding nothing.
So while a command starts, a collection waits for a very large number of new objects (not never:
memory stays bounded), and ``settle`` — called once the work begins — freezes what was loaded, so no
collection scans it again, and brings back the default thresholds for the rest of the session.

End: the interpreter's teardown frees every module and object one at a time just before the process
exits (another 0.15 s), to no one's benefit. ``finish`` does what the interpreter does at exit that
matters — waits for non-daemon threads, runs the atexit handlers (logging, temporary folders, thread
pools), flushes stdout and stderr — and then leaves with ``os._exit``. The store needs nothing more:
every write is committed when it is made, and a session lease a turn still holds (one that did not
wind down before the process left) is freed by the exit handler it registered.
"""

from __future__ import annotations

import gc
import os
import sys

TYPE_CHECKING = False  # not `typing`'s: this module loads before anything else, so Ctrl-C finds it ready
if TYPE_CHECKING:
    from typing import NoReturn

STARTUP_THRESHOLD = 500_000  # new container objects before a collection while a command starts
_defaults = gc.get_threshold()


def start() -> None:
    gc.set_threshold(STARTUP_THRESHOLD, *_defaults[1:])
    # httpx imports its own command-line client (click, pygments, rich's progress bars: a quarter of
    # its import) whenever they are installed; an entry of None makes that import fail, as httpx expects.
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]  # None is import's "absent"


def settle() -> None:
    """The command has loaded what it needs: later collections skip it, at the usual pace."""
    if gc.get_threshold()[0] == STARTUP_THRESHOLD:
        gc.freeze()
        gc.set_threshold(*_defaults)


def exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # what `sys.exit("message")` does
    return 1


def finish(code: int) -> NoReturn:
    """Exit with ``code`` without the interpreter's teardown (see the module's docstring)."""
    import atexit
    import contextlib
    import threading

    shutdown = getattr(threading, "_shutdown", None)  # the interpreter's own first step at exit
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more can reach the reader
            stream.flush()
    os._exit(code)
