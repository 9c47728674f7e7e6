"""Custom slash commands in OpenCode's format: ``.opencode/command/NAME.md`` (also ``commands/``,
and ``.agentcli/commands/``) or the config's ``command`` entries, a front matter block and a
template where ``$ARGUMENTS`` (and ``$1``, ``$2``, …) stand for what follows
``/NAME``. The template becomes the user's message; nothing in it is run
(OpenCode's ``!`cmd` `` lines are left as text)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli.config import project_root
from agentcli.config.model import CommandConfig
from agentcli.project_layout import COMMAND_DIRS, command_paths

_POSITIONAL = re.compile(r"\$(\d+)")


@dataclass(frozen=True)
class CustomCommand:
    name: str
    template: str
    description: str = ""
    source: str = ""
    # An MCP server's prompt: the text comes from the server, with the arguments (ValueError: one line)
    fetch: Callable[[str], str] | None = field(default=None, compare=False)
    hint: str = ""  # what the arguments are (shown by completion and the editor)

    def expand(self, arguments: str) -> str:
        if self.fetch is not None:
            return self.fetch(arguments).strip()
        try:
            words = shlex.split(arguments)
        except ValueError:
            words = arguments.split()
        text = self.template.replace("$ARGUMENTS", arguments)
        return _POSITIONAL.sub(
            lambda m: words[int(m.group(1)) - 1] if 0 < int(m.group(1)) <= len(words) else "", text
        ).strip()


def _parse(path: Path) -> CustomCommand | None:
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    meta: dict[str, str] = {}
    body = raw
    if raw.startswith("---"):
        head, sep, rest = raw[3:].partition("\n---")
        if sep:
            body = rest.partition("\n")[2]
            for line in head.splitlines():
                key, colon, value = line.partition(":")
                if colon and key.strip():
                    meta[key.strip()] = value.strip().strip("\"'")
    return CustomCommand(
        name=path.stem, template=body.strip(), description=meta.get("description", ""), source=str(path)
    )


def load(
    directory: Path,
    global_dir: Path | None = None,
    *,
    trusted: bool = True,
    configured: Mapping[str, CommandConfig] | None = None,
) -> dict[str, CustomCommand]:
    """The config's ``command`` entries, then global command files, the project's override them by
    name; a project's only once its folder is trusted (`agentcli.trust`: a cloned repository's
    commands are its owner's words; its config's ``command`` entries are held back the same way)."""
    roots = [d for d in (global_dir,) if d] + ([project_root(directory)] if trusted else [])
    found: dict[str, CustomCommand] = {
        name: CustomCommand(name, entry.template.strip(), entry.description, "config")
        for name, entry in (configured or {}).items()
        if entry.template.strip()
    }
    for root in roots:
        for path in command_paths(root, COMMAND_DIRS if root != global_dir else ("command", "commands")):
            if (command := _parse(path)) is not None and command.template:
                found[command.name] = command
    return found


def mcp_commands(host: Any) -> dict[str, CustomCommand]:
    """The connected MCP servers' prompts as commands, ``server:prompt`` (OpenCode's names); none
    when ``host`` is not an MCP host (no server configured) or no server has prompts yet."""
    from agentcli.mcp.host import McpHost

    if not isinstance(host, McpHost):
        return {}
    out: dict[str, CustomCommand] = {}
    for prompt in host.prompts():
        out[prompt.command] = CustomCommand(
            name=prompt.command,
            template="",
            description=prompt.description or f"prompt of MCP server {prompt.server}",
            source=f"mcp:{prompt.server}",
            fetch=_fetcher(host, prompt),
            hint=prompt.hint,
        )
    return out


def _fetcher(host: Any, prompt: Any) -> Callable[[str], str]:
    def fetch(line: str) -> str:
        return str(host.prompt_text(prompt, line))

    return fetch


def find(
    name: str, custom: Mapping[str, CustomCommand], host: Any, abort: Any = None
) -> CustomCommand | None:
    """The command ``/name`` runs; an unknown ``server:prompt`` waits first for servers still starting
    (to their deadlines, as a turn's first step does), whose prompts may be it."""
    commands = with_mcp(custom, host)
    if name in commands or ":" not in name or host is None:
        return commands.get(name)
    host.prepare_step(True, abort)
    return with_mcp(custom, host).get(name)


def with_mcp(custom: Mapping[str, CustomCommand], host: Any) -> dict[str, CustomCommand]:
    """The custom commands and the MCP prompts; a command file or entry keeps its name."""
    return {**mcp_commands(host), **custom}
