"""A forked start for the CLI subprocesses of the tests: each `agentcli` a test starts through
``tests.workspace`` is a fork of a waiting process that has already imported what a command imports,
instead of a new interpreter importing it again (about two thirds of a ``run``'s CPU, hundreds of
times a suite).

The child is a fresh process from the test's point of view: its own pid (the test signals and kills it
like any other), the test's argv, environment, working directory and the test's pipes on 0, 1 and 2
(passed over a Unix socket); standard streams rebuilt the way the interpreter builds them at start; the
default signal handlers; no thread and no other descriptor of the waiting process; the exit status and
the CPU time it used handed back to the test (``--cpu-top`` counts it, like a real child's). The waiting
process imports what every command imports on the lean path (never litellm), with the interpreter's
own start settings, and forks only while it has a single thread.

What it cannot be is a new interpreter: tests of the start itself (what a command imports, how long it
takes, ``python -X importtime``), tests giving the CLI a terminal, a new session or a different
interpreter environment (``PYTHON*``, locale variables) start it for real, as does every start when
``AGENTCLI_TEST_FORK=0`` (docs/testing.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

# What the waiting process imports: each command's own modules load after the fork, as they would.
PRELOAD = (
    "agentcli.cli.process",
    "agentcli.cli.main",
    "agentcli.cli.common",
    "agentcli.cli.run_cmd",
    "agentcli.app.setup",
    "agentcli.llm.lean_path",
)
# Variables the interpreter reads when it starts (stream encodings, flags): a start asking for other
# values than the waiting process started with gets a real interpreter.
_START_VARS = ("PYTHON", "LANG", "LC_")
_HEADER = struct.Struct("!I")
ENABLED = os.environ.get("AGENTCLI_TEST_FORK", "1") != "0"
_ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}  # the waiting process's, as this process began
CHILD_CPU = [0.0]  # CPU seconds of forked children waited for, by this process (tests/suite.py adds it)


def _start_env(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(_START_VARS)}


# ---------------------------------------------------------------- the waiting process


def _preload(litellm: bool) -> None:
    import gc

    from agentcli.cli.lifecycle import start

    start()  # what a command does first (collection pace, httpx's own CLI left out) ...
    import importlib

    for name in PRELOAD:
        importlib.import_module(name)
    if litellm:  # imported as agentcli.llm.lazy imports it (configured by the child, as it would be)
        os.environ.setdefault("LITELLM_LOG", "ERROR")
        importlib.import_module("litellm")
    gc.collect()
    gc.freeze()  # ... and what ``settle`` does once it has loaded (forked pages stay shared, too)
    gc.set_threshold(*__import__("agentcli.cli.lifecycle").cli.lifecycle._defaults)


def _read_request(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 16, 3)
    while len(data) < _HEADER.size or len(data) < _HEADER.size + _HEADER.unpack_from(data)[0]:
        more = conn.recv(1 << 16)
        if not more:
            raise EOFError
        data += more
    (size,) = _HEADER.unpack_from(data)
    return json.loads(data[_HEADER.size : _HEADER.size + size]), list(fds)


def _stdio(fd: int, write: bool, name: str, like: Any) -> Any:
    """A standard stream as the interpreter makes it at start (pylifecycle's create_stdio)."""
    import io

    buffer = io.open(fd, "wb" if write else "rb", closefd=False)  # noqa: SIM115, UP020 (kept by the stream)
    buffer.raw.name = name  # type: ignore[union-attr]
    return io.TextIOWrapper(
        buffer,  # type: ignore[arg-type]
        encoding=like.encoding,
        errors=like.errors,
        newline="\n",
        line_buffering=write and (os.isatty(fd) or fd == 2),
    )


def _become_child(request: dict[str, Any], fds: list[int], close: list[Any]) -> list[str]:
    """In the forked child: drop the waiting process's descriptors and handlers, take the test's."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for thing in close:
        thing.close()
    if request["tty"]:  # a terminal's session, as pty.fork makes it: the terminal is the controlling one
        os.setsid()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in set(fds):
        if fd > 2:
            os.close(fd)
    if request["tty"]:
        import fcntl
        import termios

        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.stdin = sys.__stdin__ = _stdio(0, False, "<stdin>", sys.__stdin__)
    sys.stdout = sys.__stdout__ = _stdio(1, True, "<stdout>", sys.__stdout__)
    sys.stderr = sys.__stderr__ = _stdio(2, True, "<stderr>", sys.__stderr__)
    argv = request["argv"]
    sys.argv = list(argv)
    sys.orig_argv = [sys.executable, *argv]
    sys.path.insert(0, str(Path(argv[0]).parent))  # the console script's folder, first, as when it runs
    return argv


class _Closer:
    def __init__(self, fd: int) -> None:
        self.fd = fd

    def close(self) -> None:
        os.close(self.fd)


def serve(path: str, litellm: bool) -> list[str] | None:
    """Wait for starts on the Unix socket ``path``; returns in a forked child (its argv), or None
    when the test process has gone."""
    _preload(litellm)
    parent = os.getppid()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".tmp")
    os.rename(path + ".tmp", path)  # the socket appears ready to connect
    listener.listen(64)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    os.set_blocking(wake_r, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: dict[int, socket.socket] = {}
    import select

    while os.getppid() == parent:
        ready, _, _ = select.select([listener, wake_r], [], [], 1.0)
        if wake_r in ready:
            while True:
                try:
                    os.read(wake_r, 512)
                except BlockingIOError:
                    break
        if listener in ready:
            conn, _ = listener.accept()
            try:
                request, fds = _read_request(conn)
            except (OSError, EOFError, ValueError):
                conn.close()
                continue
            if threading.active_count() != 1:  # never fork a process with other threads
                conn.sendall(b"refused\n")
                conn.close()
            else:
                pid = os.fork()
                if pid == 0:
                    closers = [listener, conn, *children.values(), _Closer(wake_r), _Closer(wake_w)]
                    return _become_child(request, fds, closers)
                for fd in fds:
                    os.close(fd)
                conn.sendall(f"{pid}\n".encode())
                children[pid] = conn
        while children:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            conn = children.pop(pid, None)
            if conn is not None:
                cpu = usage.ru_utime + usage.ru_stime
                with contextlib.suppress(OSError):  # a test that gave up waiting
                    conn.sendall(f"{status} {cpu}\n".encode())
                conn.close()
    return None


# ---------------------------------------------------------------- the test's side


class _Server:
    """This test process's waiting process, started on first use and ended with the process."""

    def __init__(self, litellm: bool) -> None:
        self.litellm = litellm
        self.lock = threading.Lock()
        self.proc: subprocess.Popen[bytes] | None = None
        self.path = ""
        self.dir: tempfile.TemporaryDirectory[str] | None = None

    def address(self) -> str:
        with self.lock:
            if self.path and self.proc is None:
                return self.path
            shared = os.environ.get(_SHARED_ENV)
            if (
                shared and shared != _SHARING[0] and self.proc is None
            ):  # a pytest-xdist worker: the run's own waiting process
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                    conn.connect(shared)
                    conn.sendall(b"1\n" if self.litellm else b"0\n")
                    self.path = conn.makefile().readline().strip()
                if not self.path:
                    raise RuntimeError("the CLI's fork server did not start in the pytest process")
                return self.path
            if self.proc is None:
                self.dir = tempfile.TemporaryDirectory(prefix="agentcli-fork-")
                self.path = os.path.join(self.dir.name, "s")
                self.proc = subprocess.Popen(
                    [sys.executable, __file__, self.path, *(["--litellm"] if self.litellm else [])],
                    env=_ENV,
                    cwd=self.dir.name,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                )
                import atexit

                atexit.register(self.stop)
            deadline = time.monotonic() + 120
            while not os.path.exists(self.path):
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the CLI's fork server did not start ({self.proc.returncode})")
                time.sleep(0.02)
            return self.path

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(30)
        if self.dir is not None:
            self.dir.cleanup()


# One waiting process for the lean path, one that has imported litellm too (takes_litellm).
_SERVERS = {False: _Server(litellm=False), True: _Server(litellm=True)}
_SHARED_ENV = "AGENTCLI_TEST_FORK_SHARED"
_SHARING = [""]  # the socket this process answers workers on (share), if it does


def share() -> None:
    """In the pytest process that starts xdist's workers, before it starts them: the waiting processes
    become this process's children, started when a worker first asks, and shared by every worker
    (one litellm import for the run, not one a worker). Workers find this process's socket in
    their environment."""
    import atexit
    import shutil

    folder = tempfile.mkdtemp(prefix="agentcli-fork-")
    atexit.register(shutil.rmtree, folder, True)
    path = os.path.join(folder, "manager")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)

    def answer(conn: socket.socket) -> None:
        with conn:
            try:
                litellm = conn.makefile().readline().strip() == "1"
                reply = _SERVERS[litellm].address()
            except Exception:  # the worker reports it: an empty answer
                reply = ""
            conn.sendall(reply.encode() + b"\n")

    def serve_workers() -> None:
        while True:
            conn, _ = listener.accept()
            threading.Thread(target=answer, args=(conn,), daemon=True).start()

    threading.Thread(target=serve_workers, name="fork-servers", daemon=True).start()
    _SHARING[0] = os.environ[_SHARED_ENV] = path


def takes_litellm(argv: list[str], env: dict[str, str]) -> bool:
    """A ``run`` or ``chat`` on the litellm path forced (``AGENTCLI_LLM_PATH=litellm``): the command
    imports litellm as it starts (``warm_for``), so its child may be forked with litellm imported."""
    forced = env.get("AGENTCLI_LLM_PATH", "").strip().lower() == "litellm"
    command = len(argv) > 1 and argv[1] in ("run", "chat") and not {"-h", "--help"} & set(argv)
    return forced and command and env.get("LITELLM_LOG", "ERROR") == "ERROR"


def serves(argv: list[str], env: dict[str, str] | None, kwargs: dict[str, Any]) -> bool:
    """Whether a start can be a fork: the installed ``agentcli`` script with pipes or files, in an
    environment the interpreter starts the same way in."""
    allowed = {"stdin", "stdout", "stderr", "cwd", "env", "text", "encoding", "errors"}
    if not ENABLED or set(kwargs) - allowed or not argv or Path(argv[0]).name != "agentcli":
        return False
    if Path(argv[0]).parent != Path(sys.executable).parent:
        return False
    env = dict(os.environ) if env is None else env
    return _start_env(env) == _start_env(_ENV)


class Child:
    """A forked child as its starter sees it: the pid, and its wait status once it has ended."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: str, fds: list[int], tty: bool) -> None:
        body = json.dumps({"argv": argv, "env": env, "cwd": cwd, "tty": tty}).encode()
        self._conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._conn.connect(_SERVERS[takes_litellm(argv, env)].address())
        socket.send_fds(self._conn, [_HEADER.pack(len(body)) + body], fds)
        self._reply = b""
        line = self._line(block=True)
        if line is None or not line.strip().isdigit():
            raise OSError(f"the CLI's fork server refused the start: {line!r}")
        self.pid = int(line)

    def _line(self, block: bool) -> str | None:
        while b"\n" not in self._reply:
            self._conn.setblocking(block)
            try:
                chunk = self._conn.recv(4096)
            except BlockingIOError:
                return None
            if not chunk:
                return ""
            self._reply += chunk
        line, self._reply = self._reply.split(b"\n", 1)
        return line.decode()

    def status(self, block: bool) -> int | None:
        """The raw wait status (as ``os.waitpid`` gives it), or None while the child runs."""
        line = self._line(block)
        if line is None:
            return None
        if not line:  # the waiting process went away: as if waitpid found no child
            raise ChildProcessError(f"the CLI's fork server lost child {self.pid}")
        status, cpu = line.split()
        CHILD_CPU[0] += float(cpu)
        self._conn.close()
        return int(status)


def request(args: Any, env: Any, cwd: Any) -> tuple[list[str], dict[str, str], str]:
    """argv, environment and folder of a start, as text (what the waiting process is sent)."""
    return (
        [os.fsdecode(a) for a in args],
        {os.fsdecode(k): os.fsdecode(v) for k, v in (os.environ if env is None else env).items()},
        os.fsdecode(os.path.abspath(cwd if cwd is not None else os.getcwd())),
    )


class ForkedPopen(subprocess.Popen[Any]):
    """A ``subprocess.Popen`` whose child is forked by the waiting process (see the module's docstring):
    pipes, ``communicate``, ``wait``, ``poll``, signals and timeouts behave as for any child."""

    _forked: Child

    def _execute_child(  # type: ignore[override]
        self,
        args: Any,
        executable: Any,
        preexec_fn: Any,
        close_fds: Any,
        pass_fds: Any,
        cwd: Any,
        env: Any,
        startupinfo: Any,
        creationflags: Any,
        shell: Any,
        p2cread: int,
        p2cwrite: int,
        c2pread: int,
        c2pwrite: int,
        errread: int,
        errwrite: int,
        *_rest: Any,
    ) -> None:
        fds = [p2cread if p2cread != -1 else 0, c2pwrite if c2pwrite != -1 else 1]
        fds.append(errwrite if errwrite != -1 else 2)
        try:
            self._forked = Child(*request(args, env, cwd), fds, tty=False)
        finally:
            # The child's ends of the pipes are the child's now (closed as Popen's own _execute_child does).
            devnull = getattr(self, "_devnull", None)
            if p2cread != -1 and p2cwrite != -1 and p2cread != devnull:
                os.close(p2cread)
            if c2pwrite != -1 and c2pread != -1 and c2pwrite != devnull:
                os.close(c2pwrite)
            if errwrite != -1 and errread != -1 and errwrite != devnull:
                os.close(errwrite)
            if devnull is not None:
                os.close(devnull)
                del self._devnull
            self._closed_child_pipe_fds = True
        self.pid = self._forked.pid
        self._child_created = True

    def _try_wait(self, wait_flags: int) -> tuple[int, int]:
        status = self._forked.status(block=not wait_flags & os.WNOHANG)
        return (0, 0) if status is None else (self.pid, status)

    def _internal_poll(self, _deadstate: Any = None, *_args: Any, **_kw: Any) -> int | None:
        if self.returncode is None and self._waitpid_lock.acquire(False):
            try:
                if self.returncode is None:
                    pid, status = self._try_wait(os.WNOHANG)
                    if pid == self.pid:
                        self._handle_exitstatus(status)
            except ChildProcessError:
                self.returncode = _deadstate if _deadstate is not None else 0
            finally:
                self._waitpid_lock.release()
        return self.returncode


def popen(argv: list[str], **kwargs: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen(argv, **kwargs)``, forked when it can be (``serves``)."""
    if serves(argv, kwargs.get("env"), kwargs):
        return ForkedPopen(argv, **kwargs)
    return subprocess.Popen(argv, **kwargs)


def run(
    argv: list[str], *, input: str | bytes | None = None, timeout: float | None = None, **kwargs: Any
) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run(argv, capture_output=True, ...)`` over ``popen`` (its same steps)."""
    kwargs.update(stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if input is not None:
        kwargs["stdin"] = subprocess.PIPE
    with popen(argv, **kwargs) as process:
        try:
            out, err = process.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            process.kill()
            exc.stdout, exc.stderr = process.communicate()
            raise
        except BaseException:
            process.kill()
            raise
    return subprocess.CompletedProcess(process.args, process.wait(), out, err)


if __name__ == "__main__":
    del sys.path[0]  # this folder (tests/): nothing in it is the CLI's
    child_argv = serve(sys.argv[1], litellm="--litellm" in sys.argv[2:])
    if child_argv is None:
        sys.exit(0)
    from agentcli.cli.process import main

    main()
