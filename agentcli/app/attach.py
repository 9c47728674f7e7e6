"""What an ``@path`` in a chat message attaches: a text file as text (it then counts as read, so the
model may edit it at once), an image or PDF as an attachment, a folder as its listing (as the list
tool shows it). A binary file is refused as the read tool refuses it, and so is anything unreadable:
the message is not sent, and the user is told why in one line."""

from __future__ import annotations

import base64
import os
import re
from pathlib import Path
from typing import Any

from agentcli.store.records import FilePart, FileSource, TextPart
from agentcli.tools.ls import LIMIT as LIST_LIMIT
from agentcli.tools.ls import render_tree
from agentcli.tools.read import is_binary, media_type
from agentcli.tools.walk import walk_files

MENTION = re.compile(r"(?<!\S)@(\S+)")
MAX_TEXT_BYTES = 50 * 1024  # as the read tool
DIRECTORY_MIME = "application/x-directory"  # OpenCode's mime for an attached folder


class AttachRefused(OSError):
    """One line: which mention cannot be attached, and why (an OSError, as reading the file's own
    failures are, so a caller that only catches those refuses it too; ``strerror`` is the line)."""

    def __init__(self, line: str) -> None:
        super().__init__(None, line)

    def __str__(self) -> str:
        return str(self.strerror)


def mentioned_paths(text: str, directory: Path) -> list[Path]:
    """The existing files and folders named by ``@path`` in the text, in order, once each. A word
    that names nothing (``@someone``) stays plain text."""
    out: list[Path] = []
    for match in MENTION.finditer(text):
        path = (directory / match.group(1).rstrip(".,;:!?)")).resolve()
        if path.exists() and path not in out:
            out.append(path)
    return out


def _looks_like_path(word: str) -> bool:
    """``@src/x``, ``@notes.txt``: a word the user meant as a file (``@someone`` is just a word)."""
    return "/" in word or re.search(r"[^.]\.[A-Za-z0-9]{1,8}$", word) is not None


def refuse_missing(text: str, directory: Path, others: tuple[str, ...] = ()) -> None:
    """AttachRefused for the first ``@path`` that looks like a file but names nothing here: a typo is
    told at once instead of the bare words going to the model. ``others``: mentions that are not
    paths (``@server:uri``, an MCP resource)."""
    for match in MENTION.finditer(text):
        word = match.group(1).rstrip(".,;:!?)")
        if match.group(1) in others:
            continue
        if _looks_like_path(word) and not (directory / word).exists():
            raise AttachRefused(f"cannot attach {word}: there is no such file or folder here")


def _relative(path: Path, directory: Path) -> str:
    try:
        return str(path.relative_to(directory))
    except ValueError:
        return str(path)


def attachments(paths: list[Path], directory: Path) -> list[Any]:
    """The parts the mentioned paths add to the message; AttachRefused for the first that cannot go."""
    parts: list[Any] = []
    for path in paths:
        rel = _relative(path, directory)
        try:
            parts += _folder(path, rel) if path.is_dir() else _file(path, rel)
        except AttachRefused:
            raise
        except OSError as exc:
            raise AttachRefused(f"cannot attach {rel}: {exc.strerror or exc}") from None
    return parts


def _record(path: Path, rel: str, mime: str, url: str) -> FilePart:
    return FilePart(
        id="",
        session_id="",
        message_id="",
        mime=mime,
        filename=path.name,
        url=url,
        source=FileSource(path=rel),
    )


def _file(path: Path, rel: str) -> list[Any]:
    if not path.is_file():
        raise AttachRefused(f"cannot attach {rel}: not a regular file")
    mime = media_type(path)
    if mime:  # an image or a PDF: the model gets it as an attachment
        url = f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode()}"
        return [_record(path, rel, mime, url)]
    if is_binary(path):
        raise AttachRefused(
            f"cannot attach {rel}: it is a binary file (text, images and PDFs can be attached)"
        )
    with path.open("rb") as fh:
        data = fh.read(MAX_TEXT_BYTES + 1)
    text = data[:MAX_TEXT_BYTES].decode("utf-8", "replace")
    cut = "\n(cut at 50 KB)" if len(data) > MAX_TEXT_BYTES else ""
    return [
        _synthetic(f'Contents of {rel} (attached by the user):\n<file path="{rel}">\n{text}{cut}\n</file>'),
        # The record of the attachment; a file:// text file also counts as read by the session.
        _record(path, rel, "text/plain", path.as_uri()),
    ]


def _synthetic(text: str) -> TextPart:
    """What the model reads of an attachment (its ids are given when the message is stored)."""
    return TextPart(id="", session_id="", message_id="", synthetic=True, text=text)


def _folder(path: Path, rel: str) -> list[Any]:
    with os.scandir(path):  # an unreadable folder fails here, with its reason
        pass
    files: list[str] = []
    more = False
    for _, name in walk_files(path):
        if len(files) >= LIST_LIMIT:
            more = True
            break
        files.append(name)
    tree = render_tree(rel, files) if files else f"{rel.rstrip('/')}/\n  (empty)"
    if more:
        tree += f"\n(the first {LIST_LIMIT} files; use the list or glob tool to see more)"
    return [
        _synthetic(
            f'Listing of the folder {rel} (attached by the user):\n<directory path="{rel}">\n'
            f"{tree}\n</directory>"
        ),
        _record(path, rel, DIRECTORY_MIME, path.as_uri()),
    ]
