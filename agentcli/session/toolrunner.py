"""Runs the tool calls of a step: permission, plugin hooks, the tool itself, and the part's
state pending → running → completed | error. Every failure becomes a result the model sees."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentcli.bus import Bus
from agentcli.plugins.manager import Plugins
from agentcli.session import events
from agentcli.session.history import INTERRUPTED_TEXT
from agentcli.session.permission import PermissionPolicy
from agentcli.store.records import AssistantMessage, ToolPart, now_ms
from agentcli.store.store import Store
from agentcli.tools.base import PermissionDenied, PermissionRequest, Tool, ToolContext, ToolError


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

    def schemas(self) -> list[dict[str, Any]]:
        return [tool.schema() for tool in self.tools.values()]

    def __call__(self, msg: AssistantMessage, parts: list[ToolPart]) -> None:
        for part in parts:
            if self.abort.is_set():
                self._finish(part, error=INTERRUPTED_TEXT, interrupted=True)
                continue
            self._run(msg, part)

    def _run(self, msg: AssistantMessage, part: ToolPart) -> None:
        from agentcli.tools.registry import run_tool  # the tools package is loaded with the first call

        part.state = part.state.model_copy(update={"status": "running", "time": part.state.time.model_copy(update={"start": now_ms()})})
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
        ctx = ToolContext(
            session_id=msg.session_id,
            message_id=msg.id,
            call_id=part.call_id,
            directory=self.directory,
            ask=lambda request: self._ask(request, part),
            file_times=StoredFileTimes(self.store, msg.session_id),
            todos=StoredTodos(self.store, msg.session_id),
            output_dir=self.output_dir,
            abort=self.abort,
            max_lines=self.max_lines,
            max_bytes=self.max_bytes,
            skill_dirs=list(self.skill_dirs),
        )
        try:
            result = run_tool(tool, before["args"], ctx)
        except PermissionDenied as exc:
            hint = ""
            if self.policy.asker is None:
                key = "edit" if part.tool in ("edit", "write") else part.tool
                hint = f" (agentcli is not interactive here: pass --yes or set permission.{key} to \"allow\" in opencode.json)"
            self._finish(part, error=f"{exc}{hint}")
            return
        except ToolError as exc:
            self._finish(part, error=str(exc), interrupted=self.abort.is_set())
            return
        except Exception as exc:  # a tool bug must not end the session
            self._finish(part, error=f"{part.tool} failed: {type(exc).__name__}: {exc}")
            return
        after = {"title": result.title, "output": result.output, "metadata": result.metadata}
        self.plugins.hook.tool_execute_after(input=hook_in, output=after)
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

    def _ask(self, request: PermissionRequest, part: ToolPart) -> Any:
        answer = self.policy.decide(request)
        # The tool's time starts when it may run: waiting for the user is not the command's duration.
        part.state = part.state.model_copy(update={"time": part.state.time.model_copy(update={"start": now_ms()})})
        return answer

    def _finish(self, part: ToolPart, *, error: str, interrupted: bool = False) -> None:
        part.state = part.state.model_copy(
            update={"status": "error", "error": error, "interrupted": interrupted or part.state.interrupted,
                    "time": part.state.time.model_copy(update={"end": now_ms()})}
        )
        self.store.put_part(part)
        self.bus.publish(events.ToolUpdated(part.session_id, part))
