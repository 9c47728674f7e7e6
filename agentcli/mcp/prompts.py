"""A server's prompts as slash commands, named as OpenCode names them: ``/<server>:<prompt>``, each part
sanitised. What follows the command fills the prompt's arguments in their declared order (a quoted
value may hold spaces; the last argument takes the rest of the line). Unlike OpenCode, which asks the
server for the prompt with ``$1``, ``$2`` … as the values and substitutes afterwards, the words are
sent as the values themselves: a server that checks its arguments (server-everything's
resource-prompt) answers instead of refusing "$1". The prompt's messages, joined, are the user's turn.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from agentcli.mcp.naming import sanitise


@dataclass(frozen=True)
class PromptArgument:
    name: str
    required: bool = False
    description: str = ""


@dataclass(frozen=True)
class McpPrompt:
    server: str
    name: str  # as the server names it
    description: str = ""
    arguments: tuple[PromptArgument, ...] = ()

    @property
    def command(self) -> str:
        return f"{sanitise(self.server)}:{sanitise(self.name)}"

    @property
    def hint(self) -> str:
        """The arguments as a usage hint: ``city [state]``."""
        return " ".join(a.name if a.required else f"[{a.name}]" for a in self.arguments)

    @classmethod
    def of(cls, server: str, prompt: Any) -> McpPrompt:
        given = tuple(
            PromptArgument(a.name, bool(a.required), a.description or "") for a in (prompt.arguments or [])
        )
        title = getattr(prompt, "title", None) or ""
        return cls(server, prompt.name, prompt.description or title, given)

    def values(self, line: str) -> dict[str, str]:
        """The arguments from what followed the command; a ValueError names the required ones missing."""
        try:
            words = shlex.split(line)
        except ValueError:
            words = line.split()
        if self.arguments and len(words) > len(self.arguments):
            keep = len(self.arguments) - 1
            words = [*words[:keep], " ".join(words[keep:])]
        given = {a.name: w for a, w in zip(self.arguments, words, strict=False)}
        missing = [a.name for a in self.arguments if a.required and a.name not in given]
        if missing:
            usage = f"/{self.command} {self.hint}"
            raise ValueError(f"/{self.command} needs {', '.join(missing)} (usage: {usage})")
        return given


def as_text(result: Any) -> str:
    """A ``prompts/get`` result as one user message: its messages' text (an embedded text resource's
    too), a line for what cannot be text (an image, a binary resource)."""
    parts: list[str] = []
    for message in result.messages or []:
        content = message.content
        kind = getattr(content, "type", None)
        if kind == "text":
            parts.append(content.text)
        elif kind == "resource":
            res = content.resource
            text = getattr(res, "text", None)
            parts.append(text if text is not None else f"[resource {res.uri} ({res.mimeType or 'binary'})]")
        elif kind == "resource_link":
            parts.append(f"[resource {content.name}: {content.uri}]")
        elif kind in ("image", "audio"):
            parts.append(f"[{kind} ({content.mimeType}) from the prompt, not included]")
    return "\n".join(p for p in parts if p)
