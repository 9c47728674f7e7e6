"""edit and write replace a file atomically: a killed agent leaves the user's file old or new, never
cut short, and the file keeps its mode, and a symlink stays a symlink."""

from __future__ import annotations

import os
import random
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

from tests.test_tools_support import call, make_ctx

ROOT = Path(__file__).resolve().parents[1]

# The child edits the file back and forth through the real edit tool until it is killed.
CHILD = """
import sys
from pathlib import Path
sys.path.insert(0, {root!r})
from tests.test_tools_support import call, make_ctx
ctx, _ = make_ctx(Path({base!r}))
ctx.file_times.record_read(ctx.directory / "big.txt")
print("ready", flush=True)
while True:
    now = (ctx.directory / "big.txt").read_bytes()[:6].decode()
    new = "MARK-B" if now == "MARK-A" else "MARK-A"
    call(ctx, "edit", {{"filePath": "big.txt", "oldString": now, "newString": new}})
"""


def _snapshot(path: Path) -> tuple[int, int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns, st.st_ino


def _wait_for_write(
    child: subprocess.Popen[str], work: Path, target: Path, before: tuple[int, int, int], timeout: float
) -> bool:
    """Until the child starts changing the directory: a temporary file appears or the file changes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and child.poll() is None:
        if len(os.listdir(work)) > 1 or _snapshot(target) != before:
            return True
        time.sleep(0.0005)
    return False


def test_kill_during_edits_of_a_large_file_never_leaves_it_cut_short(tmp_path: Path) -> None:
    ctx, _ = make_ctx(tmp_path)  # creates tmp_path/work, the child's project directory
    target = ctx.directory / "big.txt"
    body = "".join(f"line {i} {'x' * 50}\n" for i in range(330_000))  # ~20 MB
    old, new = ("MARK-A\n" + body).encode(), ("MARK-B\n" + body).encode()
    target.write_bytes(old)
    rng = random.Random(6)
    outcomes: list[str] = []
    for round_ in range(8):
        for leftover in ctx.directory.iterdir():  # temporary files of the previous killed child
            if leftover != target:
                leftover.unlink()
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD.format(root=str(ROOT), base=str(tmp_path))],
            stdout=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
        )
        try:
            assert child.stdout is not None and child.stdout.readline().strip() == "ready"
            if round_ % 2 == 0:
                # Aim at the write itself: kill within a few milliseconds of the first change on disk.
                assert _wait_for_write(child, ctx.directory, target, _snapshot(target), timeout=120)
                time.sleep(rng.uniform(0, 0.03))
            else:
                time.sleep(rng.uniform(0, 2))  # the child rewrites the file many times a second
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=30)
        content = target.read_bytes()
        assert content in (old, new), (
            f"round {round_}: the file was cut to {len(content)} of {len(old)} bytes"
        )
        outcomes.append("old" if content == old else "new")
    assert outcomes  # both outcomes are fine; the file is whole every time


def test_edit_keeps_the_mode_of_the_file(tmp_path: Path) -> None:
    ctx, _ = make_ctx(tmp_path)
    script = ctx.directory / "run.sh"
    script.write_text("#!/bin/sh\necho old\n")
    script.chmod(0o750)
    ctx.file_times.record_read(script)
    call(ctx, "edit", {"filePath": "run.sh", "oldString": "echo old", "newString": "echo new"})
    assert script.read_text() == "#!/bin/sh\necho new\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    assert sorted(p.name for p in ctx.directory.iterdir()) == ["run.sh"]  # no temporary file left


def test_write_through_a_symlink_replaces_the_target_and_keeps_the_link(tmp_path: Path) -> None:
    ctx, _ = make_ctx(tmp_path)
    real = ctx.directory / "real.txt"
    real.write_text("old\n")
    real.chmod(0o640)
    link = ctx.directory / "link.txt"
    link.symlink_to("real.txt")
    ctx.file_times.record_read(link)
    call(ctx, "write", {"filePath": "link.txt", "content": "new\n"})
    assert link.is_symlink() and os.readlink(link) == "real.txt"
    assert real.read_text() == "new\n"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640

    ctx.file_times.record_read(link)
    call(ctx, "edit", {"filePath": "link.txt", "oldString": "new", "newString": "newer"})
    assert link.is_symlink() and real.read_text() == "newer\n"


def test_a_new_file_gets_the_usual_mode(tmp_path: Path) -> None:
    ctx, _ = make_ctx(tmp_path)
    mask = os.umask(0o022)
    try:
        call(ctx, "write", {"filePath": "fresh.txt", "content": "hello\n"})
    finally:
        os.umask(mask)
    assert stat.S_IMODE((ctx.directory / "fresh.txt").stat().st_mode) == 0o644


def _temps(directory: Path, name: str) -> set[str]:
    return {p.name for p in directory.iterdir() if p.name.startswith(f".{name}.agentcli-")}


def test_the_next_edit_removes_temporary_files_whose_writer_is_gone(tmp_path: Path) -> None:
    ctx, _ = make_ctx(tmp_path)
    target = ctx.directory / "big.txt"
    body = "".join(f"line {i} {'x' * 50}\n" for i in range(330_000))  # ~20 MB: each write takes a while
    target.write_bytes(("MARK-A\n" + body).encode())
    leftovers: set[str] = set()
    for _ in range(20):  # until a kill lands while the child's temporary file exists
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD.format(root=str(ROOT), base=str(tmp_path))],
            stdout=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
        )
        try:
            assert child.stdout is not None and child.stdout.readline().strip() == "ready"
            deadline = time.monotonic() + 120
            while (
                not _temps(ctx.directory, "big.txt") and time.monotonic() < deadline and child.poll() is None
            ):
                time.sleep(0.0005)
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=30)
        leftovers = _temps(ctx.directory, "big.txt")
        if leftovers:
            break
    assert leftovers, "no kill landed mid-write"
    assert all(f"-{child.pid}-" in name for name in leftovers)  # the name says whose it was

    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    try:
        live = ctx.directory / f".big.txt.agentcli-{sleeper.pid}-0123abcd.tmp"  # a writer still at work
        live.write_bytes(b"partial")
        other = ctx.directory / f".notes.txt.agentcli-{child.pid}-0123abcd.tmp"  # another file's
        other.write_bytes(b"partial")
        ancient = (
            ctx.directory / ".big.txt.agentcli-4567cdef.tmp"
        )  # no pid in the name, untouched for an hour
        ancient.write_bytes(b"partial")
        hour_ago = time.time() - 3600
        os.utime(ancient, (hour_ago, hour_ago))

        ctx.file_times.record_read(target)
        now = target.read_bytes()[:6].decode()
        call(ctx, "edit", {"filePath": "big.txt", "oldString": now, "newString": "MARK-C"})
        assert target.read_bytes()[:6] == b"MARK-C"
        assert _temps(ctx.directory, "big.txt") == {live.name}
        assert other.exists()
    finally:
        sleeper.kill()
        sleeper.wait(timeout=30)
