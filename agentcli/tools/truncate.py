"""OpenCode's ingestion truncation: a tool output over the line or byte limit is cut, the full text
is saved to a file, and the model is told where it is so it can grep or page through it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentcli.store.ids import ascending

Direction = Literal["head", "tail"]


@dataclass
class Truncated:
    content: str
    truncated: bool
    output_path: Path | None = None


def _keep(lines: list[str], max_lines: int, max_bytes: int) -> tuple[list[str], int, bool]:
    """The lines that fit, in order taken; their byte size; whether the byte limit stopped us."""
    kept: list[str] = []
    size = 0
    for line in lines:
        if len(kept) >= max_lines:
            return kept, size, False
        cost = len(line.encode("utf-8")) + (1 if kept else 0)
        if size + cost > max_bytes:
            return kept, size, True
        kept.append(line)
        size += cost
    return kept, size, False


def save_output(text: str, output_dir: Path) -> Path:
    """Write a full output under ``output_dir`` with a time-ordered name (tool_<id>). Outputs hold
    whatever a tool saw (a .env, a key): the file is 0600 from its first byte, the folder 0700."""
    output_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(output_dir, 0o700)
    path = output_dir / ("tool_" + ascending("prt").removeprefix("prt_"))
    with os.fdopen(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600), "w", encoding="utf-8") as fh:
        fh.write(text)
    return path


def truncate_output(
    text: str,
    *,
    max_lines: int,
    max_bytes: int,
    output_dir: Path,
    direction: Direction = "head",
) -> Truncated:
    """Return ``text`` unchanged when it fits; otherwise the head (or tail) that fits plus a note
    naming the file that holds the full output."""
    lines = text.split("\n")
    total = len(text.encode("utf-8"))
    if len(lines) <= max_lines and total <= max_bytes:
        return Truncated(text, False)

    if direction == "head":
        kept, size, hit_bytes = _keep(lines, max_lines, max_bytes)
    else:
        kept, size, hit_bytes = _keep(lines[::-1], max_lines, max_bytes)
        kept.reverse()
    removed = f"{total - size} bytes" if hit_bytes else f"{len(lines) - len(kept)} lines"
    path = save_output(text, output_dir)
    hint = (
        f"The tool call succeeded but the output was truncated. Full output saved to: {path}\n"
        "Use the grep tool to search the full content or the read tool with offset/limit "
        "to view specific sections."
    )
    preview = "\n".join(kept)
    if direction == "head":
        content = f"{preview}\n\n...{removed} truncated...\n\n{hint}"
    else:
        content = f"...{removed} truncated...\n\n{hint}\n\n{preview}"
    return Truncated(content, True, path)
