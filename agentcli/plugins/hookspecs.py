"""Hook specifications, named after OpenCode's plugin hooks (dots become underscores).

Every hook but ``setup`` and ``event`` takes ``(input, output)`` and mutates ``output``. Hooks run in
the order plugins are configured (the config ``plugin`` list, then entry points), as OpenCode's
``trigger`` does, through pluggy's own caller (wrappers, tryfirst/trylast work); each implementation
runs on a copy of ``output`` kept only when it returns, so a plugin that raises changes nothing
(``agentcli.plugins.manager``, ``agentcli.plugins.isolation``).

``auth`` and ``provider`` have no hooks here: reaching providers and their credentials is litellm's
job (environment variables and the config's ``provider`` section).
"""

from __future__ import annotations

from typing import Any

import pluggy

hookspec = pluggy.HookspecMarker("agentcli")
hookimpl = pluggy.HookimplMarker("agentcli")


class Specs:
    @hookspec
    def setup(self, context: Any) -> None:
        """Once, when the session loop starts: ``context`` is the ``PluginContext`` (directory, project
        root, config, read-only store view, session API). Keep it to use in later hooks."""

    @hookspec
    def config(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """At load. ``input = {config}``: a copy of the loaded config (changes are not applied)."""

    @hookspec
    def tool(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """At load. ``input = {directory}``; ``output = {tools: dict[str, PluginTool]}``: add tools."""

    @hookspec
    def tool_definition(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """Before each request, per tool. ``input = {tool_id}``; ``output = {description, parameters}``."""

    @hookspec
    def chat_message(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """Before the user's message is stored. ``input = {session_id, model}``;
        ``output = {message: UserMessage, parts: list[Part]}``."""

    @hookspec
    def chat_params(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """Before each chat request. ``input = {session_id, model}``;
        ``output = {temperature, top_p, options: dict}`` (``options`` go to the provider as is)."""

    @hookspec
    def chat_system_transform(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """Before each request, the summary request too. ``input = {session_id, model, purpose}``
        (purpose: "chat" or "compaction");
        ``output = {system: list[str]}``."""

    @hookspec
    def chat_messages_transform(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """Before each request (the summary request too), on a copy of the history.
        ``input = {session_id, purpose}``; ``output = {messages: list[WithParts]}``."""

    @hookspec
    def permission_ask(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """When a tool asks permission. ``input = {tool, title, patterns, metadata, session_id}``;
        ``output = {status: "ask" | "allow" | "deny"}`` ("ask" leaves it to the user / config)."""

    @hookspec
    def shell_env(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """Before bash runs a command. ``input = {cwd, session_id}``; ``output = {env: dict[str, str]}``
        (added to the process environment)."""

    @hookspec
    def command_execute_before(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """Before a command (``/compact``, ``agentcli compact``). ``input = {command, session_id}``;
        ``output = {arguments: str}``."""

    @hookspec
    def session_compacting(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """Before a summary is requested. ``input = {session_id, auto, overflow, hard}`` (``hard``: the
        window no longer fits); ``output = {context: list[str], prompt: str | None, summary: str | None,
        block: bool, delay: bool}``: ``prompt`` replaces ours, ``context`` strings are appended,
        ``summary`` is the summary itself (no model call). ``block`` cancels a compaction someone asked
        for and declines an automatic one for the rest of the turn; ``delay`` puts an automatic one off
        until the next step (at most 3 times a turn). A hard overflow compacts whatever they say."""

    @hookspec
    def compaction_autocontinue(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """After an automatic compaction. ``input = {session_id, overflow}``; ``output = {enabled: bool}``:
        set ``enabled = False`` to add no synthetic continue message."""

    @hookspec
    @hookspec
    def tool_execute_before(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """``input = {tool, session_id, call_id}``; ``output = {args}`` (may be changed)."""

    @hookspec
    def tool_execute_after(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        """``input = {tool, session_id, call_id}``; ``output = {title, output, metadata}``."""

    @hookspec
    def event(self, event: Any) -> None:
        """Every bus event; ``event.name`` is OpenCode's event name (``session.idle``, …)."""
