"""A `tools/call` result (the SDK's own types) as the tool part the model sees: an image is an
attachment, never base64 in the text, also when the server repeats it as structured content."""

from __future__ import annotations

from mcp import types

from agentcli.mcp.results import to_tool_result

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def test_an_image_with_a_structured_copy_is_an_attachment_and_no_base64_reaches_the_text() -> None:
    result = types.CallToolResult(
        content=[types.ImageContent(type="image", data=PNG, mimeType="image/png")],
        structuredContent={"content": PNG, "mimeType": "image/png"},
    )
    out = to_tool_result(result, title="read_media_file", metadata={})
    assert PNG not in out.output and out.output == "The tool returned image/png"
    [image] = out.attachments
    assert image.mime == "image/png" and image.url.endswith(PNG)


def test_structured_content_alone_is_the_text() -> None:
    result = types.CallToolResult(content=[], structuredContent={"now": "12:00"})
    assert '"now": "12:00"' in to_tool_result(result, title="t", metadata={}).output
