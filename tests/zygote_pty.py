"""The CLI in a pseudo-terminal, forked like the piped starts of ``tests/zygote.py``: a ``pexpect.spawn``
whose child is a fork of the waiting process, given the terminal's slave end as 0, 1 and 2, in a new
session whose controlling terminal it is (what ``pty.fork`` does before its exec)."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import termios
from typing import Any

import pexpect
import ptyprocess

from tests import zygote


class ForkedPty(ptyprocess.PtyProcess):  # type: ignore[misc]
    """ptyprocess's view of a forked child: its status comes from the waiting process, not waitpid."""

    _forked: zygote.Child

    @classmethod
    def start(cls, argv: list[Any], env: Any, cwd: Any, dimensions: tuple[int, int]) -> ForkedPty:
        master, slave = pty.openpty()
        try:
            rows, columns = dimensions
            fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
            child = zygote.Child(*zygote.request(argv, env, cwd), [slave] * 3, tty=True)
        except BaseException:
            os.close(master)
            raise
        finally:
            os.close(slave)
        inst = cls(child.pid, master)
        inst._forked = child
        inst.argv, inst.env, inst.launch_dir = argv, env, cwd
        return inst

    def _take(self, status: int) -> None:
        self.status = status
        if os.WIFEXITED(status):
            self.exitstatus, self.signalstatus = os.WEXITSTATUS(status), None
        else:
            self.exitstatus, self.signalstatus = None, os.WTERMSIG(status)
        self.terminated = True

    def isalive(self) -> bool:
        if self.terminated:
            return False
        status = self._forked.status(block=self.flag_eof)  # blocking after EOF, as ptyprocess does
        if status is None:
            return True
        self._take(status)
        return False

    def wait(self) -> int | None:
        if self.isalive():
            status = self._forked.status(block=True)
            assert status is not None
            self._take(status)
        return self.exitstatus


class ForkedSpawn(pexpect.spawn):  # type: ignore[misc]
    def _spawnpty(self, args: list[Any], **kwargs: Any) -> Any:
        if kwargs.get("preexec_fn") is not None or not kwargs.get("echo", True):
            return super()._spawnpty(args, **kwargs)
        return ForkedPty.start(args, kwargs.get("env"), kwargs.get("cwd"), kwargs.get("dimensions", (24, 80)))


def spawn(command: str, args: list[str], **kwargs: Any) -> pexpect.spawn:
    """``pexpect.spawn(command, args, **kwargs)``, forked when it can be (``zygote.serves``)."""
    env = kwargs.get("env")
    if zygote.serves([command, *args], env, {"env": env}):
        return ForkedSpawn(command, args, **kwargs)
    return pexpect.spawn(command, args, **kwargs)
