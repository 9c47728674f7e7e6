"""Frictions of a new user's first hour (issue 26), each as the user meets it."""

from __future__ import annotations

import subprocess
from pathlib import Path

from agentcli.store import ids
from agentcli.store.records import TextPart, UserMessage
from tests.workspace import agentcli_argv, make_workspace


def test_sessions_show_into_head_exits_0(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, "http://127.0.0.1:1/v1")
    store = ws.store()
    sid = store.create_session(str(ws.project), "m").id
    for _ in range(300):  # far more than a pipe's buffer holds
        msg = UserMessage(id=ids.ascending("msg"), session_id=sid)
        store.put_message(msg)
        part = TextPart(id=ids.ascending("prt"), session_id=sid, message_id=msg.id, text="a long line " * 50)
        store.put_part(part)
    store.close()
    proc = subprocess.Popen(
        [*agentcli_argv(), "sessions", "show", sid],
        cwd=ws.project,
        env=ws.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline()  # `| head -1`: one line, then the reader goes away
    proc.stdout.close()
    assert proc.wait(timeout=60) == 0
    assert proc.stderr is not None
    assert b"Traceback" not in proc.stderr.read()
