"""The ``agentcli`` command's entry (console script and ``python -m agentcli``): the process starts
and ends on every command's clock (``agentcli.cli.lifecycle``), the command itself loads in between."""

from __future__ import annotations

from agentcli.cli.lifecycle import STARTUP_THRESHOLD, exit_code, finish, settle, start

TYPE_CHECKING = False  # not `typing`'s: this module loads before anything else, so Ctrl-C finds it ready
if TYPE_CHECKING:
    from typing import NoReturn

__all__ = ["STARTUP_THRESHOLD", "exit_code", "finish", "main", "settle", "start"]


def main() -> NoReturn:
    """The ``agentcli`` command (console script and ``python -m agentcli``)."""
    try:
        start()
        from agentcli.cli.main import run

        run()
        code = 0
    except SystemExit as exc:
        code = exit_code(exc.code)
    except KeyboardInterrupt:  # Ctrl-C before a command took charge of it (while loading): no traceback
        code = 130
    finish(code)
