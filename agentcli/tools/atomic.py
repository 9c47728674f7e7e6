"""Replacing a file's content so that a killed process leaves it whole: the old content or the new.

The new content goes to a temporary file in the same directory, is flushed to disk, and is renamed
over the original (a rename within one file system is atomic). The file keeps its mode and owner; a
symlink is followed and its target replaced, so the link stays a link.

A writer killed mid-write (SIGKILL, a power cut) leaves its temporary file behind; the temporary
file's name carries its writer's pid, so the next successful write of the same file removes those
whose writer is gone, or that nobody has touched for `STALE_AFTER` seconds (a reused pid).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import time
from pathlib import Path

STALE_AFTER = 600.0  # seconds without a change: no live writer holds a temporary file this long
_TMP_MIDDLE = re.compile(r"(?:(\d+)-)?[0-9a-f]{8}")  # "<pid>-<hex>"; before pids: "<hex>"


def write_text(path: Path, text: str) -> None:
    """Write ``text`` as UTF-8, exactly as given (no newline translation)."""
    write_bytes(path, text.encode("utf-8"))


def write_bytes(path: Path, data: bytes) -> None:
    target = Path(os.path.realpath(path))  # through every symlink: the file that really changes
    try:
        st: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        st = None
    tmp = target.with_name(f"{_tmp_prefix(target)}{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        # A new file gets the mode a plain open() would give it (0666 less the umask).
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if st else 0o666)
    except PermissionError:
        # The directory is not writable but the file may be: the old in-place write is all we can do.
        _write_in_place(target, data)
        return
    try:
        try:
            if st is not None and not _keep_owner_and_mode(fd, st):
                raise _CannotKeepOwner
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except _CannotKeepOwner:
        _unlink(tmp)
        _write_in_place(target, data)  # a file of another user: its owner matters more than atomicity
        return
    except BaseException:
        _unlink(tmp)
        raise
    _fsync_dir(target.parent)
    _remove_stale_temps(target)


def _tmp_prefix(target: Path) -> str:
    return f".{target.name}.agentcli-"


def _remove_stale_temps(target: Path) -> None:
    """Remove the temporary files of ``target`` left by writers that are gone."""
    prefix = _tmp_prefix(target)
    try:
        entries = [
            e for e in os.scandir(target.parent) if e.name.startswith(prefix) and e.name.endswith(".tmp")
        ]
    except OSError:
        return
    for entry in entries:
        m = _TMP_MIDDLE.fullmatch(entry.name[len(prefix) : -len(".tmp")])
        if m is None:
            continue  # not a name we give: not ours to remove
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue  # gone already
        if not entry.is_file(follow_symlinks=False):
            continue
        writer_gone = m.group(1) is not None and not _alive(int(m.group(1)))
        if writer_gone or time.time() - st.st_mtime > STALE_AFTER:
            _unlink(Path(entry.path))


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True  # another thread of this process may be writing it now
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # another user's process, or not a pid we can ask about: keep the file
    return True


class _CannotKeepOwner(Exception):
    pass


def _keep_owner_and_mode(fd: int, st: os.stat_result) -> bool:
    if (st.st_uid, st.st_gid) != _owner(fd):
        try:
            os.fchown(fd, st.st_uid, st.st_gid)
        except PermissionError:
            return False
    os.fchmod(fd, st.st_mode & 0o7777)
    return True


def _owner(fd: int) -> tuple[int, int]:
    st = os.fstat(fd)
    return st.st_uid, st.st_gid


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _write_in_place(target: Path, data: bytes) -> None:
    with open(target, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def _unlink(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def _fsync_dir(directory: Path) -> None:
    """Make the rename itself durable (a crash of the machine, not only of the process)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems do not sync directories; the rename is still atomic
    finally:
        os.close(fd)
