"""``asyncio.create_subprocess_exec`` for the CLI, forked like the starts of ``tests/zygote.py``: the
same process object (pipes as asyncio streams, ``wait``, ``returncode``, signals) over a forked child."""

from __future__ import annotations

import asyncio
import subprocess
from typing import Any

from tests import zygote


class ForkedProcess:
    """What ``asyncio.subprocess.Process`` offers the tests, for a ``zygote.ForkedPopen``."""

    def __init__(self, popen: subprocess.Popen[bytes], stdin: Any, stdout: Any) -> None:
        self._popen = popen
        self.stdin: asyncio.StreamWriter | None = stdin
        self.stdout: asyncio.StreamReader | None = stdout
        self.stderr = None
        self.pid = popen.pid

    @property
    def returncode(self) -> int | None:
        return self._popen.poll()

    async def wait(self) -> int:
        return await asyncio.get_running_loop().run_in_executor(None, self._popen.wait)

    def send_signal(self, sig: int) -> None:
        self._popen.send_signal(sig)

    def terminate(self) -> None:
        self._popen.terminate()

    def kill(self) -> None:
        self._popen.kill()


async def create_subprocess_exec(*argv: str, limit: int, **kwargs: Any) -> Any:
    """``asyncio.create_subprocess_exec(*argv, limit=limit, **kwargs)``, forked when it can be."""
    if not zygote.serves(list(argv), kwargs.get("env"), kwargs):
        return await asyncio.create_subprocess_exec(*argv, limit=limit, **kwargs)
    popen = zygote.ForkedPopen(list(argv), bufsize=0, **kwargs)
    loop = asyncio.get_running_loop()
    reader = writer = None
    if popen.stdout is not None:
        reader = asyncio.StreamReader(limit=limit, loop=loop)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader, loop=loop), popen.stdout)
    if popen.stdin is not None:
        transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.streams.FlowControlMixin(loop=loop), popen.stdin
        )
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return ForkedProcess(popen, writer, reader)
