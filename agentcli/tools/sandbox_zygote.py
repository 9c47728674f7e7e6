"""The confined launcher of the bash tool's commands (see tools/sandbox.py), run as its own small
process: ``python -I -S sandbox_zygote.py SPEC_JSON`` with its control socket as standard input.

It confines itself once — Landlock (writes only beneath the folders of SPEC) and, without network, a
new user and network namespace — and then starts each command it is sent; every command inherits the
confinement. Starting a command from this small process is cheap, where forking the whole agentcli
process for each command is not. Standard library only: it runs without site-packages.

Protocol on the socket: a request is a 4-byte length and a JSON object ``{"id", "argv", "cwd", "env"}``
with two file descriptors (the command's stdin and its stdout/stderr); the launcher answers lines of
JSON: ``{"id", "pid"}`` or ``{"id", "error"}`` when started, ``{"exit": pid, "code": n}`` when done.
"""

from __future__ import annotations

import array
import ctypes
import json
import os
import socket
import sys
import threading

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # the same on every arch
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
_CLONE_NEWUSER, _CLONE_NEWNET = 0x10000000, 0x40000000
_WRITE_FILE, _TRUNCATE = 1 << 1, 1 << 14
_CHANGES_V1 = sum(1 << bit for bit in (1, 4, 5, 6, 7, 8, 9, 10, 11, 12))  # write, remove, make *
_REFER = 1 << 13  # ABI 2: linking or renaming across folders
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/pts", "/dev/ptmx")


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1  # the kernel's struct is packed
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 when it has none."""
    return max(int(_libc.syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))), 0)


def confine_self(writable: list[str], network: bool) -> None:
    """Confine this process and all it starts; raises OSError if any part cannot be done."""
    abi = landlock_abi()
    if abi < 1:
        raise OSError("the kernel has no Landlock (Linux 5.13 or later, with landlock in the lsm= list)")
    tcp = 0
    if not network and not _leave_network():
        if abi < 4:
            raise OSError("user namespaces are off and the kernel has no Landlock network rules")
        tcp = _NET_BIND_TCP | _NET_CONNECT_TCP  # no rule allows a port: TCP is off
    handled = _CHANGES_V1 | (_REFER if abi >= 2 else 0) | (_TRUNCATE if abi >= 3 else 0)
    attr = _RulesetAttr(handled, tcp)
    fd = _libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), 0)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    for path in dict.fromkeys(writable):
        if os.path.exists(path):
            _allow(fd, path, handled)
    for path in _DEVICES:  # written to, never made or removed
        if os.path.exists(path):
            _allow(fd, path, _WRITE_FILE | (_TRUNCATE if abi >= 3 else 0))
    if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(NO_NEW_PRIVS)")
    if _libc.syscall(_SYS_RESTRICT_SELF, fd, 0) != 0:
        raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    os.close(fd)


def _allow(ruleset: int, path: str, access: int) -> None:
    parent = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        if not os.path.isdir(path):
            access &= _WRITE_FILE | _TRUNCATE  # a file takes only the rights of a file
        rule = _PathBeneath(access, parent)
        if _libc.syscall(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0) != 0:
            raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
    finally:
        os.close(parent)


def _leave_network() -> bool:
    """Move into a new user and network namespace, as the same user: no interface is up there."""
    uid, gid = os.getuid(), os.getgid()
    if _libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET) != 0:
        return False
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)
    return True


class _Server:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.sending = threading.Lock()
        self.children = threading.Semaphore(0)  # one release per child started, for the reaper

    def send(self, message: dict[str, object]) -> None:
        with self.sending:
            self.sock.sendall(json.dumps(message).encode() + b"\n")

    def reap(self) -> None:
        while True:
            self.children.acquire()
            pid, status = os.waitpid(-1, 0)
            self.send({"exit": pid, "code": os.waitstatus_to_exitcode(status)})

    def serve(self) -> None:
        threading.Thread(target=self.reap, daemon=True).start()
        while True:
            fds = array.array("i")  # the descriptors come with the length, the first bytes sent
            head, ancillary, _, _ = self.sock.recvmsg(4, socket.CMSG_LEN(2 * fds.itemsize))
            for level, kind, data in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
            for fd in fds:
                os.set_inheritable(fd, False)  # the command gets them as 0, 1 and 2 only
            rest = self._read(4 - len(head)) if head else None
            if rest is None:
                return  # agentcli is gone
            body = self._read(int.from_bytes(head + rest, "big"))
            if body is None:
                return
            self.start(json.loads(body), list(fds))

    def _read(self, n: int) -> bytes | None:
        data = b""
        while len(data) < n:
            more = self.sock.recv(n - len(data))
            if not more:
                return None
            data += more
        return data

    def start(self, request: dict[str, object], fds: list[int]) -> None:
        """posix_spawn (a vfork: cheap) in the command's folder, its own session, its descriptors."""
        argv = [str(a) for a in request["argv"]]  # type: ignore[attr-defined]
        try:
            if len(fds) != 2:
                raise OSError("the command's descriptors did not arrive")
            os.chdir(str(request["cwd"]))  # only this thread starts commands: the folder is its own
            pid = os.posix_spawnp(
                argv[0],
                argv,
                dict(request["env"]),  # type: ignore[call-overload]
                file_actions=[
                    (os.POSIX_SPAWN_DUP2, fds[0], 0),
                    (os.POSIX_SPAWN_DUP2, fds[1], 1),
                    (os.POSIX_SPAWN_DUP2, fds[1], 2),
                ],  # fmt: skip
                setsid=True,
            )
        except OSError as exc:
            self.send({"id": request["id"], "error": str(exc)})
            return
        finally:
            for fd in fds:
                os.close(fd)
        self.children.release()
        self.send({"id": request["id"], "pid": pid})


def main() -> None:
    spec = json.loads(sys.argv[1])
    sock = socket.socket(fileno=0)
    try:
        confine_self(spec["writable"], spec["network"])
    except OSError as exc:
        sock.sendall(json.dumps({"ready": False, "error": str(exc)}).encode() + b"\n")
        return
    sock.sendall(json.dumps({"ready": True}).encode() + b"\n")
    _Server(sock).serve()


if __name__ == "__main__":
    main()
