"""An editor's prompt blocks as the message the model reads: attached files' markers are set apart
from each other and from the words around them; the client's own text blocks join as they are."""

from __future__ import annotations

from pathlib import Path

from acp.schema import ResourceContentBlock, TextContentBlock

from agentcli.acp.prompt import prompt_input


def link(path: Path) -> ResourceContentBlock:
    return ResourceContentBlock(type="resource_link", uri=path.as_uri(), name=path.name)


def test_attachment_markers_are_separated(tmp_path: Path) -> None:
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text(name)
    blocks = [
        TextContentBlock(type="text", text="compare"),
        link(tmp_path / "a.txt"),
        link(tmp_path / "b.txt"),
        TextContentBlock(type="text", text="please"),
    ]
    got = prompt_input(blocks, tmp_path, images=False)
    assert got.text == "compare @a.txt @b.txt please"
    split = [TextContentBlock(type="text", text="hel"), TextContentBlock(type="text", text="lo ")]
    assert prompt_input([*split, link(tmp_path / "a.txt")], tmp_path, images=False).text == "hello @a.txt"
