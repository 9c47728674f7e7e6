"""A sandbox behind the bash rules (Linux): the command may write only in the project, the temporary
folders and the folders the user listed, and reach no network unless allowed — whatever the command is,
so a rule about files or the network holds for what the rules could not read.

Done as Codex does it, with no helper program: Landlock (kernel ≥ 5.13) confines writes, in the child
between fork and exec; a new user and network namespace (``unshare``, as ``unshare -rn``) takes the
network away (only a loopback that is down; Landlock's own TCP rules, kernel ≥ 6.7, when namespaces are
off). Reads are not confined: the read rules (``permission.read``) still ask before the model reads a
secret store, and the sandbox is about what a command can change or send. Limits: a Unix socket that is
a file (``/var/run/docker.sock``) is still reachable; so is what the user can already run through it.
"""

from __future__ import annotations

import ctypes
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # the same on every arch
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH, _RULE_NET_PORT = 1, 2
_PR_SET_NO_NEW_PRIVS = 38
_CLONE_NEWUSER, _CLONE_NEWNET = 0x10000000, 0x40000000
# Landlock's filesystem rights that change something (execute and read are left unhandled: allowed).
_WRITE_FILE, _TRUNCATE = 1 << 1, 1 << 14
_CHANGES_V1 = sum(1 << bit for bit in (1, 4, 5, 6, 7, 8, 9, 10, 11, 12))  # write, remove, make *
_REFER = 1 << 13  # ABI 2: linking or renaming across folders
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/pts", "/dev/shm", "/dev/ptmx")


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1  # the kernel's struct is packed
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


@dataclass(frozen=True)
class Confinement:
    """What a confined command may do: write beneath ``writable``; use the network if ``network``."""

    writable: tuple[str, ...]
    network: bool = False


def temp_dirs() -> list[str]:
    return sorted({tempfile.gettempdir(), "/tmp", "/var/tmp"})


@lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


@lru_cache(maxsize=1)
def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 when it has none (old kernel, disabled, not Linux)."""
    if os.uname().sysname != "Linux":
        return 0
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    version = libc.syscall(
        _SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION)
    )
    return max(int(version), 0)


def confine(spec: Confinement) -> Callable[[], None]:
    """The function to run in the child before exec (``preexec_fn``): it raises if it cannot confine,
    so the command never runs unconfined by mistake."""
    libc = _libc()
    abi = landlock_abi()
    handled = _CHANGES_V1 | (_REFER if abi >= 2 else 0) | (_TRUNCATE if abi >= 3 else 0)
    uid, gid = os.getuid(), os.getgid()
    folders = [p for p in dict.fromkeys(spec.writable) if os.path.exists(p)]
    devices = [p for p in _DEVICES if os.path.exists(p)]

    def run_in_child() -> None:
        tcp = 0
        if not spec.network and not _leave_network(libc, uid, gid):
            if abi < 4:
                raise OSError("no network namespace and no Landlock network rules")
            tcp = _NET_BIND_TCP | _NET_CONNECT_TCP  # no rule allows any port: TCP is off
        attr = _RulesetAttr(handled, tcp)
        fd = libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), 0)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
        for path in folders:
            _allow(libc, fd, path, handled)
        for path in devices:  # /dev/null and the terminal: written to, never made or removed
            _allow(
                libc,
                fd,
                path,
                (_WRITE_FILE | (_TRUNCATE if abi >= 3 else 0)) if path != "/dev/shm" else handled,
            )
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(NO_NEW_PRIVS)")
        if libc.syscall(_SYS_RESTRICT_SELF, fd, 0) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
        os.close(fd)

    return run_in_child


def _allow(libc: ctypes.CDLL, ruleset: int, path: str, access: int) -> None:
    parent = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        if not os.path.isdir(path):
            access &= _WRITE_FILE | _TRUNCATE  # a file takes only the rights of a file
        rule = _PathBeneath(access, parent)
        if libc.syscall(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0) != 0:
            raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
    finally:
        os.close(parent)


def _leave_network(libc: ctypes.CDLL, uid: int, gid: int) -> bool:
    """Move into a new user and network namespace, as the same user: no interface is up there."""
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET) != 0:
        return False
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)
    return True


@lru_cache(maxsize=4)
def unavailable(network: bool) -> str | None:
    """Why this machine cannot confine a command (None: it can). Tried once, on ``true``."""
    import subprocess

    if landlock_abi() < 1:
        return "the kernel has no Landlock (Linux 5.13 or later, with landlock in the lsm= boot list)"
    try:
        subprocess.run(
            ["true"], preexec_fn=confine(Confinement(tuple(temp_dirs()), network)), check=True, timeout=10
        )
    except (subprocess.SubprocessError, OSError) as exc:
        what = "confine writes" if network else "take the network away (user namespaces may be off)"
        return f"could not {what}: {exc}"
    return None


def confinement(project: Path, extra: list[str], network: bool) -> Confinement:
    """The project, the temporary folders and the user's ``writable`` folders."""
    home = os.path.expanduser("~")
    paths = [
        str(project),
        *temp_dirs(),
        *(p.replace("~", home, 1) if p.startswith("~") else p for p in extra),
    ]
    return Confinement(tuple(os.path.realpath(p) for p in paths), network)


@dataclass(frozen=True)
class Sandboxing:
    """The config's ``sandbox`` as the bash tool takes it (None in the context: off)."""

    required: bool  # "on": refuse where the machine cannot confine; "auto": run unconfined there
    network: bool = False
    writable: tuple[str, ...] = ()


class CannotConfine(Exception):
    """The sandbox is on and this machine cannot confine a command: one line saying why."""


def preexec_for(setting: Sandboxing | None, project: Path) -> Callable[[], None] | None:
    """What the bash tool runs in the child to confine it; None when unconfined (off, or "auto" where
    the machine cannot). Raises CannotConfine when it must be confined and cannot."""
    if setting is None:
        return None
    why = unavailable(setting.network)
    if why is None:
        return confine(confinement(project, list(setting.writable), setting.network))
    if setting.required:
        raise CannotConfine(
            f'sandbox.bash is "on" but this machine cannot confine commands: {why} — not run '
            '(set sandbox.bash to "auto" to run commands unconfined where the machine cannot)'
        )
    return None
