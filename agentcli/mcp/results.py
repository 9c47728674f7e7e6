"""A `tools/call` result as a tool part: text joined, images and binary resources as attachments
(as OpenCode does), structured content as JSON when the server sent no text."""

from __future__ import annotations

import json
from typing import Any

from agentcli.store.records import Attachment
from agentcli.tools.base import ToolError, ToolResult


def _block(block: Any, texts: list[str], files: list[Attachment]) -> None:
    kind = getattr(block, "type", None)
    if kind == "text":
        texts.append(block.text)
    elif kind in ("image", "audio"):
        files.append(Attachment(mime=block.mimeType, url=f"data:{block.mimeType};base64,{block.data}"))
    elif kind == "resource":
        res = block.resource
        uri = str(res.uri)
        if getattr(res, "text", None) is not None:
            texts.append(res.text)
        elif getattr(res, "blob", None) is not None:
            mime = res.mimeType or "application/octet-stream"
            files.append(Attachment(mime=mime, filename=uri, url=f"data:{mime};base64,{res.blob}"))
    elif kind == "resource_link":
        described = f" — {block.description}" if getattr(block, "description", None) else ""
        texts.append(f"[resource {block.name}: {block.uri}{described}]")


def to_tool_result(result: Any, title: str, metadata: dict[str, Any]) -> ToolResult:
    """The model-visible result; an ``isError`` result becomes the tool's error (ToolError)."""
    texts: list[str] = []
    files: list[Attachment] = []
    for block in result.content or []:
        _block(block, texts, files)
    # Structured content stands in for text only when the server sent neither text nor a file: an
    # image's structured copy would put its base64 into the model's text.
    if not texts and not files and result.structuredContent is not None:
        texts.append(json.dumps(result.structuredContent, ensure_ascii=False, indent=2))
    output = "\n\n".join(texts)
    if result.isError:
        raise ToolError(output.strip() or "the MCP tool reported an error without a message")
    if not output and files:
        output = "The tool returned " + ", ".join(f.mime for f in files)
    return ToolResult(output=output, title=title, metadata=metadata, attachments=files)
