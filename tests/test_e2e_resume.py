"""Coming back to a session: `agentcli -c`, `/resume` and the `/sessions` picker show where it stands."""

from __future__ import annotations

from tests.fakellm import FakeLLM, Reply, Usage
from tests.terminal import PROMPT, leave, say, spawn
from tests.workspace import Workspace


def test_continue_shows_the_last_exchanges_and_the_gauge_before_the_prompt(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.seed_turns(
        fake_llm,
        [(f"question {i}", Reply(text=f"answer number {i}", usage=Usage(3_000 + i, 10))) for i in range(3)],
    )
    child = spawn(workspace, "-c", prompt=False)  # bare agentcli takes the chat's options
    child.expect("earlier turns")
    child.expect("question 1")
    child.expect("answer number 1")
    child.expect("question 2")
    child.expect("answer number 2")
    child.expect(r"3(\.0)?k / 100k")  # the gauge: the stored count against the model's window
    child.expect(PROMPT)
    assert "question 0" not in child.before
    assert leave(child) == 0


def test_sessions_picker_switches_in_place(workspace: Workspace, fake_llm: FakeLLM) -> None:
    store = workspace.store()
    first = workspace.seed_turns(
        fake_llm, [("the first session's question", Reply(text="first reply", usage=Usage(900, 5)))]
    )
    store.create_session(str(workspace.project), "fake/test-model")
    workspace.seed_turns(
        fake_llm, [("the second session's question", Reply(text="second reply", usage=Usage(900, 5)))]
    )
    child = spawn(workspace)
    child.send("/sessions\r")
    child.expect("number to switch to")
    child.send("2\r")  # newest first: 2 is the first session
    child.expect("now in")
    child.expect("first reply")
    child.expect(PROMPT)
    fake_llm.push(Reply(text="continuing the first", usage=Usage(1_000, 5)))
    say(child, "and now?", "continuing the first")
    assert leave(child) == 0
    sent = str(fake_llm.chat_requests()[-1].body["messages"])
    assert "the first session's question" in sent and "the second session's question" not in sent
    assert store.get_session(first).messages == 4


def test_resume_switches_to_the_latest_session_here(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.seed_turns(fake_llm, [("an old question", Reply(text="an old answer", usage=Usage(900, 5)))])
    child = spawn(workspace)
    say(child, "/resume", "an old answer", "context")
    assert leave(child) == 0
