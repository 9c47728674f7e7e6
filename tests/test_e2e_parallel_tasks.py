"""Tasks the model asks for in one message run at the same time (as OpenCode runs them), at most three
at once; each answer goes back to its own call; Ctrl-C cancels every one of them."""

from __future__ import annotations

import signal
import subprocess
import threading
from pathlib import Path
from typing import Any

from agentcli.session.permission import PermissionPolicy
from agentcli.store.records import AssistantMessage, ToolPart
from agentcli.tools.base import PermissionAnswer, PermissionRequest
from agentcli.tools.registry import all_tools
from tests import zygote
from tests.builders import Harness
from tests.fakellm import FakeLLM, Hang, Recorded, Reply, ToolCall
from tests.test_e2e_subagents import REVIEWER, parts_of, system_text, task, tool_results
from tests.workspace import Workspace, agentcli_argv

HOLD = 60.0  # s a subagent's request waits for its siblings: far more than they need, even loaded


def is_child(request: Recorded) -> bool:
    return "You review code carefully." in system_text(request)


class Overlap:
    """Answers each subagent's request once three have arrived (or all there will be have): how many
    were in flight at once is then the concurrency the tasks ran with."""

    def __init__(self, total: int) -> None:
        self.total, self.arrived, self.active, self.most = total, 0, 0, 0
        self.cond = threading.Condition()

    def __call__(self, request: Recorded) -> Reply:
        job = request.body["messages"][-1]["content"]
        with self.cond:
            self.arrived += 1
            self.active += 1
            self.most = max(self.most, self.active)
            self.cond.notify_all()
            self.cond.wait_for(lambda: self.arrived >= min(3, self.total), timeout=HOLD)
            self.active -= 1
        return Reply(text=f"finished {job}")


def test_tasks_of_one_message_run_together_at_most_three_at_once(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config({"agent": {"reviewer": REVIEWER}})
    overlap = Overlap(total=4)
    fake_llm.on(is_child, overlap)
    jobs = [f"job {n}" for n in range(1, 5)]
    fake_llm.push(
        Reply(tool_calls=[task(job, description=job) for job in jobs]),
        Reply(text="All four are done."),
    )
    proc = workspace.run("run", "do the four jobs")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "All four are done."
    assert overlap.most == 3  # together, and never more than three at once
    # Each answer went back to its own call, in the order the model made them.
    results = tool_results(fake_llm.chat_requests()[-1])
    assert [r.split("<task_result>\n")[1].split("\n")[0] for r in results] == [f"finished {j}" for j in jobs]
    store = workspace.store()
    [parent] = [s for s in store.list_sessions() if not s.parent_id]
    calls = parts_of(workspace, parent.id)
    assert [c.state.input["prompt"] for c in calls] == jobs
    children = {s.id: s for s in store.children([parent.id])}
    assert len(children) == 4 and all(c.state.metadata["sessionId"] in children for c in calls)


def test_ctrl_c_cancels_every_task_running_together(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config({"agent": {"reviewer": REVIEWER}})
    fake_llm.on(is_child, lambda _r: Hang(HOLD))
    fake_llm.push(Reply(tool_calls=[task("first"), task("second", description="other")]))
    proc = zygote.popen(
        [*agentcli_argv(), "run", "go"],
        cwd=workspace.project,
        env=workspace.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    fake_llm.wait_for(3, timeout=HOLD)  # the parent's request and both subagents' are in flight
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=HOLD)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    store = workspace.store()
    [parent] = [s for s in store.list_sessions() if not s.parent_id]
    calls = parts_of(workspace, parent.id)
    assert len(calls) == 2 and all(c.state.status == "error" and c.state.interrupted for c in calls)
    for child in store.children([parent.id]):
        steps: list[Any] = [m.info for m in store.messages(child.id) if isinstance(m.info, AssistantMessage)]
        assert steps[-1].error is not None and steps[-1].error.name == "MessageAbortedError"
    assert len(fake_llm.chat_requests()) == 3  # nothing after the cancel


def test_tasks_continuing_one_session_take_turns(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config({"agent": {"reviewer": REVIEWER}})
    fake_llm.push(Reply(tool_calls=[task("start")]), Reply(text="started"), Reply(text="ok"))
    assert workspace.run("run", "begin").returncode == 0
    [child] = [s for s in workspace.store().list_sessions() if s.parent_id]
    overlap = Overlap(total=1)  # nothing waits: the count says whether both were in flight at once
    fake_llm.on(is_child, overlap)
    again = [task("more", task_id=child.id), task("and more", description="again", task_id=child.id)]
    fake_llm.push(Reply(tool_calls=again), Reply(text="done"))
    proc = workspace.run("run", "--continue", "go on")
    assert proc.returncode == 0, proc.stderr
    assert overlap.most == 1 and overlap.arrived == 2  # one after the other, in the one child session
    assert "is busy" not in proc.stderr and "waiting" not in proc.stderr


class Asker:
    """A user answering permission questions: each one waits to see whether another comes meanwhile."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.active = self.most = 0
        self.cond = threading.Condition()

    def __call__(self, request: PermissionRequest) -> PermissionAnswer:
        with self.cond:
            self.asked.append(request.title)
            self.active += 1
            self.most = max(self.most, self.active)
            self.cond.notify_all()
            # Both tasks ask at once unless questions take turns: the second would arrive now.
            self.cond.wait_for(lambda: len(self.asked) >= 2, timeout=WINDOW)
            self.active -= 1
        return "once"


WINDOW = 5.0  # s a question stays open for another to overlap it (the second only comes after, if serial)


def test_tasks_running_together_ask_their_questions_one_at_a_time(tmp_path: Path, fake_llm: FakeLLM) -> None:
    asker = Asker()
    h = Harness.make(
        tmp_path,
        fake_llm,
        policy=PermissionPolicy(asker=asker),
        tools={t.name: t for t in all_tools([])},
        extra={"agent": {"reviewer": REVIEWER}},
    )

    def child(request: Recorded) -> Reply:
        messages = request.body["messages"]
        if any(m["role"] == "tool" for m in messages):
            return Reply(text="ran it")
        job = messages[-1]["content"]
        return Reply(tool_calls=[ToolCall("bash", {"command": f"echo {job}", "description": job})])

    fake_llm.on(is_child, child)
    fake_llm.push(Reply(tool_calls=[task("alpha"), task("beta", description="other")]), Reply(text="done"))
    h.loop.prompt(h.sid, "run both")
    assert sorted(asker.asked) == ["echo alpha", "echo beta"]
    assert asker.most == 1  # one question at a time, though the tasks ran together
    outputs = [p.state.output for c in h.store.children([h.sid]) for p in parts_of_store(h, c.id)]
    assert sorted(o.strip() for o in outputs) == ["alpha", "beta"]


def parts_of_store(h: Harness, session_id: str) -> list[ToolPart]:
    return [p for m in h.store.messages(session_id) for p in m.parts if isinstance(p, ToolPart)]
