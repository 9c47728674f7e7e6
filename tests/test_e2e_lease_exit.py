"""The session lease through the CLI: a turn that lost its lease (its process was stalled past the
lease, another agent took the session) stops writing and says so, and every way out of the process
frees the lease at once — the fast exit after a cancelled turn that would not wind down, a hang-up —
instead of locking the session for the lease's 30 s. SQLite by default; PostgreSQL when
AGENTCLI_TEST_DB_URL is set (the second pass of .ci/run)."""

from __future__ import annotations

import signal
import time

from agentcli.store.records import AssistantMessage, UserMessage
from tests.fakellm import FakeLLM, Reply, ToolCall
from tests.test_e2e_team import _busy_turn, _finish, _question, _run, _start
from tests.workspace import Workspace

NO_WAIT = {"AGENTCLI_SESSION_WAIT": "0"}  # a session still leased is refused at once


def test_a_turn_whose_session_was_taken_over_stops_writing_and_says_so(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    ttl = {"AGENTCLI_SESSION_LEASE_TTL": "1"}
    store, sid, gate, first = _busy_turn(
        workspace, fake_llm, "first question", "late answer", "second answer", env=ttl
    )
    first.send_signal(signal.SIGSTOP)  # the laptop's lid closes mid-turn: no heartbeat, no writes
    try:
        # Another agent waits for the stalled one's lease to lapse, then takes the session.
        second = _run(workspace, "run", "-s", sid, "second question", env=ttl)
    finally:
        first.send_signal(signal.SIGCONT)
    assert second.returncode == 0 and "second answer" in second.stdout, second.stderr
    gate.open.set()  # the stalled turn's answer arrives after all
    code, _out, err = _finish(first)
    errors = [line for line in err.splitlines() if line.startswith("agentcli: error:")]
    assert code == 1 and "Traceback" not in err, err
    assert len(errors) == 1 and "taken over" in errors[0] and sid in errors[0], err
    history = store.messages(sid)
    assert [_question(m) for m in history if isinstance(m.info, UserMessage)] == [
        "first question",
        "second question",
    ]
    said = "\n".join(m.text() for m in history if isinstance(m.info, AssistantMessage))
    assert "second answer" in said and "late answer" not in said  # nothing written after the loss
    store.close()


STUCK_PLUGIN = """
import time
from pathlib import Path
from agentcli.plugins import hookimpl

@hookimpl
def tool_execute_before(input, output):
    Path(__file__).with_name("entered").write_text("yes")
    time.sleep(600)  # a hook that ignores the turn's abort: Ctrl-C cannot wind the turn down
"""


def test_the_fast_exit_after_a_turn_that_would_not_wind_down_frees_the_session(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.project / "stuck.py").write_text(STUCK_PLUGIN)
    workspace.write_config({"plugin": ["stuck.py"]})
    sid = workspace.store().create_session(str(workspace.project), "fake/test-model", title="t").id
    fake_llm.push(Reply(tool_calls=[ToolCall("read", {"filePath": "opencode.json"})]))
    proc = _start(workspace, "run", "-s", sid, "read the config")
    entered = workspace.project / "entered"
    deadline = time.monotonic() + 120
    while not entered.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert entered.exists(), proc.stderr.read() if proc.stderr else ""
    proc.send_signal(signal.SIGINT)  # cancelled, but the hook goes on: the turn cannot wind down
    assert proc.stderr is not None
    said = []
    for line in proc.stderr:  # after a second: it says so, and how to leave at once
        said.append(line)
        if "winding down" in line:
            break
    assert said[-1:] == ["agentcli: the turn is still winding down; Ctrl-C again to leave it now\n"], said
    proc.send_signal(signal.SIGINT)  # the user does: the process leaves without the turn
    code, _out, err = _finish(proc)
    assert code == 130, err
    fake_llm.push(Reply(text="free at once"))
    workspace.write_config()  # without the stuck plugin
    after = _run(workspace, "run", "-s", sid, "anyone there?", env=NO_WAIT)
    assert after.returncode == 0 and "free at once" in after.stdout, after.stderr


def test_a_hang_up_mid_turn_frees_the_session(workspace: Workspace, fake_llm: FakeLLM) -> None:
    store, sid, gate, first = _busy_turn(workspace, fake_llm, "question", "never read", "answered")
    first.send_signal(signal.SIGHUP)  # the terminal closed
    code, _out, err = _finish(first)
    assert code == 128 + signal.SIGHUP and "Traceback" not in err, err
    after = _run(workspace, "run", "-s", sid, "next question", env=NO_WAIT)
    gate.open.set()
    assert after.returncode == 0 and "answered" in after.stdout, after.stderr
    store.close()
