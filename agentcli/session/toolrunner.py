"""Runs the tool calls of a step: permission, plugin hooks, the tool itself, and the part's
state pending → running → completed | error. Every failure becomes a result the model sees."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli.bus import Bus
from agentcli.config import project_root
from agentcli.config.model import SandboxConfig
from agentcli.llm.tokens import CHARS_PER_TOKEN, estimate
from agentcli.plugins.manager import Plugins
from agentcli.session import events
from agentcli.session.doom_loop import DOOM_LOOP_THRESHOLD, POLL_LIMIT, CallRun
from agentcli.session.permission import PermissionPolicy
from agentcli.session.request.history import INTERRUPTED_TEXT
from agentcli.store.records import AssistantMessage, ToolMetadata, ToolPart, now_ms
from agentcli.store.store import Store
from agentcli.tools.base import PermissionDenied, PermissionRequest, Tool, ToolContext, ToolError
from agentcli.tools.formatters import Formatters
from agentcli.tools.sandbox import Sandboxing
from agentcli.tools.truncate import truncate_output

DOOM_LOOP_TEXT = (
    f"Not run: this call repeats the previous {DOOM_LOOP_THRESHOLD - 1} calls exactly (same tool, same "
    "arguments), so the turn was stopped. Try a different approach, or ask the user."
)
POLLING_TEXT = (
    f"Not run: this call repeats the previous {POLL_LIMIT - 1} calls exactly (same tool, same arguments; "
    "the results changed), so the turn was stopped. Wait differently, or ask the user."
)
NOT_RUN_TEXT = "Not run: the turn was stopped before this call."
PROGRESS_EVERY = 0.25  # seconds between two progress updates of one call (a server may send hundreds)
MIN_RESULT_TOKENS = 1_000  # a result is never cut shorter than this, whatever the window's room
# Task calls of one message running at once (OpenCode runs them all): each is a subagent's loop
# with its own requests, so a few at a time, not a dozen against one provider's rate limit.
MAX_PARALLEL_TASKS = 3


def _args(part: ToolPart) -> Any:
    return part.state.input if part.state.input else part.state.raw


class StoredFileTimes:
    """File read times kept in the database, so a later `run --continue` still refuses stale edits."""

    def __init__(self, store: Store, session_id: str) -> None:
        self.store, self.session_id = store, session_id

    def record_read(self, path: Path) -> None:
        times = self.store.get_state(self.session_id, "file_times", {})
        try:
            times[str(path.resolve())] = path.stat().st_mtime
        except OSError:
            return
        self.store.set_state(self.session_id, "file_times", times)

    def last_read(self, path: Path) -> float | None:
        return self.store.get_state(self.session_id, "file_times", {}).get(str(path.resolve()))


def sandboxing(config: SandboxConfig) -> Sandboxing | None:
    """The config's ``sandbox`` as the bash tool takes it; None when it is off."""
    if config.bash == "off":
        return None
    return Sandboxing(required=config.bash == "on", network=config.network, writable=tuple(config.writable))


def window_room(usable: int, store: Store, session_id: str) -> int | None:
    """Tokens a step's tool results may add before the next request passes the usable budget (the
    last request's size is the session's context count); None when the window is unknown."""
    return usable - store.get_session(session_id).context_tokens if usable else None


class StoredTodos:
    def __init__(self, store: Store, session_id: str) -> None:
        self.store, self.session_id = store, session_id

    def get(self) -> list[dict[str, Any]]:
        return self.store.get_state(self.session_id, "todos", [])

    def set(self, todos: list[dict[str, Any]]) -> None:
        self.store.set_state(self.session_id, "todos", todos)


@dataclass
class ToolRunner:
    store: Store
    bus: Bus
    plugins: Plugins
    tools: dict[str, Tool]
    policy: PermissionPolicy
    directory: Path
    output_dir: Path
    abort: threading.Event
    max_lines: int = 2000
    max_bytes: int = 50 * 1024
    skill_dirs: tuple[Path, ...] = ()
    sandbox: Sandboxing | None = None  # the bash tool's confinement (config's sandbox); None: off
    formatters: Formatters | None = None  # the config's ``formatter``: run after edit/write
    calls: CallRun = field(default_factory=CallRun)  # this turn's last identical calls (doom-loop check)
    # Tokens the results of a step may still add before the next request overflows (None: no limit).
    room: Callable[[str], int | None] | None = None
    _left: int | None = field(default=None, init=False)  # ... for the rest of the step running now
    # Tasks of one step run together (``_run_together``): their results share the room left.
    _room_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def schemas(self) -> list[dict[str, Any]]:
        schemas = [tool.schema() for tool in self.tools.values()]
        if not self.plugins.has("tool_definition"):
            return schemas
        for schema in schemas:  # plugins may reword a tool before the model sees it
            fn = schema["function"]
            out = self.plugins.trigger(
                "tool_definition",
                input={"tool_id": fn["name"]},
                output={"description": fn["description"], "parameters": fn["parameters"]},
            )
            fn["description"], fn["parameters"] = out.get("description", ""), out.get("parameters") or {}
        return schemas

    def __call__(self, msg: AssistantMessage, parts: list[ToolPart]) -> bool:
        """Run a step's calls in order, a run of independent task calls together (at most
        ``MAX_PARALLEL_TASKS`` at once); True when the turn must stop (a doom loop nobody let go on)."""
        self._left = self.room(msg.session_id) if self.room is not None else None
        i = 0
        while i < len(parts):
            together = self._independent_tasks(parts, i)
            if len(together) > 1:
                self._run_together(msg, together)
                i += len(together)
            elif self._run_one(msg, parts, i):
                return True
            else:
                i += 1
        return False

    def _run_one(self, msg: AssistantMessage, parts: list[ToolPart], i: int) -> bool:
        part = parts[i]
        if self.abort.is_set():
            self._finish(part, error=INTERRUPTED_TEXT, interrupted=True)
            return False
        verdict = self.calls.verdict(part.tool, _args(part))
        if verdict != "run" and not self._may_repeat(part, len(self.calls) + 1, verdict == "polling"):
            self._stop(msg, part, parts[i + 1 :], verdict == "polling")
            return True
        if verdict == "polling":
            self.calls.allowed_polling()
        self._run(msg, part)
        self._record(part)
        return False

    def _record(self, part: ToolPart) -> None:
        state = part.state
        told = state.output if state.status == "completed" else state.error or ""
        self.calls.record(part.tool, _args(part), told)

    def _independent_tasks(self, parts: list[ToolPart], i: int) -> list[ToolPart]:
        """The task calls from ``parts[i]`` on that may run together: consecutive, each with other
        arguments (a repeat is the doom-loop check's to judge), no two continuing one task (a
        ``task_id`` is one child session: its turns take turns), the first no repeat of the call
        before. Anything else runs alone, in order."""
        together: list[ToolPart] = []
        seen: set[str] = set()
        for part in parts[i:]:
            args = _args(part)
            if part.tool != "task" or not isinstance(args, dict) or self.abort.is_set():
                break
            key, task_id = json.dumps(args, sort_keys=True), args.get("task_id")
            if key in seen or (task_id and f"id:{task_id}" in seen):
                break
            seen |= {key, f"id:{task_id}"} if task_id else {key}
            together.append(part)
        if together and self.calls.verdict(together[0].tool, _args(together[0])) != "run":
            return together[:1]
        return together

    def _run_together(self, msg: AssistantMessage, parts: list[ToolPart]) -> None:
        """Each call in a thread of its own; Ctrl-C (the turn's abort) reaches every one, and a call
        not started yet is finished as interrupted. Recorded for the doom-loop check in order."""

        def run(part: ToolPart) -> None:
            if self.abort.is_set():
                self._finish(part, error=INTERRUPTED_TEXT, interrupted=True)
            else:
                self._run(msg, part)

        workers = min(MAX_PARALLEL_TASKS, len(parts))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="agentcli-task") as pool:
            list(pool.map(run, parts))  # a failure outside the tool (the store) is raised here
        for part in parts:
            self._record(part)

    def _stop(self, msg: AssistantMessage, part: ToolPart, rest: list[ToolPart], polling: bool) -> None:
        count = len(self.calls) + 1
        self._finish(part, error=POLLING_TEXT if polling else DOOM_LOOP_TEXT)
        for other in rest:
            self._finish(other, error=NOT_RUN_TEXT)
        hint = (
            ""
            if self.policy.asker
            else ' (set permission.doom_loop to "allow" in opencode.json to let it go on)'
        )
        how = (
            f" (its result changed each time; polling is let through {POLL_LIMIT - 1} times)"
            if polling
            else ""
        )
        self.bus.publish(
            events.ErrorOccurred(
                msg.session_id,
                f"stopped: the model called {part.tool} {count} times in a row "
                f"with the same arguments{how}{hint}",
                "doom_loop",
            )
        )

    def refusing(self, error: str, notice: str) -> Callable[[AssistantMessage, list[ToolPart]], bool]:
        """A runner for a step that was offered no tools: every call is an error, and the turn stops."""

        def refuse(msg: AssistantMessage, parts: list[ToolPart]) -> bool:
            for part in parts:
                self._finish(part, error=error)
            self.bus.publish(events.ErrorOccurred(msg.session_id, notice, "max_steps"))
            return True

        return refuse

    # --- the doom-loop check (agentcli.session.doom_loop) ---------------------------------------

    def _may_repeat(self, part: ToolPart, count: int, polling: bool) -> bool:
        """Asked like a permission ("doom_loop", as in OpenCode); --yes does not answer it."""
        changed = " (its result changed each time)" if polling else ""
        request = PermissionRequest(
            tool="doom_loop",
            title=f"{part.tool} was called {count} times in a row with the same arguments{changed}; "
            "run it again?",
            patterns=[part.tool],
            metadata={"tool": part.tool, "input": part.state.input},
        )
        return self.policy.decide(request) != "deny"

    def _run(self, msg: AssistantMessage, part: ToolPart) -> None:
        from agentcli.tools.registry import run_tool  # the tools package is loaded with the first call

        part.state = part.state.model_copy(
            update={"status": "running", "time": part.state.time.model_copy(update={"start": now_ms()})}
        )
        self.store.put_part(part)
        self.bus.publish(events.ToolUpdated(msg.session_id, part))
        tool = self.tools.get(part.tool)
        if tool is None:
            known = ", ".join(sorted(self.tools))
            self._finish(part, error=f"Unknown tool '{part.tool}'. Available tools: {known}")
            return
        hook_in = {"tool": part.tool, "session_id": msg.session_id, "call_id": part.call_id}
        before = {"args": part.state.input if part.state.input else part.state.raw}
        self.plugins.hook.tool_execute_before(input=hook_in, output=before)
        refused: list[PermissionRequest] = []
        ctx = ToolContext(
            session_id=msg.session_id,
            message_id=msg.id,
            call_id=part.call_id,
            directory=self.directory,
            ask=lambda request: self._ask(request, part, refused),
            file_times=StoredFileTimes(self.store, msg.session_id),
            todos=StoredTodos(self.store, msg.session_id),
            output_dir=self.output_dir,
            abort=self.abort,
            max_lines=self.max_lines,
            max_bytes=self.max_bytes,
            skill_dirs=list(self.skill_dirs),
            project=project_root(self.directory),
            env=self._shell_env(msg.session_id) if part.tool == "bash" else {},
            sandbox=self.sandbox,
            formatters=self.formatters,
            progress=self._progress(msg.session_id, part),
        )
        try:
            result = run_tool(tool, before["args"], ctx)
        except PermissionDenied as exc:
            hint = ""
            if refused and self.policy.asker is None:
                # Nobody could be asked: the model is told it was denied, the human how to allow it.
                hint = self.policy.hint(refused[-1])
                self.bus.publish(events.PermissionRefused(msg.session_id, refused[-1].tool, hint))
                hint = f" ({hint})"
            self._finish(part, error=f"{exc}{hint}")
            return
        except ToolError as exc:
            self._finish(part, error=str(exc), interrupted=self.abort.is_set(), metadata=exc.metadata)
            return
        except Exception as exc:  # a tool bug must not end the session
            self._finish(part, error=f"{part.tool} failed: {type(exc).__name__}: {exc}")
            return
        if refused and self.policy.asker is None:
            # A tool that went on without what was refused (grep leaving out .env matches) still
            # tells the human what was refused and how to allow it.
            hint = self.policy.hint(refused[-1])
            self.bus.publish(events.PermissionRefused(msg.session_id, refused[-1].tool, hint))
        after = {"title": result.title, "output": result.output, "metadata": result.metadata}
        self.plugins.hook.tool_execute_after(input=hook_in, output=after)
        self._fit(after)
        part.state = part.state.model_copy(
            update={
                "status": "completed",
                "output": after["output"],
                "title": after["title"],
                "metadata": after["metadata"],
                "attachments": result.attachments,
                "change": result.change,
                "time": part.state.time.model_copy(update={"end": now_ms()}),
            }
        )
        self.store.put_part(part)
        self.bus.publish(events.ToolUpdated(msg.session_id, part))

    def _progress(self, session_id: str, part: ToolPart) -> Callable[[float, float | None, str | None], None]:
        """What a running tool reports of its progress, shown on its line (the chat) and as its
        content (ACP): at most every PROGRESS_EVERY s, the first and the last (done == total) always;
        kept off the store (the finished call's metadata replaces it)."""
        last = [0.0]
        lock = threading.Lock()

        def report(done: float, total: float | None, message: str | None) -> None:
            now = time.monotonic()
            with lock:
                final = total is not None and done >= total
                if last[0] and now - last[0] < PROGRESS_EVERY and not final:
                    return
                if part.state.status != "running":
                    return
                last[0] = now
                shown = {"progress": done, "total": total, "message": message}
                metadata = {**part.state.metadata, "progress": shown}
                part.state = part.state.model_copy(update={"metadata": metadata})
            self.bus.publish(events.ToolUpdated(session_id, part))

        return report

    def _fit(self, after: dict[str, Any]) -> None:
        """A result that would make the next request overflow is cut to the room left, the whole of
        it saved to a file the model can page through (as an over-long output always is)."""
        output = after["output"] if isinstance(after["output"], str) else ""
        with self._room_lock:
            if self._left is None:
                return
            room = max(MIN_RESULT_TOKENS, self._left)
            if estimate(output) > room:
                cut = truncate_output(
                    output,
                    max_lines=len(output),
                    max_bytes=room * CHARS_PER_TOKEN,
                    output_dir=self.output_dir,
                )
                meta = after["metadata"] if isinstance(after["metadata"], dict) else {}
                cut_meta = ToolMetadata(truncated=True)
                if cut.output_path:
                    cut_meta.output_path = str(cut.output_path)
                after["output"], after["metadata"] = cut.content, {**meta, **cut_meta.dump()}
            self._left -= estimate(after["output"])

    def _shell_env(self, session_id: str) -> dict[str, str]:
        if not self.plugins.has("shell_env"):
            return {}
        out = self.plugins.trigger(
            "shell_env", input={"cwd": str(self.directory), "session_id": session_id}, output={"env": {}}
        )
        return {str(k): str(v) for k, v in (out.get("env") or {}).items()}

    def _ask(self, request: PermissionRequest, part: ToolPart, refused: list[PermissionRequest]) -> Any:
        hook = self.plugins.trigger(
            "permission_ask",
            input={
                "tool": request.tool,
                "title": request.title,
                "patterns": list(request.patterns),
                "metadata": dict(request.metadata),
                "session_id": part.session_id,
            },
            output={"status": "ask"},
        )
        status = hook.get("status")
        # As in OpenCode, a plugin answers only what would be asked: it cannot lift a configured deny,
        # nor allow a line the rules cannot read when a deny rule could be what it runs (as --yes).
        if status == "allow" and self.policy.deny_could_apply(request):
            status = "ask"
        if status in ("allow", "deny") and self.policy.action(request) == "ask":
            answer = "once" if status == "allow" else "deny"
        else:
            answer = self.policy.decide(request)
            if answer == "deny":
                refused.append(request)
        # The tool's time starts when it may run: waiting for the user is not the command's duration.
        part.state = part.state.model_copy(
            update={"time": part.state.time.model_copy(update={"start": now_ms()})}
        )
        return answer

    def _finish(
        self, part: ToolPart, *, error: str, interrupted: bool = False, metadata: dict[str, Any] | None = None
    ) -> None:
        part.state = part.state.model_copy(
            update={
                "status": "error",
                "error": error,
                "interrupted": interrupted or part.state.interrupted,
                "metadata": {**part.state.metadata, **(metadata or {})},
                "time": part.state.time.model_copy(update={"end": now_ms()}),
            }
        )
        self.store.put_part(part)
        self.bus.publish(events.ToolUpdated(part.session_id, part))
