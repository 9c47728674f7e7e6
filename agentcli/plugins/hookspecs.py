"""Hook specifications, named after OpenCode's plugin hooks (dots become underscores).

Hooks mutate the ``output`` they are handed, in registration order, as OpenCode's trigger does.
"""

from __future__ import annotations

from typing import Any

import pluggy

hookspec = pluggy.HookspecMarker("agentcli")
hookimpl = pluggy.HookimplMarker("agentcli")


class Specs:
    @hookspec
    def session_compacting(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """Before a summary is requested. ``input = {session_id}``; ``output = {context: list[str],
        prompt: str | None, block: bool}``: ``prompt`` replaces ours, ``context`` strings are appended,
        ``block = True`` cancels the compaction (none happens)."""

    @hookspec
    def compaction_autocontinue(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """After an automatic compaction. ``input = {session_id, overflow}``; ``output = {enabled: bool}``:
        set ``enabled = False`` to add no synthetic continue message."""

    @hookspec
    def chat_system_transform(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """Before each request. ``input = {session_id, model, purpose}`` (``purpose``: "chat", or
        "compaction" for a summary request); ``output = {system: list[str]}``."""

    @hookspec
    def chat_messages_transform(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """Before each request, on a copy of the history (for a summary request: of the part to be
        summarised). ``input = {session_id, purpose}``; ``output = {messages: list[WithParts]}``."""

    @hookspec
    def tool_execute_before(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """``input = {tool, session_id, call_id}``; ``output = {args}`` (may be changed)."""

    @hookspec
    def tool_execute_after(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """``input = {tool, session_id, call_id}``; ``output = {title, output, metadata}``."""

    @hookspec
    def event(self, event: Any) -> None:
        """Every bus event (``session.compacted`` among them)."""
