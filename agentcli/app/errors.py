"""The failure a front end shows as one line (the CLI on stderr with an exit code, the ACP server
as the prompt's error): never a traceback."""

from __future__ import annotations


class CliError(Exception):
    """A failure the user can act on; ``code`` is the exit code (the CLI's)."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code
