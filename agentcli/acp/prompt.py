"""A ``session/prompt``'s content blocks as the user message agentcli stores: the text, then the
parts that go with it, the same way the chat attaches an ``@path`` mention (a file's text as a
synthetic part the model reads plus its file record; an image as a file part the model is shown).

Text blocks join as written; a link to a file (``resource_link``) or a file the client embedded
(``resource``) stands in the text as ``@path`` and is attached; an image is attached when the model
takes images (``initialize`` says so), else named by a placeholder.
"""

from __future__ import annotations

import base64
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from acp.schema import (
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from agentcli.app.attach import MAX_TEXT_BYTES, attachments
from agentcli.store.records import FilePart, FileSource, TextPart

log = logging.getLogger(__name__)


@dataclass
class PromptInput:
    text: str = ""
    parts: list[Any] = field(default_factory=list)  # attached parts, ids given when stored


def file_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return Path(unquote(parsed.path))
    return Path(uri) if parsed.scheme == "" and uri.startswith("/") else None


def _shown(path: Path, directory: Path) -> str:
    try:
        return str(path.relative_to(directory))
    except ValueError:
        return str(path)


def _file(mime: str, url: str, name: str | None, source: str = "") -> FilePart:
    return FilePart(
        id="",
        session_id="",
        message_id="",
        mime=mime,
        filename=name,
        url=url,
        source=FileSource(path=source) if source else None,
    )


def prompt_input(blocks: list[Any], directory: Path, *, images: bool) -> PromptInput:
    out = PromptInput()
    texts: list[tuple[str, bool]] = []  # (piece, written by the user)
    for block in blocks:
        if isinstance(block, TextContentBlock):
            texts.append((block.text, True))
        elif isinstance(block, ImageContentBlock):
            name = Path(urlparse(block.uri).path).name if block.uri else "image"
            if images:
                out.parts.append(_file(block.mime_type, f"data:{block.mime_type};base64,{block.data}", name))
            else:
                texts.append((f"[an image the model cannot see: {name}]", False))
        elif isinstance(block, ResourceContentBlock):
            texts.append((_link(block, directory, out), False))
        elif isinstance(block, EmbeddedResourceContentBlock):
            texts.append((_embedded(block.resource, directory, out, images=images), False))
        else:  # audio: not advertised
            texts.append((f"[a {getattr(block, 'type', 'content')} block agentcli cannot use]", False))
    out.text = _joined(texts)
    return out


def _joined(pieces: list[tuple[str, bool]]) -> str:
    """The prompt's text: the user's words as written, an attachment's marker set apart from what
    touches it by a space ("@a.txt @b.txt", not "@a.txt@b.txt")."""
    out = ""
    last_user = True
    for piece, user in pieces:
        if out and piece and not (user and last_user) and not out[-1].isspace() and not piece[0].isspace():
            out += " "
        out += piece
        last_user = user
    return out


def _link(block: ResourceContentBlock, directory: Path, out: PromptInput) -> str:
    path = file_path(block.uri)
    if path is None or not path.is_file():
        return f"[{block.name}]({block.uri})"
    try:
        out.parts.extend(attachments([path], directory))
    except OSError as exc:
        log.warning("cannot attach %s: %s", path, exc.strerror)
        return f"[{block.name}]({block.uri})"
    return f"@{_shown(path, directory)}"


def _embedded(resource: Any, directory: Path, out: PromptInput, *, images: bool) -> str:
    path = file_path(resource.uri)
    shown = _shown(path, directory) if path else resource.uri
    if isinstance(resource, TextResourceContents):
        data = resource.text.encode("utf-8")
        cut = "\n(cut at 50 KB)" if len(data) > MAX_TEXT_BYTES else ""
        text = data[:MAX_TEXT_BYTES].decode("utf-8", "ignore")
        attached = f'Contents of {shown} (attached by the user):\n<file path="{shown}">\n{text}{cut}\n</file>'
        out.parts.append(
            TextPart(
                id="",
                session_id="",
                message_id="",
                synthetic=True,
                text=attached,
            )
        )
        out.parts.append(_file("text/plain", resource.uri, path.name if path else shown, shown))
        return f"@{shown}"
    if isinstance(resource, BlobResourceContents):
        mime = resource.mime_type or "application/octet-stream"
        if images and (mime.startswith("image/") or mime == "application/pdf"):
            base64.b64decode(resource.blob, validate=True)  # a broken blob is the client's mistake
            out.parts.append(_file(mime, f"data:{mime};base64,{resource.blob}", path.name if path else None))
            return f"@{shown}"
        return f"[{shown}: {mime}, which the model cannot read]"
    return f"[{shown}]"
