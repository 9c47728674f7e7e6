"""What a resource's contents and a prompt's arguments become (agentcli.mcp.resources,
agentcli.mcp.prompts), on the SDK's own types: the cases server-everything does not serve."""

from __future__ import annotations

import base64

import pytest
from mcp import types
from pydantic import AnyUrl

from agentcli.mcp.prompts import McpPrompt, as_text
from agentcli.mcp.resources import contents

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 32).decode()


def blob(uri: str, mime: str, data: str) -> types.BlobResourceContents:
    return types.BlobResourceContents(uri=AnyUrl(uri), mimeType=mime, blob=data)


def test_an_image_resource_is_an_attachment_and_other_binaries_one_line() -> None:
    zipped = base64.b64encode(b"PK\x03\x04" + b"\0" * 2000).decode()
    text, files = contents(
        "s", "x://a", [blob("x://a.png", "image/png", PNG), blob("x://b", "application/zip", zipped)]
    )
    [image] = files
    assert image.mime == "image/png" and image.url == f"data:image/png;base64,{PNG}"
    assert "[Binary MCP resource attached: x://a.png (image/png)]" in text
    assert (
        "[Binary MCP resource omitted: x://b (application/zip, 2 KB) is not a supported attachment type]"
        in text
    )
    assert PNG not in text  # never base64 in the model's text


def test_an_empty_read_says_so() -> None:
    assert contents("s", "x://a", []) == ("MCP resource x://a from s returned no contents.", [])


def prompt(*names: tuple[str, bool]) -> McpPrompt:
    listed = types.Prompt(
        name="my prompt", arguments=[types.PromptArgument(name=n, required=r) for n, r in names]
    )
    return McpPrompt.of("my server", listed)


def test_a_prompts_command_is_named_as_opencode_names_it() -> None:
    assert prompt().command == "my_server:my_prompt"
    assert prompt(("city", True), ("state", False)).hint == "city [state]"


def test_arguments_by_position_quoted_or_the_rest_of_the_line() -> None:
    two = prompt(("city", True), ("note", False))
    assert two.values('"New York" bring an umbrella') == {"city": "New York", "note": "bring an umbrella"}
    assert two.values("Paris") == {"city": "Paris"}
    with pytest.raises(ValueError, match=r"/my_server:my_prompt needs city \(usage: "):
        two.values("")


def test_a_prompts_messages_become_one_text() -> None:
    result = types.GetPromptResult(
        messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text="Look at:")),
            types.PromptMessage(
                role="user",
                content=types.EmbeddedResource(
                    type="resource",
                    resource=types.TextResourceContents(
                        uri=AnyUrl("x://r"), mimeType="text/plain", text="body"
                    ),
                ),
            ),
            types.PromptMessage(
                role="user", content=types.ImageContent(type="image", data=PNG, mimeType="image/png")
            ),
        ]
    )
    assert as_text(result) == "Look at:\nbody\n[image (image/png) from the prompt, not included]"
