"""The chat's input beyond plain text: Tab completion of slash commands and ``@path`` mentions
(what a mention attaches: ``attach``)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv"})


class ChatCompleter(Completer):
    """``/na`` → the commands; ``@ge`` → subagents, then paths under the directory (Tab cycles)."""

    def __init__(
        self, directory: Path, commands: dict[str, str], agents: dict[str, str] | None = None
    ) -> None:
        self.directory = directory
        self.commands = commands  # name → description
        self.agents = agents or {}  # subagent name → description (``@name message`` goes to it)

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        before = document.text_before_cursor
        if before.startswith("/") and " " not in before:
            for name, description in sorted(self.commands.items()):
                if name.startswith(before[1:]):
                    yield Completion("/" + name, start_position=-len(before), display_meta=description)
            return
        word = before.rsplit(None, 1)[-1] if before.strip() else ""
        if word.startswith("@") and not before.endswith(" "):
            if before == word:  # the message's first word: it may name a subagent
                for name, description in sorted(self.agents.items()):
                    if name.startswith(word[1:]):
                        yield Completion(f"@{name} ", start_position=-len(word), display_meta=description)
            yield from self._paths(word[1:])

    def _paths(self, typed: str) -> Iterator[Completion]:
        folder, _, prefix = typed.rpartition("/")
        base = (self.directory / folder) if folder else self.directory
        try:
            entries = sorted(os.scandir(base), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            if not entry.name.startswith(prefix) or entry.name in SKIP_DIRS:
                continue
            if entry.name.startswith(".") and not prefix.startswith("."):
                continue
            path = f"{folder}/{entry.name}" if folder else entry.name
            is_dir = entry.is_dir()
            yield Completion(
                "@" + path + ("/" if is_dir else ""),
                start_position=-len(typed) - 1,
                display=entry.name + ("/" if is_dir else ""),
            )
