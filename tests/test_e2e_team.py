"""Several agents on one database, as a team runs them: `agentcli run` processes continuing the same
sessions wait for each other (the session lease) instead of answering each other's questions, a
killed agent does not lock its session for good, and database trouble is one line. SQLite by
default; PostgreSQL when AGENTCLI_TEST_DB_URL is set (the second pass of .ci/run)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import threading

import pytest

from agentcli.store.records import AssistantMessage, StepFinishPart, UserMessage, WithParts
from agentcli.store.store import Store
from tests import zygote
from tests.dbs import on_postgres
from tests.fakellm import FakeLLM, Recorded, Reply, ToolCall, Usage
from tests.workspace import Workspace, agentcli_argv, assert_one_line_error

TEAM_TURNS = int(os.environ.get("AGENTCLI_TEAM_TURNS", "3"))  # the issue asks 20; 3 keeps CI short


def _start(ws: Workspace, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return zygote.popen(
        [*agentcli_argv(), *args],
        cwd=ws.project,
        env={**ws.env, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(proc: subprocess.Popen[str], timeout: float = 120) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def _last_role(rec: Recorded) -> str:
    return str((rec.body.get("messages") or [{}])[-1].get("role"))


def _is_summary(rec: Recorded) -> bool:
    return any(
        "working summary" in json.dumps(m)
        for m in rec.body.get("messages") or []
        if m.get("role") == "system"
    )


def _answers(history: list[WithParts]) -> dict[str, list[AssistantMessage]]:
    out: dict[str, list[AssistantMessage]] = {}
    for m in history:
        if isinstance(m.info, AssistantMessage) and not m.info.summary:
            out.setdefault(m.info.parent_id, []).append(m.info)
    return out


def _question(m: WithParts) -> str:
    return m.text() if isinstance(m.info, UserMessage) else ""


class _Gate:
    """The first chat request is held until the test opens the gate (a turn that runs as long as
    the test needs, whatever the machine's load); later requests are answered at once."""

    def __init__(self, llm: FakeLLM, first: str, then: str) -> None:
        self.arrived = threading.Event()  # the first request is being held (fakellm records it later)
        self.open = threading.Event()
        self.count = 0
        self.texts = (first, then)
        llm.on(lambda r: not r.title, self._answer)

    def _answer(self, rec: Recorded) -> Reply:
        self.count += 1
        if self.count == 1:
            self.arrived.set()
            self.open.wait(600)
            return Reply(text=self.texts[0])
        return Reply(text=self.texts[1])


def _busy_turn(
    ws: Workspace, llm: FakeLLM, question: str, first: str, then: str, env: dict[str, str] | None = None
) -> tuple[Store, str, _Gate, subprocess.Popen[str]]:
    """A shared session whose first agent is mid-turn (its model request held at the gate)."""
    store = ws.store()
    sid = store.create_session(str(ws.project), "fake/test-model", title="shared").id
    gate = _Gate(llm, first, then)
    proc = _start(ws, "run", "-s", sid, question, env=env)
    assert gate.arrived.wait(600)
    return store, sid, gate, proc


def _run(ws: Workspace, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return zygote.run(
        [*agentcli_argv(), *args],
        cwd=ws.project,
        env={**ws.env, **env},
        text=True,
        timeout=600,
    )


def _wait_for_line(proc: subprocess.Popen[str], needle: str) -> str:
    """Read the process's stderr until a line holds ``needle``; returns what was read."""
    assert proc.stderr is not None
    seen = ""
    for line in proc.stderr:
        seen += line
        if needle in line:
            return seen
    return seen


def test_two_agents_continuing_one_session_take_turns(workspace: Workspace, fake_llm: FakeLLM) -> None:
    store, sid, gate, first = _busy_turn(
        workspace, fake_llm, "first question", "first answer", "second answer"
    )
    second = _start(workspace, "run", "-s", sid, "second question")
    told = _wait_for_line(second, "is busy")
    gate.open.set()
    code1, out1, err1 = _finish(first)
    code2, out2, err2 = _finish(second)
    assert (code1, code2) == (0, 0), err1 + told + err2
    assert "waiting" in told and sid in told
    assert "first answer" in out1 and "second answer" in out2
    history = store.messages(sid)
    assert [_question(m) for m in history if isinstance(m.info, UserMessage)] == [
        "first question",
        "second question",
    ]
    answers = _answers(history)
    assert all(len(answers[m.id]) == 1 for m in history if isinstance(m.info, UserMessage))
    assert len(fake_llm.chat_requests()) == 2  # no question answered twice
    store.close()


def test_a_busy_session_is_refused_in_one_line_after_the_wait(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    store, sid, gate, first = _busy_turn(workspace, fake_llm, "long question", "long answer", "unexpected")
    refused = _run(workspace, "run", "-s", sid, "impatient question", env={"AGENTCLI_SESSION_WAIT": "1"})
    gate.open.set()
    line = assert_one_line_error(refused)
    assert "busy" in line and sid in line
    assert _finish(first)[0] == 0
    assert [_question(m) for m in store.messages(sid) if isinstance(m.info, UserMessage)] == ["long question"]
    store.close()


def test_a_killed_agents_session_is_free_at_once(workspace: Workspace, fake_llm: FakeLLM) -> None:
    # The default 30 s lease, and no waiting: the next agent sees the holder's process is gone.
    store, sid, gate, victim = _busy_turn(
        workspace, fake_llm, "doomed question", "never sent", "answered after the crash"
    )
    victim.send_signal(signal.SIGKILL)
    victim.wait(60)
    proc = _run(workspace, "run", "-s", sid, "next question", env={"AGENTCLI_SESSION_WAIT": "0"})
    gate.open.set()
    assert proc.returncode == 0, proc.stderr
    assert "answered after the crash" in proc.stdout
    questions = [_question(m) for m in store.messages(sid) if isinstance(m.info, UserMessage)]
    assert questions == ["doomed question", "next question"]  # what the killed agent wrote is kept
    store.close()


def test_an_unreachable_postgres_url_is_one_line_and_creates_no_file(workspace: Workspace) -> None:
    url = "postgresql+psycopg://agentcli:secret@127.0.0.1:9/agentcli"
    proc = workspace.run("--db", url, "sessions", "list")
    line = assert_one_line_error(proc)
    assert "cannot reach database" in line and "secret" not in line
    assert not list(workspace.project.glob("postgresql*")) and not (workspace.project / "agentcli").exists()
    proc = workspace.run("--db", "mysql://u@h/db", "sessions", "list")
    assert "unsupported database URL" in assert_one_line_error(proc)


@pytest.mark.skipif(
    on_postgres(), reason="another program locking the SQLite file; PostgreSQL locks: test_store_backends"
)
def test_a_database_locked_by_another_program_is_one_line(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.store().close()
    holder = sqlite3.connect(workspace.db)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        proc = _run(workspace, "run", "hello", env={"AGENTCLI_DB_BUSY_TIMEOUT": "0.5"})
    finally:
        holder.rollback()
        holder.close()
    assert "locked by another program" in assert_one_line_error(proc)


def _team_reply(rec: Recorded) -> Reply:
    """The model of the team test: every question reads a file, then answers; summaries are short."""
    if _is_summary(rec):
        return Reply(
            text="## Goal\nsummary of the work so far",
            usage=Usage(prompt_tokens=50, completion_tokens=10),
        )
    if _last_role(rec) == "tool":
        return Reply(text="done reading", usage=Usage(prompt_tokens=40, completion_tokens=3))
    return Reply(
        tool_calls=[ToolCall("read", {"filePath": "notes.txt"})],
        usage=Usage(prompt_tokens=30, completion_tokens=5),
    )


def _run_team(workspace: Workspace, sids: list[str]) -> list[str]:
    """8 agents, 2 per session, and `sessions list` in a loop meanwhile; the errors they saw."""
    errors: list[str] = []
    stop = threading.Event()

    def lister() -> None:
        while not stop.is_set():
            proc = workspace.run("sessions", "list", "--json", timeout=120)
            if proc.returncode != 0 or len(json.loads(proc.stdout or "[]")) != 4:
                errors.append(f"sessions list: {proc.returncode} {proc.stderr.strip()}")

    def agent(n: int) -> None:
        sid = sids[n % 4]
        for turn in range(TEAM_TURNS):
            proc = workspace.run("run", "-y", "-s", sid, f"question {n}-{turn}", timeout=300)
            if proc.returncode != 0 or "Traceback" in proc.stderr:
                errors.append(f"run {n}-{turn}: {proc.returncode} {proc.stderr.strip()[-300:]}")
            if n < 4 and turn == min(1, TEAM_TURNS - 1):
                proc = workspace.run("compact", sid, timeout=300)
                if proc.returncode != 0:
                    errors.append(f"compact {n}: {proc.returncode} {proc.stderr.strip()[-300:]}")

    watcher = threading.Thread(target=lister)
    watcher.start()
    agents = [threading.Thread(target=agent, args=(n,)) for n in range(8)]
    for a in agents:
        a.start()
    for a in agents:
        a.join(900)
    stop.set()
    watcher.join(120)
    return errors


def _assert_nothing_lost_or_doubled(store: Store, sid: str, i: int) -> None:
    history = store.messages(sid)
    questions = [
        _question(m)
        for m in history
        if isinstance(m.info, UserMessage) and _question(m).startswith("question")
    ]
    expected = {f"question {n}-{t}" for n in (i, i + 4) for t in range(TEAM_TURNS)}
    assert sorted(questions) == sorted(expected)  # none lost, none doubled
    answers = _answers(history)
    users = [m for m in history if isinstance(m.info, UserMessage) and _question(m).startswith("question")]
    for m in users:
        steps = answers.get(m.id, [])
        assert [a.finish for a in steps] == ["tool-calls", "stop"], (m.id, steps)
    # The lease held: every answer follows its own question, never another agent's.
    current = None
    for m in history:
        if isinstance(m.info, UserMessage):
            current = m.id
        elif not m.info.summary:
            assert m.info.parent_id == current
    info = store.get_session(sid)
    steps = [p for m in history for p in m.parts if isinstance(p, StepFinishPart)]
    assert info.messages == len(history)
    assert info.tokens.total == sum(p.tokens.total for p in steps)
    assert abs(info.cost - sum(p.cost for p in steps)) < 1e-9
    assert info.compactions == 1
    assert sum(1 for m in history if isinstance(m.info, AssistantMessage) and m.info.summary) == 1


@pytest.mark.timeout(120 + 60 * TEAM_TURNS)  # 8 agents at once; AGENTCLI_TEAM_TURNS=20 runs for minutes
def test_eight_agents_on_four_sessions_lose_and_double_nothing(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """8 `agentcli run` processes, 2 per session, TEAM_TURNS turns each with a tool call, one
    `agentcli compact` per session, and `sessions list` in a loop meanwhile."""
    (workspace.project / "notes.txt").write_text("remember the walrus\n")
    fake_llm.on(lambda r: not r.title, _team_reply)
    store = workspace.store()
    sids = [
        store.create_session(str(workspace.project), "fake/test-model", title=f"team {i}").id
        for i in range(4)
    ]
    assert _run_team(workspace, sids) == []
    for i, sid in enumerate(sids):
        _assert_nothing_lost_or_doubled(store, sid, i)
    store.close()


def test_database_url_comes_from_the_user_config_never_from_the_project(workspace: Workspace) -> None:
    team_db = workspace.root / "team" / "shared.db"
    elsewhere = workspace.root / "elsewhere.db"
    workspace.write_config({"database": {"url": f"sqlite:///{elsewhere}"}})  # a project file: ignored
    env = {k: v for k, v in workspace.env.items() if k != "AGENTCLI_DB"}

    def agentcli(*args: str) -> subprocess.CompletedProcess[str]:
        return zygote.run(
            [*agentcli_argv(), *args],
            cwd=workspace.project,
            env=env,
            text=True,
            timeout=600,
        )

    assert agentcli("config", "set", "database.url", f"sqlite:///{team_db}").returncode == 0
    proc = agentcli("sessions", "list")
    assert proc.returncode == 0, proc.stderr
    assert team_db.is_file() and not elsewhere.exists()
