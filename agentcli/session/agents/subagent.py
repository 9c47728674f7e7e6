"""Subagents (OpenCode's task tool): the model hands a task to another agent, which works in a
child session of its own — its own window, pruning, compaction, permissions and step limit (its own
runtime and loop) — and only the child's final answer, with a one-line note of what it touched, comes
back as the task's result. The parent's window never holds the files the child read.

The child's session names its parent (``parent_id``); its cost and tokens are added to the
parent's totals when it ends; the parent's Ctrl-C (the turn's abort) cancels it and the step that
called it. ``delegate`` is the chat's ``@agent message``: the user hands the task directly.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from itertools import takewhile
from typing import Any

from pydantic import BaseModel, Field

from agentcli.bus import Bus
from agentcli.session import events, title
from agentcli.session.agents.registry import Agent
from agentcli.session.compaction.ledger import fold
from agentcli.session.permission import PermissionPolicy
from agentcli.session.runtime import SessionRuntime
from agentcli.store import ids
from agentcli.store.artifacts import Ledger
from agentcli.store.records import (
    AssistantMessage,
    MessageError,
    SessionInfo,
    TextPart,
    ToolMetadata,
    ToolPart,
    ToolState,
    UserMessage,
    now_ms,
)
from agentcli.store.store import NotFound
from agentcli.tools.base import PermissionDenied, PermissionRequest, Tool, ToolContext, ToolError, ToolResult
from agentcli.tools.common import DENIED_MESSAGE


class TaskParams(BaseModel):  # OpenCode's task schema leaves the object open
    description: str = Field(description="A short (3-5 words) description of the task")
    prompt: str = Field(description="The task for the agent to perform")
    subagent_type: str = Field(description="The type of specialized agent to use for this task")
    task_id: str | None = Field(None, description="To continue an earlier task: its task_id")
    command: str | None = Field(None, description="The command that triggered this task")


@cache
def _description_template() -> str:
    return resources.files("agentcli.session").joinpath("prompts/task.txt").read_text(encoding="utf-8")


def open_subagents(runtime: SessionRuntime) -> list[Agent]:
    """The subagents the runtime's agent may hand tasks to (``permission.task`` may deny some)."""
    policy, registry = runtime.policy, runtime.agents
    assert registry is not None
    return [a for a in registry.subagents() if policy.subject_action("task", a.name, "allow") != "deny"]


def task_tool(runtime: SessionRuntime) -> TaskTool | None:
    """The task tool for the runtime's agent; None when there is no subagent to hand a task to."""
    agents = open_subagents(runtime)
    return TaskTool(Tasks(runtime), agents) if agents else None


class TaskTool(Tool[TaskParams]):
    name = "task"
    params = TaskParams

    def __init__(self, tasks: Tasks, agents: list[Agent]) -> None:
        self.tasks = tasks
        listed = "\n".join(
            f"- {a.name}: {a.description or 'This subagent should only be called manually by the user.'}"
            for a in agents
        )
        self.description = _description_template().replace("{agents}", listed).strip()

    def execute(self, args: TaskParams, ctx: ToolContext) -> ToolResult:
        kind = args.subagent_type
        agent = self.tasks.subagent(kind)  # an unknown type is refused before anything is asked
        request = PermissionRequest(
            tool="task",
            title=f"@{kind}: {args.description}",
            patterns=[kind],
            metadata={"description": args.description, "subagent_type": kind}
            | ({"command": args.command} if args.command else {}),
            default="allow",  # as in OpenCode: a task runs under its own agent's permissions
        )
        if ctx.ask(request) == "deny":
            raise PermissionDenied(DENIED_MESSAGE)
        done = self.tasks.run(
            ctx.session_id,
            agent,
            args.prompt,
            args.description,
            ctx.abort,
            args.task_id,
        )
        # ``command``: the command that started the task (OpenCode's parameter), kept with the result.
        command = {"command": args.command} if args.command else {}
        return ToolResult(output=done.output, title=args.description, metadata=done.metadata.dump() | command)


@dataclass
class TaskDone:
    output: str  # what the parent's window receives
    answer: str  # the subagent's final answer alone
    metadata: ToolMetadata = field(default_factory=ToolMetadata)


@dataclass
class _Watch:
    """Listens to the child's bus: what the parent's listeners should see, and why it stopped."""

    parent: SessionRuntime
    parent_id: str
    agent: str
    child_id: str
    error: str = ""
    step_limit: bool = False

    def __call__(self, event: Any) -> None:
        parent_bus: Bus = self.parent.bus
        if isinstance(event, events.ToolUpdated) and event.part.state.status in ("completed", "error"):
            parent_bus.publish(
                events.SubagentToolUpdated(self.parent_id, self.agent, self.child_id, event.part)
            )
        elif isinstance(event, events.PermissionRefused):
            parent_bus.publish(dataclasses.replace(event, session_id=self.parent_id))
        elif isinstance(event, events.ErrorOccurred):
            self.error = event.message
        elif isinstance(event, events.StepLimitReached):
            self.step_limit = True
        self.parent.plugins.trigger("event", event=event)  # type: ignore[union-attr]  # plugins hear the child's session too


class Tasks:
    """Runs tasks for one parent session (its runtime)."""

    def __init__(self, runtime: SessionRuntime) -> None:
        self.runtime = runtime

    def subagent(self, kind: str) -> Agent:
        assert self.runtime.agents is not None
        agent = self.runtime.agents.get(kind)
        if agent is None or not agent.subagent or agent not in open_subagents(self.runtime):
            valid = ", ".join(a.name for a in open_subagents(self.runtime)) or "none"
            raise ToolError(f"Unknown agent type: {kind} is not a valid agent type (valid types: {valid})")
        return agent

    def run(
        self,
        parent_id: str,
        agent: Agent,
        prompt: str,
        description: str,
        abort: threading.Event,
        task_id: str | None = None,
    ) -> TaskDone:
        store = self.runtime.store
        self._within_bounds()
        child_id = self._session(parent_id, agent, description, task_id)
        try:
            runtime = child_runtime(self.runtime, agent)
        except Exception as exc:  # the agent's model cannot be used (unknown, no key): one line
            raise ToolError(f"subagent {agent.name} cannot start: {_first_line(exc)}") from None
        assert runtime.loop_for is not None, "a task runs inside a loop's turn"
        child = runtime.loop_for(runtime)
        watch = _Watch(self.runtime, parent_id, agent.name, child_id)
        runtime.bus.subscribe(watch)
        before = store.get_session(child_id)
        start = next((m.id for m in store.stream(child_id)), "")  # a continued task's newest message
        try:
            last = child.prompt(child_id, prompt, abort)
        finally:
            roll_up(store, parent_id, before, store.get_session(child_id))
        work = _Work.since(store, agent.name, child_id, start)
        if abort.is_set():
            raise ToolError("Tool execution aborted", work.metadata().dump())
        return _result(store, agent, last, watch, work)

    def _within_bounds(self) -> None:
        """A task may start only within ``tasks`` bounds: so deep, so many per user turn."""
        bounds, options = self.runtime.config.tasks, self.runtime.options
        if options.depth >= bounds.max_depth:
            raise ToolError(
                f"tasks nest at most {bounds.max_depth} deep (config tasks.max_depth): "
                "do this part of the work here instead of starting another task"
            )
        if not self.runtime.tasks_started.take(bounds.max_per_turn):
            raise ToolError(
                f"this turn has started {bounds.max_per_turn} tasks, the most one turn may "
                "(config tasks.max_per_turn): finish the work here, or end the turn"
            )

    def _session(self, parent_id: str, agent: Agent, description: str, task_id: str | None) -> str:
        store = self.runtime.store
        if task_id:
            try:
                found = store.get_session(task_id)
            except NotFound:
                found = None
            if found is None or found.parent_id != parent_id:
                raise ToolError(f"task_id {task_id} is not a task of this session; leave it out to start one")
            return task_id
        return store.create_session(
            str(self.runtime.options.directory),
            self.runtime.model.name,
            title=f"{description} (@{agent.name} subagent)",
            parent_id=parent_id,
            agent=agent.name,
        ).id


def child_runtime(parent: SessionRuntime, agent: Agent) -> SessionRuntime:
    """A runtime for ``agent``'s session: the parent's store, config, plugins, tools and MCP servers,
    its own bus, window and permission rules; questions go to whoever the parent asks."""
    policy = PermissionPolicy(
        rules=parent.user_rules,
        floor=parent.policy.floor,  # a project's agent cannot loosen the user's own rules either
        yes=parent.policy.yes,
        asker=parent.policy.asker,
        refused=parent.policy.refused,
        asking=parent.policy.asking,  # parallel tasks ask one question at a time
        inherited=parent.policy.above(),  # what the parent's agent may not do, its task may not either
    )
    options = dataclasses.replace(
        parent.options, child=True, model_pinned=False, depth=parent.options.depth + 1
    )
    child = dataclasses.replace(
        parent, model=parent.model, options=options, bus=Bus(), policy=policy, agent=agent
    )
    child.plugin_context = parent.plugin_context  # the plugins were started once, by the parent
    return child


def roll_up(store: Any, parent_id: str, before: SessionInfo, after: SessionInfo) -> None:
    """Add what the child spent since ``before`` to the parent's totals."""
    spent, was = after.tokens, before.tokens
    add = {
        "cost": after.cost - before.cost,
        "tokens.total": spent.total - was.total,
        "tokens.input": spent.input - was.input,
        "tokens.output": spent.output - was.output,
        "tokens.reasoning": spent.reasoning - was.reasoning,
        "tokens.cache.read": spent.cache.read - was.cache.read,
        "tokens.cache.write": spent.cache.write - was.cache.write,
    }
    if any(add.values()):
        store.update_session(parent_id, add=add)


def final_text(store: Any, last: AssistantMessage | None) -> str:
    if last is None:
        return ""
    texts = [p.text for p in store.get_message(last.id).parts if isinstance(p, TextPart) and p.text.strip()]
    return texts[-1].strip() if texts else ""


@dataclass
class _Work:
    """What one task did in its child session: its steps, and the ledger of its own tool calls (a
    continued task's earlier ones left out), which the parent's ledger takes in from the metadata."""

    agent: str
    child_id: str
    steps: int
    ledger: Ledger

    @classmethod
    def since(cls, store: Any, agent: str, child_id: str, start: str) -> _Work:
        """From the task's messages: those newer than ``start``, in the full history (a compaction
        during the task hides its first steps from the window, not from the records)."""
        mine = list(takewhile(lambda m: m.id > start, store.stream(child_id)))
        mine.reverse()
        steps = sum(1 for m in mine if isinstance(m.info, AssistantMessage) and not m.info.summary)
        return cls(agent, child_id, steps, fold(None, mine))

    def metadata(self, note: str | None = None) -> ToolMetadata:
        kept = {"files", "commands", "more_files", "more_commands"}  # its errors are not the parent's
        touched = self.ledger.model_dump(mode="json", include=kept)
        typed = ToolMetadata(session_id=self.child_id, agent=self.agent, ledger=touched)
        if note is not None:
            typed.note = note
        return typed


def _result(store: Any, agent: Agent, last: AssistantMessage | None, watch: _Watch, work: _Work) -> TaskDone:
    answer = final_text(store, last)
    name, child_id = agent.name, work.child_id
    if last is not None and last.error is not None:
        why = f"subagent {name} failed: {last.error.message} (its session: {child_id})"
        raise ToolError(why, work.metadata().dump())
    if last is None or last.finish == "tool-calls" or not answer:
        why = watch.error or "it ended without an answer"
        raise ToolError(
            f"subagent {name} stopped without an answer: {why} (its session: {child_id})",
            work.metadata().dump(),
        )
    note = touched(work.ledger, steps=work.steps)
    if watch.step_limit:
        note += f"; stopped at its limit of {agent.steps} steps"
    output = f"task_id: {child_id} (@{name}: {note})\n\n<task_result>\n{answer}\n</task_result>"
    return TaskDone(output=output, answer=answer, metadata=work.metadata(note=note))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def touched(ledger: Ledger, *, steps: int) -> str:
    """One line of what a subagent did: steps, files read, files changed (named), commands run."""
    parts = [_plural(steps, "step")]
    changed = [f.path for f in ledger.files if f.edits or f.writes]
    read = len(ledger.files) - len(changed) + ledger.more_files
    if read:
        parts.append(f"read {_plural(read, 'file')}")
    if changed:
        shown = ", ".join(changed[:4]) + (f" and {len(changed) - 4} more" if len(changed) > 4 else "")
        parts.append(f"changed {shown}")
    commands = len(ledger.commands) + ledger.more_commands
    if commands:
        parts.append(f"ran {_plural(commands, 'command')}")
    return ", ".join(parts)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# --- @agent message ---------------------------------------------------------------------------


def delegate(
    runtime: SessionRuntime, session_id: str, kind: str, text: str, abort: threading.Event | None = None
) -> Any:
    """``@agent message``: the user hands ``text`` to the subagent ``kind`` directly. The parent
    session gets the user's message and a task call answered by the subagent (no request of the
    parent's own model); the answer is shown as the turn's text. Returns the assistant message."""
    assert runtime.agents is not None
    agent = runtime.agents.require_subagent(kind)  # AgentError, one line, for anything else
    runtime.start_plugins()
    abort = abort or threading.Event()
    with runtime.store.lease(session_id, on_wait=runtime.options.on_busy):
        msg, part = _delegated_records(runtime, session_id, agent, text)
        runner = runtime.runner(abort, {"task": TaskTool(Tasks(runtime), [agent])})
        runner(msg, [part])
        msg.finish, msg.completed = "stop", now_ms()
        if abort.is_set():
            msg.error = MessageError(name="MessageAbortedError", message="The turn was cancelled by the user")
        runtime.store.put_message(msg)
        runtime.bus.publish(events.StepFinished(session_id, msg))
        answer = task_answer(part.state.output) if part.state.status == "completed" else ""
        if answer:
            text_id = ids.ascending("prt")  # shown as the turn's answer; the record is the task's result
            runtime.bus.publish(events.TextDelta(session_id, text_id, answer))
            runtime.bus.publish(events.TextEnded(session_id, text_id, answer))
        runtime.bus.publish(events.TurnFinished(session_id, msg))
    return msg


def _delegated_records(
    runtime: SessionRuntime, session_id: str, agent: Agent, text: str
) -> tuple[AssistantMessage, ToolPart]:
    store = runtime.store
    assert runtime.agent is not None
    current = runtime.agent.name
    user = UserMessage(
        id=ids.ascending("msg"), session_id=session_id, model=runtime.model.name, agent=current
    )
    store.put_message(user)
    store.put_part(TextPart(id=ids.ascending("prt"), session_id=session_id, message_id=user.id, text=text))
    runtime.bus.publish(events.MessageUpdated(session_id, user))
    if not store.get_session(session_id).title:
        store.update_session(session_id, title=title.provisional(text), model=runtime.model.name)
    msg = AssistantMessage(
        id=ids.ascending("msg"),
        session_id=session_id,
        parent_id=user.id,
        model=runtime.model.name,
        agent=current,
        mode=current,
    )
    store.put_message(msg)
    prompt = text.split(None, 1)[1] if len(text.split(None, 1)) > 1 else ""
    args = {"description": title.provisional(prompt)[:60], "prompt": prompt, "subagent_type": agent.name}
    part = ToolPart(
        id=ids.ascending("prt"),
        session_id=session_id,
        message_id=msg.id,
        call_id=f"call_{ids.ascending('prt')}",
        tool="task",
        state=ToolState(input=args),
    )
    store.put_part(part)
    return msg, part


def task_answer(output: str) -> str:
    """The subagent's answer inside a task's result."""
    return output.partition("<task_result>\n")[2].rpartition("\n</task_result>")[0]
