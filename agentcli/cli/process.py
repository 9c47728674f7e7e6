"""The ``agentcli`` command's entry (console script and ``python -m agentcli``): the process starts
and ends on every command's clock (``agentcli.cli.lifecycle``), the command itself loads in between.

Every way out goes through ``finish``, whose exit handlers free what must not outlive the process (a
session lease a turn still holds): a normal end, an error, Ctrl-C, and a hang-up (the terminal
closed), which would otherwise end the process on the spot. SIGTERM cancels a running turn
(``agentcli.cli.worker``)."""

from __future__ import annotations

import signal

from agentcli.cli.lifecycle import STARTUP_THRESHOLD, exit_code, finish, settle, start

TYPE_CHECKING = False  # not `typing`'s: this module loads before anything else, so Ctrl-C finds it ready
if TYPE_CHECKING:
    from typing import NoReturn

__all__ = ["STARTUP_THRESHOLD", "exit_code", "finish", "main", "settle", "start"]


def _hang_up(signum: int, _frame: object) -> NoReturn:
    raise SystemExit(128 + signum)


def main() -> NoReturn:
    """The ``agentcli`` command (console script and ``python -m agentcli``)."""
    try:
        start()
        signal.signal(signal.SIGHUP, _hang_up)
        from agentcli.cli.main import run

        run()
        code = 0
    except SystemExit as exc:
        code = exit_code(exc.code)
        if isinstance(exc.__context__, BrokenPipeError):
            code = 0  # rich's answer to a reader that went away (`sessions show | head`): not a failure
    except KeyboardInterrupt:  # Ctrl-C before a command took charge of it (while loading): no traceback
        code = 130
    finish(code)
