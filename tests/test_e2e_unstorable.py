"""Characters a database cannot store, through the CLI: NUL bytes and bytes that are not UTF-8 in
what the user sends are kept (as U+FFFD) on every backend instead of losing the message, and
``sessions copy`` names and skips a session it cannot copy instead of copying nothing. SQLite by
default; PostgreSQL when AGENTCLI_TEST_DB_URL is set (the second pass of .ci/run)."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest

from agentcli.store import ids
from agentcli.store.records import TextPart, UserMessage
from agentcli.store.store import Store
from tests import zygote
from tests.dbs import database
from tests.fakellm import FakeLLM, Reply
from tests.workspace import Workspace, agentcli_argv

MARK = "\ufffd"


def _run_bytes(ws: Workspace, *args: str, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    return zygote.run([*agentcli_argv(), *args], cwd=ws.project, env=ws.env, input=stdin, timeout=120)


@pytest.mark.parametrize(
    ("piped", "kept"),
    [
        (b"first\x00walrus second end\n", f"first{MARK}walrus second end\n"),
        (b"first walrus second \xff\xfe end\n", f"first walrus second {MARK}{MARK} end\n"),
    ],
    ids=["nul", "not-utf8"],
)
def test_a_message_with_unstorable_bytes_is_answered_kept_and_found(
    workspace: Workspace, fake_llm: FakeLLM, piped: bytes, kept: str
) -> None:
    fake_llm.push(Reply(text="That log has a NUL in it."))
    proc = _run_bytes(workspace, "run", "what is in this log?", stdin=piped)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    assert b"That log has a NUL in it." in proc.stdout
    expected = f"what is in this log?\n\n{kept}"
    sent = fake_llm.chat_requests()[-1].body["messages"][-1]
    assert sent == {"role": "user", "content": expected}  # the model is sent what was stored
    store = workspace.store()
    session = store.latest_session(str(workspace.project))
    assert session is not None and session.title and session.messages == 2
    history = store.messages(session.id)
    assert [m.text() for m in history] == [expected, "That log has a NUL in it."]
    assert [h.session_id for h in store.search("walrus")] == [session.id]  # words after the NUL too
    store.close()


def _old_sqlite_sessions(path: Path) -> tuple[str, str, str]:
    """A laptop's SQLite file: a plain session, one an older agentcli wrote with a NUL in it (its
    JSON holds the ``\\u0000`` escape PostgreSQL refuses), and one with a part this agentcli cannot
    read (written by a newer one)."""
    store = Store(path)
    sids = []
    for title in ("plain", "with a nul", "from the future"):
        sid = store.create_session("/p", title=title).id
        msg = UserMessage(id=ids.ascending("msg"), session_id=sid)
        store.put_message(msg)
        store.put_part(TextPart(id=ids.ascending("prt"), session_id=sid, message_id=msg.id, text=title))
        store.set_state(sid, "todos", [{"content": f"todo of {title}"}])
        sids.append(sid)
    store.close()
    raw = sqlite3.connect(path)
    raw.execute(
        "UPDATE part SET data = replace(data, 'with a nul', 'with a \\u0000 nul') WHERE session_id = ?",
        (sids[1],),
    )
    raw.execute("UPDATE part SET type = 'hologram' WHERE session_id = ?", (sids[2],))
    raw.execute(
        "UPDATE part SET data = json_set(data, '$.type', 'hologram') WHERE session_id = ?", (sids[2],)
    )
    raw.commit()
    raw.close()
    return sids[0], sids[1], sids[2]


def test_sessions_copy_names_and_skips_a_session_it_cannot_copy_and_copies_the_rest(
    workspace: Workspace, tmp_path: Path
) -> None:
    laptop = tmp_path / "laptop.db"
    plain, with_nul, future = _old_sqlite_sessions(laptop)
    with database(tmp_path, "team.db") as team:
        proc = workspace.run("sessions", "copy", "--from", str(laptop), "--to", team)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert "copied 2 sessions (2 messages, 2 parts)" in proc.stdout
        skipped = [line for line in proc.stderr.splitlines() if "skipped session" in line]
        assert len(skipped) == 1 and future in skipped[0] and "hologram" in skipped[0], proc.stderr
        assert "1 session not copied" in proc.stderr
        target = Store(team)
        assert {s.id for s in target.list_sessions()} == {plain, with_nul}
        assert target.messages(with_nul)[0].text() == f"with a {MARK} nul"
        assert target.get_state(with_nul, "todos") == [{"content": "todo of with a nul"}]
        assert [h.session_id for h in target.search("nul")] == [with_nul]
        target.close()
        again = workspace.run("sessions", "copy", "--from", str(laptop), "--to", team, plain)
        assert again.returncode == 0 and "copied 1 sessions" in again.stdout, again.stderr
