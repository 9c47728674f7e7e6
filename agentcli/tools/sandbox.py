"""A sandbox behind the bash rules (Linux): the command may write only in the project, the temporary
folders and the folders the user listed, and reach no network unless allowed — whatever the command is,
so a rule about files or the network holds for what the rules could not read.

Done as Codex does it, with no helper program to install: Landlock (kernel ≥ 5.13) confines writes,
and a new user and network namespace (as ``unshare -rn``) takes the network away (only a loopback that
is down there; Landlock's own TCP rules, kernel ≥ 6.7, where namespaces are off). A small launcher
process (tools/sandbox_zygote.py), started once per confinement, confines itself and starts each
command, which inherits the confinement: forking agentcli itself (hundreds of MB) for each command
would cost tens of milliseconds. Reads are not confined: the read rules (``permission.read``) still ask
before the model reads a secret store; the sandbox is about what a command can change or send. Limits: a
Unix socket that is a file (``/var/run/docker.sock``) is still reachable.
"""

from __future__ import annotations

import array
import itertools
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

_ZYGOTE = str(Path(__file__).with_name("sandbox_zygote.py"))
_START_TIMEOUT_S = 30  # the launcher's own start (an interpreter): generous on a loaded machine


@dataclass(frozen=True)
class Confinement:
    """What a confined command may do: write beneath ``writable``; use the network if ``network``."""

    writable: tuple[str, ...]
    network: bool = False


@dataclass(frozen=True)
class Sandboxing:
    """The config's ``sandbox`` as the bash tool takes it (None in the context: off)."""

    required: bool  # "on": refuse where the machine cannot confine; "auto": run unconfined there
    network: bool = False
    writable: tuple[str, ...] = ()


class CannotConfine(Exception):
    """The sandbox is on and this machine cannot confine a command: one line saying why."""


def temp_dirs() -> list[str]:
    return sorted({tempfile.gettempdir(), "/tmp", "/var/tmp", "/dev/shm"})


def confinement(project: Path, extra: list[str] | tuple[str, ...], network: bool) -> Confinement:
    """The project, the temporary folders and the user's ``writable`` folders."""
    paths = [str(project), *temp_dirs(), *(os.path.expanduser(p) for p in extra)]
    return Confinement(tuple(os.path.realpath(p) for p in paths), network)


class Confined:
    """One confined command, as much of ``subprocess.Popen`` as the bash tool uses."""

    def __init__(self, launcher: _Launcher, pid: int, stdout: IO[bytes]) -> None:
        self.launcher, self.pid, self.stdout = launcher, pid, stdout
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.launcher.exit_code(self.pid, 0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = self.launcher.exit_code(self.pid, timeout)
        if self.returncode is None:
            raise subprocess.TimeoutExpired("bash", timeout or 0)
        return self.returncode


@dataclass
class _Launcher:
    spec: Confinement
    sock: socket.socket = field(init=False)
    proc: subprocess.Popen[bytes] = field(init=False)
    changed: threading.Condition = field(default_factory=threading.Condition)
    replies: dict[int, dict[str, object]] = field(default_factory=dict)
    exits: dict[int, int] = field(default_factory=dict)
    alive: bool = True
    ids: itertools.count[int] = field(default_factory=itertools.count)

    def __post_init__(self) -> None:
        ours, theirs = socket.socketpair()
        spec = json.dumps({"writable": list(self.spec.writable), "network": self.spec.network})
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", _ZYGOTE, spec],
            stdin=theirs.fileno(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C in the terminal is agentcli's to handle, not the launcher's
        )
        theirs.close()
        self.sock = ours
        self.lines = ours.makefile("rb")
        ours.settimeout(_START_TIMEOUT_S)
        try:
            ready = json.loads(self.lines.readline() or b'{"error": "the launcher ended at once"}')
        except (OSError, ValueError) as exc:
            ready = {"error": f"the launcher did not start: {exc}"}
        ours.settimeout(None)
        if not ready.get("ready"):
            self.close()
            raise OSError(str(ready.get("error")))
        threading.Thread(target=self._read, daemon=True, name="sandbox-launcher").start()

    def _read(self) -> None:
        for line in self.lines:
            message = json.loads(line)
            with self.changed:
                if "exit" in message:
                    self.exits[int(message["exit"])] = int(message["code"])
                else:
                    self.replies[int(message["id"])] = message
                self.changed.notify_all()
        with self.changed:
            self.alive = False
            self.changed.notify_all()

    def spawn(self, argv: list[str], cwd: Path, env: dict[str, str]) -> Confined:
        """Start ``argv`` confined, its stdin /dev/null, its stdout and stderr one pipe."""
        ident = next(self.ids)
        body = json.dumps({"id": ident, "argv": argv, "cwd": str(cwd), "env": env}).encode()
        read_end, write_end = os.pipe()
        stdin = os.open(os.devnull, os.O_RDONLY)
        try:
            with self.changed:  # one request on the socket at a time
                self.sock.sendmsg(
                    [len(body).to_bytes(4, "big")],
                    [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [stdin, write_end]))],
                )
                self.sock.sendall(body)
                while ident not in self.replies and self.alive:
                    self.changed.wait()
                reply = self.replies.pop(ident, {"error": "the sandbox launcher ended"})
        except BaseException:
            os.close(read_end)
            raise
        finally:
            os.close(stdin)
            os.close(write_end)
        if "pid" not in reply:
            os.close(read_end)
            raise CannotConfine(f"sandbox: the command could not be started: {reply.get('error')}")
        return Confined(self, int(reply["pid"]), os.fdopen(read_end, "rb", buffering=0))  # type: ignore[call-overload]

    def exit_code(self, pid: int, timeout: float | None) -> int | None:
        with self.changed:
            self.changed.wait_for(lambda: pid in self.exits or not self.alive, timeout)
            return self.exits.pop(pid, None if self.alive else -1)

    def close(self) -> None:
        self.sock.close()
        self.proc.wait()


_launchers: dict[Confinement, _Launcher] = {}
_unavailable: dict[bool, str | None] = {}
_lock = threading.Lock()


def launcher(spec: Confinement) -> _Launcher:
    """The running launcher for ``spec`` (started on first use, again if it ended); OSError if the
    machine cannot confine."""
    with _lock:
        found = _launchers.get(spec)
        if found is None or not found.alive:
            found = _launchers[spec] = _Launcher(spec)
        return found


def unavailable(network: bool) -> str | None:
    """Why this machine cannot confine a command (None: it can). Tried once per process."""
    if network not in _unavailable:
        if sys.platform != "linux":
            _unavailable[network] = "the sandbox needs Linux (Landlock)"
        else:
            try:
                launcher(Confinement(tuple(temp_dirs()), network))
                _unavailable[network] = None
            except OSError as exc:
                _unavailable[network] = str(exc)
    return _unavailable[network]


def spawner(setting: Sandboxing | None, project: Path) -> _Launcher | None:
    """The launcher the bash tool starts its command with; None when unconfined (off, or "auto" where
    the machine cannot). Raises CannotConfine when it must be confined and cannot."""
    if setting is None:
        return None
    try:
        return launcher(confinement(project, setting.writable, setting.network))
    except OSError as exc:
        if setting.required:
            raise CannotConfine(
                f'sandbox.bash is "on" but this machine cannot confine commands: {exc} — not run '
                '(set sandbox.bash to "auto" to run commands unconfined where the machine cannot)'
            ) from None
        return None
