"""The chat's input beyond plain text: Tab completion of slash commands and ``@path`` mentions,
the files those mentions attach, and ``!command`` lines run for the conversation's context."""

from __future__ import annotations

import base64
import mimetypes
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from agentcli.store.records import FilePart, FileSource, TextPart

MENTION = re.compile(r"(?<!\S)@(\S+)")
MAX_TEXT_BYTES = 50 * 1024  # as the read tool
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


def mentioned_files(text: str, directory: Path) -> list[Path]:
    """The existing files named by ``@path`` in the text, in order, once each."""
    out: list[Path] = []
    for match in MENTION.finditer(text):
        path = (directory / match.group(1).rstrip(".,;:!?)")).resolve()
        if path.is_file() and path not in out:
            out.append(path)
    return out


def attachments(paths: Iterable[Path], directory: Path) -> list[Any]:
    """Parts for mentioned files: text as a synthetic text part (what the model reads) plus its file
    part (the record); images and PDFs as a file part the model gets as an attachment."""
    parts: list[Any] = []
    for path in paths:
        try:
            rel = str(path.relative_to(directory))
        except ValueError:
            rel = str(path)
        mime = mimetypes.guess_type(path.name)[0] or "text/plain"
        data = path.read_bytes()
        if mime.startswith("image/") or mime == "application/pdf":
            url = f"data:{mime};base64,{base64.b64encode(data).decode()}"
            parts.append(
                FilePart(
                    id="",
                    session_id="",
                    message_id="",
                    mime=mime,
                    filename=path.name,
                    url=url,
                    source=FileSource(path=rel),
                )
            )
            continue
        text = data[:MAX_TEXT_BYTES].decode("utf-8", "replace")
        cut = "\n(cut at 50 KB)" if len(data) > MAX_TEXT_BYTES else ""
        parts.append(
            TextPart(
                id="",
                session_id="",
                message_id="",
                synthetic=True,
                text=f'Contents of {rel} (attached by the user):\n<file path="{rel}">\n{text}{cut}\n</file>',
            )
        )
        parts.append(
            FilePart(
                id="",
                session_id="",
                message_id="",
                mime="text/plain",
                filename=path.name,
                url=path.as_uri(),
                source=FileSource(path=rel),
            )
        )
    return parts
