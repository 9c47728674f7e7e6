"""Frictions of a new user's first hour (issue 26), each as the user meets it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pexpect

from agentcli.store import ids
from agentcli.store.records import TextPart, UserMessage
from tests import zygote
from tests.fakellm import FakeLLM
from tests.terminal import spawn
from tests.workspace import Workspace, agentcli_argv, make_workspace

PROMPT = "›"


def send_line(child: pexpect.spawn, text: str) -> None:
    child.send(text)
    child.send("\r")


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
    proc = zygote.popen(
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


def test_a_mistyped_slash_command_gets_a_did_you_mean(workspace: Workspace, fake_llm: FakeLLM) -> None:
    child = spawn(workspace)
    send_line(child, "/cmopact")
    child.expect("unknown command /cmopact")
    child.expect(r"did you mean /compact\?")
    child.expect(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def test_model_with_api_base_is_checked_against_the_servers_list_at_once(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    child = spawn(workspace, "-m", "openai/test-model", "--api-base", fake_llm.base_url)
    send_line(child, "/model openai/no-such-model")
    child.expect("has no model 'no-such-model'")
    child.expect("it lists: test-model")
    child.expect(PROMPT)
    send_line(child, "/model")
    child.expect("model: openai/test-model")  # the old model stays
    child.expect(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    assert fake_llm.chat_requests() == []
