"""The slash commands an ACP client offers (``available_commands_update``) and recognising one in a
prompt. The same commands as the chat's: ``/compact [focus]``, ``/compact undo``, ``/undo``,
``/redo``, ``/context``, and the custom commands (``.opencode/command/NAME.md``, global ones always,
a project's once its folder is trusted). A prompt starting with any other ``/word`` is an ordinary
message (a path, say)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from agentcli.app.custom_commands import CustomCommand

BUILTIN: dict[str, tuple[str, str | None]] = {
    "compact": (
        "Summarise the session now and continue from the summary; '/compact undo' brings the history back",
        "what the summary should keep, or 'undo'",
    ),
    "undo": ("Revert the last turn's file edits and hide the turn from the model", None),
    "redo": ("Put back the turn the last undo reverted", None),
    "context": ("What fills the context window, by category, against the usable budget", None),
}


@dataclass(frozen=True)
class Slash:
    name: str
    arguments: str
    custom: CustomCommand | None = None


def available(custom: Mapping[str, CustomCommand]) -> list[AvailableCommand]:
    out = [
        AvailableCommand(
            name=name,
            description=description,
            input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)) if hint else None,
        )
        for name, (description, hint) in BUILTIN.items()
    ]
    for name, command in sorted(custom.items()):
        if name in BUILTIN:
            continue  # the built-in wins, as in the chat
        out.append(
            AvailableCommand(
                name=name,
                description=command.description or f"custom command ({command.source})",
                input=_input(command),
            )
        )
    return out


def _input(command: CustomCommand) -> AvailableCommandInput | None:
    """What the command takes: an MCP prompt's arguments by name (none: no input), else free text."""
    if command.fetch is not None and not command.hint:
        return None
    return AvailableCommandInput(root=UnstructuredCommandInput(hint=command.hint or "arguments"))


def names_a_prompt(text: str) -> bool:
    """``/server:prompt …``: the shape of an MCP prompt's command."""
    first = text.strip().partition(" ")[0]
    return first.startswith("/") and ":" in first


def parse(text: str, custom: Mapping[str, CustomCommand]) -> Slash | None:
    """The command a prompt's text runs, or None for an ordinary message."""
    if not text.startswith("/"):
        return None
    name, _, arguments = text[1:].partition(" ")
    name, arguments = name.strip(), arguments.strip()
    if name == "summarize":
        name = "compact"
    if name in BUILTIN:
        return Slash(name, arguments)
    if name in custom:
        return Slash(name, arguments, custom[name])
    return None
