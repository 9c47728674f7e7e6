"""The memory plugin's hooks: the context block, the two tools and the compaction prompt."""

from __future__ import annotations

from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentcli.plugins import hookimpl
from agentcli.plugins.api import PluginContext, PluginTool, ToolCallContext
from agentcli.plugins.memory import block
from agentcli.plugins.memory.ops import MemoryOps
from agentcli.tools.base import ToolError

COMPACT_MIN_PERCENT = 50

MEMORY_DESCRIPTION = (
    "Read your own history: past sessions, their messages, earlier summaries (compactions), full-text "
    "search, and how full your context is. Call with {tool: <operation>, args: {...}}; "
    "operations: help, summary, sessions, messages, message, search, compactions, context, children, plans. "
    "Listings show the ids the next call needs."
)
COMPACT_DESCRIPTION = (
    "Compact this session now: your history is replaced by a summary you write for yourself, and you carry "
    "on from it. Use it at a natural break when the context block says usage is high; below 50 % it declines."
)


class MemoryArgs(BaseModel):
    model_config = ConfigDict(extra="ignore")
    tool: str = Field(
        description="The operation: help, summary, sessions, messages, message, search, compactions, "
        "context, children, plans."
    )
    args: dict[str, Any] = Field(default_factory=dict, description="The operation's arguments (see help).")


class CompactArgs(BaseModel):
    model_config = ConfigDict(extra="ignore")


class MemoryPlugin:
    def __init__(self) -> None:
        self.context: PluginContext | None = None

    def _ctx(self) -> PluginContext:
        if self.context is None:
            raise ToolError("the memory plugin was not started")
        return self.context

    @hookimpl
    def setup(self, context: PluginContext) -> None:
        self.context = context

    @hookimpl
    def chat_system_transform(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        sid = input.get("session_id")
        if not sid or self.context is None:
            return
        text = block.render(self.context.session.context(sid))
        system = output["system"]
        system.insert(1 if system else 0, text)  # its own block, right after the agent prompt

    @hookimpl
    def session_compacting(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        output["prompt"] = (
            resources.files("agentcli.plugins.memory")
            .joinpath("compaction_prompt.txt")
            .read_text(encoding="utf-8")
            .strip()
        )

    @hookimpl
    def tool(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        output["tools"]["memory"] = PluginTool("memory", MEMORY_DESCRIPTION, MemoryArgs, self.memory)
        output["tools"]["memory_compact"] = PluginTool(
            "memory_compact", COMPACT_DESCRIPTION, CompactArgs, self.compact
        )

    # --- tools -------------------------------------------------------------------------------

    def memory(self, args: MemoryArgs, call: ToolCallContext) -> str:
        return MemoryOps(self._ctx(), call).run(args.tool.strip(), args.args or {})

    def compact(self, args: CompactArgs, call: ToolCallContext) -> str:
        session = self._ctx().session
        figures = session.context(call.session_id)
        if figures.percent < COMPACT_MIN_PERCENT:
            return (
                f"Not compacting: the context is at {figures.percent}% ({figures.tokens:,} / "
                f"{figures.context_limit:,} tokens), below {COMPACT_MIN_PERCENT}%. Carry on."
            )
        session.compact(call.session_id)
        return (
            f"Compaction queued (context at {figures.percent}%). It runs as soon as this result is stored, "
            "before your next request; you will continue from your summary."
        )
