"""A session remembers what it runs on: its model and API base come back with `-c` (in `run`, the chat
and `compact`), the last `/model` sticks, undoing a compaction needs no key, bare `agentcli` takes the
chat's options, and the chat outlives a database that fails under it."""

from __future__ import annotations

import json

from sqlalchemy import create_engine, text

from tests.fakellm import FakeLLM, Reply, ToolCall, Usage
from tests.terminal import PROMPT, leave, say, spawn
from tests.workspace import Workspace, assert_one_line_error

DEAD_URL = "http://127.0.0.1:9/v1"  # nothing listens there


def _no_default_model(ws: Workspace, base_url: str) -> None:
    """A provider but no "model": the user picks one on the command line."""
    config = ws.write_config()
    del config["model"]
    config["provider"]["fake"]["options"]["baseURL"] = base_url
    config["provider"]["fake"]["models"]["other"] = {"limit": {"context": 100_000, "output": 8_000}}
    (ws.project / "opencode.json").write_text(json.dumps(config))


def test_run_continue_resumes_on_the_sessions_model_and_api_base(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    _no_default_model(workspace, DEAD_URL)  # only --api-base reaches the server
    fake_llm.push(Reply(text="first", usage=Usage(800, 3)), Reply(text="second", usage=Usage(900, 3)))
    first = workspace.run("run", "-m", "fake/test-model", "--api-base", fake_llm.base_url, "hello")
    assert first.returncode == 0, first.stderr
    again = workspace.run("run", "-c", "and again")
    assert again.returncode == 0, again.stderr
    assert "second" in again.stdout
    assert [r.body["model"] for r in fake_llm.chat_requests()] == ["test-model", "test-model"]


def test_continue_after_a_run_on_a_dead_url_says_which_url_it_resumes_with(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    _no_default_model(workspace, fake_llm.base_url)
    failed = workspace.run("run", "-m", "fake/test-model", "--api-base", DEAD_URL, "hello")
    assert failed.returncode != 0
    again = workspace.run("run", "-c", "hello again")  # no --api-base: the session's own, said so
    assert again.returncode != 0
    [line] = [line for line in again.stderr.splitlines() if "resuming on" in line]
    assert DEAD_URL in line and "--api-base" in line
    fake_llm.push(Reply(text="reached", usage=Usage(800, 3)))
    fixed = workspace.run("run", "-c", "--api-base", fake_llm.base_url, "once more")
    assert fixed.returncode == 0, fixed.stderr
    assert "reached" in fixed.stdout and "resuming on" not in fixed.stderr
    fake_llm.push(Reply(text="kept", usage=Usage(900, 3)))
    later = workspace.run("run", "-c", "and later")  # the working URL is the one stored now
    assert later.returncode == 0, later.stderr
    assert f"resuming on {fake_llm.base_url}" in later.stderr


def test_a_continued_chat_says_which_url_it_resumes_with(workspace: Workspace, fake_llm: FakeLLM) -> None:
    _no_default_model(workspace, fake_llm.base_url)
    assert workspace.run("run", "-m", "fake/test-model", "--api-base", DEAD_URL, "hello").returncode != 0
    child = spawn(workspace, "-c", prompt=False)
    child.expect(f"resuming on {DEAD_URL}")
    child.expect("--api-base")
    child.expect(PROMPT)
    assert leave(child) == 0


def test_the_last_slash_model_is_the_one_a_continued_chat_uses(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    _no_default_model(workspace, fake_llm.base_url)
    fake_llm.push(Reply(text="first answer", usage=Usage(800, 3)))
    child = spawn(workspace, "-m", "fake/test-model")
    say(child, "hello", "first answer")
    say(child, "/model fake/other", "model: fake/other")
    assert leave(child) == 0  # nothing sent on the new model yet

    fake_llm.push(Reply(text="second answer", usage=Usage(900, 3)))
    child = spawn(workspace, "-c", prompt=False)
    child.expect("model fake/other")  # the banner
    child.expect(PROMPT)
    say(child, "go on", "second answer")
    assert leave(child) == 0
    assert fake_llm.chat_requests()[-1].body["model"] == "other"


def test_compact_undo_needs_no_api_key(workspace: Workspace, fake_llm: FakeLLM) -> None:
    sid = workspace.seed_turns(fake_llm, [("question", Reply(text="answer", usage=Usage(900, 3)))])
    workspace.seed_compaction(fake_llm, Reply(text="## Objective\n- questions"), sid)
    # The session runs on a provider whose key comes from the environment, and the key is not there.
    store = workspace.store()
    store.update_session(sid, model="openai/gpt-4o")
    store.close()
    missing = workspace.run("run", "-c", "more")
    assert "OPENAI_API_KEY" in assert_one_line_error(missing)  # a turn does need the key

    undone = workspace.run("compact", "--undo")
    assert undone.returncode == 0, undone.stderr
    assert "compaction undone" in undone.stderr


def test_bare_agentcli_takes_the_chats_options(workspace: Workspace, fake_llm: FakeLLM) -> None:
    """The README's Ollama line: `agentcli -m MODEL --api-base URL`, plus --yes and --trust."""
    _no_default_model(workspace, DEAD_URL)
    marker = workspace.project / "made.txt"
    fake_llm.push(
        Reply(tool_calls=[ToolCall("bash", {"command": "echo hi > made.txt", "description": "make"})]),
        Reply(text="Made it.", usage=Usage(900, 5)),
    )
    child = spawn(workspace, "-m", "fake/test-model", "--api-base", fake_llm.base_url, "--yes", "--trust")
    say(child, "make a file", "Made it.")  # --yes: no permission question
    assert leave(child) == 0
    assert marker.read_text() == "hi\n"
    misplaced = workspace.run("--yes", "sessions", "list")
    assert "go after the command" in assert_one_line_error(misplaced)


def test_the_chat_survives_a_failing_database(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="stored answer", usage=Usage(800, 3)))
    child = spawn(workspace)
    say(child, "hello", "stored answer")
    engine = create_engine(workspace.db_url if "://" in workspace.db_url else f"sqlite:///{workspace.db}")
    with engine.begin() as conn:  # the database breaks under the running chat
        conn.execute(text("ALTER TABLE session RENAME TO session_gone"))
    engine.dispose()
    for command in ("/sessions", "/resume", "hello again"):
        say(child, command, "error:")
    assert leave(child) == 0  # still there to leave
