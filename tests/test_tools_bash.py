from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from agentcli.tools.base import PermissionDenied, ToolError
from tests.test_tools_support import call, make_ctx


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it is dead for our purpose.
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_runs_in_directory_merging_stdout_and_stderr_in_order(tmp_path):
    ctx, asker = make_ctx(tmp_path)
    res = call(
        ctx, "bash", {"command": "pwd; echo out; echo err >&2; echo out2", "description": "Print things"}
    )
    assert res.output == f"{ctx.directory}\nout\nerr\nout2\n"
    assert res.metadata["exit"] == 0 and res.title == "Print things"
    (req,) = asker.asked
    assert req.tool == "bash" and req.patterns == ["pwd", "echo out", "echo err", "echo out2"]  # each command


def test_workdir_and_nonzero_exit(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    (ctx.directory / "sub").mkdir()
    res = call(ctx, "bash", {"command": "basename $PWD; exit 3", "workdir": "sub", "description": "d"})
    assert res.output.startswith("sub\n")
    assert res.metadata["exit"] == 3
    assert "Command exited with code 3" in res.output
    with pytest.raises(ToolError, match="workdir is not a directory"):
        call(ctx, "bash", {"command": "true", "workdir": "missing", "description": "d"})


def test_timeout_kills_the_whole_process_group(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    pidfile = tmp_path / "child.pid"
    started = time.monotonic()
    res = call(
        ctx,
        "bash",
        {
            "command": f"sleep 30 & echo $! > {pidfile}; echo started; wait",
            "timeout": 500,
            "description": "d",
        },
    )
    assert time.monotonic() - started < 5
    assert "started" in res.output
    assert "bash tool terminated command after exceeding timeout 500 ms" in res.output
    assert res.metadata["timedOut"] is True
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 30  # a condition: the loop ends as soon as the grandchild is gone
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child), "the backgrounded grandchild survived the timeout"


def test_abort_kills_promptly(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    threading.Timer(0.3, ctx.abort.set).start()
    started = time.monotonic()
    res = call(ctx, "bash", {"command": "echo begin; sleep 300", "description": "d"})
    assert time.monotonic() - started < 60  # killed, not waited for: the command alone takes 300 s
    assert "begin" in res.output and "User aborted the command" in res.output
    assert res.metadata["aborted"] is True


def test_denied_command_never_runs(tmp_path):
    ctx, _ = make_ctx(tmp_path, answer="deny")
    marker = tmp_path / "ran"
    with pytest.raises(PermissionDenied):
        call(ctx, "bash", {"command": f"touch {marker}", "description": "d"})
    assert not marker.exists()


def test_huge_output_keeps_the_tail_and_saves_the_rest(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    res = call(ctx, "bash", {"command": "seq 1 5000; echo FINAL >&2", "description": "d"})
    assert res.metadata["truncated"] is True
    saved = res.metadata["outputPath"]
    assert saved.startswith(str(ctx.output_dir))
    with open(saved) as fh:
        full = fh.read()
    assert full.startswith("1\n2\n") and full.endswith("5000\nFINAL\n")
    assert "FINAL" in res.output and "\n1\n2\n" not in res.output
    assert f"Full output saved to: {saved}" in res.output


def test_background_process_holding_the_pipe_does_not_hang(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    started = time.monotonic()
    res = call(ctx, "bash", {"command": "(sleep 300 &) ; echo done", "description": "d"})
    assert time.monotonic() - started < 60  # the background sleep holding the pipe takes 300 s
    assert "done" in res.output


def test_bad_timeout_is_an_error(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    with pytest.raises(ToolError, match="Invalid timeout value"):
        call(ctx, "bash", {"command": "true", "timeout": -1, "description": "d"})


def test_timeout_still_applies_after_the_command_closes_its_output(tmp_path):
    ctx, _ = make_ctx(tmp_path)
    started = time.monotonic()
    res = call(
        ctx, "bash", {"command": "echo bye; exec >&- 2>&-; sleep 300", "timeout": 400, "description": "d"}
    )
    assert time.monotonic() - started < 60  # the timeout killed it: the command alone takes 300 s
    assert res.output.startswith("bye\n") and "exceeding timeout 400 ms" in res.output


def test_runaway_output_keeps_only_the_newest_bytes_in_memory(tmp_path, monkeypatch):
    from agentcli.tools import bash

    monkeypatch.setattr(bash, "MAX_CAPTURE_BYTES", 200_000)
    ctx, _ = make_ctx(tmp_path)
    res = call(
        ctx, "bash", {"command": "head -c 2000000 /dev/zero | tr '\\0' a; echo; echo END", "description": "d"}
    )
    full = Path(res.metadata["outputPath"]).read_text()
    assert full.startswith("...(") and "bytes of earlier output dropped)..." in full.splitlines()[0]
    assert full.endswith("END\n") and len(full) < 300_000
