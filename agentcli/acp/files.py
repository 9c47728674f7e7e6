"""In-project file reads and writes through the client's ``fs`` methods, when it offers them: an
editor then serves its buffers (unsaved changes included) and sees the agent's writes as edits.

``ClientFiles`` is the tools' ``FileAccess`` for one ACP session. A path outside the project, a
client without the capability, or a client error leaves the tool on the disk (logged). The loop's
read, write and edit tools are wrapped (``with_client_files``) so each call is handed it; the
tools and the loop themselves are unchanged.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentcli.acp.outbox import Cancelled, Outbox
from agentcli.tools.base import Tool, ToolContext, ToolError, ToolResult

log = logging.getLogger(__name__)

FILE_TOOLS = ("read", "write", "edit")
ABORTED = "The tool call was aborted"


@dataclasses.dataclass
class ClientFiles:
    outbox: Outbox
    client: Any  # the connection to the client (read_text_file / write_text_file)
    session_id: str
    root: Path  # the project: only files inside it go to the client
    can_read: bool
    can_write: bool
    abort: Callable[[], threading.Event | None]  # the running turn's abort flag

    def _inside(self, path: Path) -> bool:
        real, root = os.path.realpath(path), os.path.realpath(self.root)
        return real == root or real.startswith(root.rstrip(os.sep) + os.sep)

    def read_text(self, path: Path) -> str | None:
        if not self.can_read or not self._inside(path):
            return None
        try:
            response = self.outbox.call(
                lambda: self.client.read_text_file(session_id=self.session_id, path=str(path)), self.abort()
            )
        except Cancelled:
            raise ToolError(ABORTED) from None
        except Exception as exc:  # the client could not: the disk still can
            log.warning("the client could not read %s (%s); reading the disk", path, exc)
            return None
        return str(response.content)

    def write_text(self, path: Path, text: str) -> bool:
        if not self.can_write or not self._inside(path):
            return False
        try:
            self.outbox.call(
                lambda: self.client.write_text_file(session_id=self.session_id, path=str(path), content=text),
                self.abort(),
            )
        except Cancelled:
            raise ToolError(ABORTED) from None
        except Exception as exc:
            log.warning("the client could not write %s (%s); writing the disk", path, exc)
            return False
        return True


class ClientFilesTool(Tool[Any]):
    """A file tool whose calls read and write through the client (the same name, schema and rules)."""

    def __init__(self, inner: Tool[Any], files: ClientFiles) -> None:
        self.inner = inner
        self.files = files
        self.name = inner.name
        self.description = inner.description
        self.params = inner.params
        self.self_truncates = inner.self_truncates

    def execute(self, args: Any, ctx: ToolContext) -> ToolResult:
        return self.inner.execute(args, dataclasses.replace(ctx, files=self.files))


def with_client_files(tools: dict[str, Tool], files: ClientFiles) -> None:
    """Wrap the loop's read, write and edit tools in place (once)."""
    for name in FILE_TOOLS:
        tool = tools.get(name)
        if tool is not None and not isinstance(tool, ClientFilesTool):
            tools[name] = ClientFilesTool(tool, files)
