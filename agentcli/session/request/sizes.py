"""The size of what the model is sent, measured once per record: each record's chat messages and
their JSON length, summed in O(1) over any run of them (``Converted``), and a window's estimate with
its system blocks (OpenCode's chars/4 estimate over the request's JSON)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from agentcli.llm.tokens import json_text, tokens_for_length, utf16_length
from agentcli.store.records import WithParts

ChatMessage = dict[str, Any]


@dataclass(frozen=True)
class Entry:
    """One record converted once: its chat messages and their JSON length (UTF-16 units)."""

    msg: WithParts
    chat: list[ChatMessage]
    length: int  # sum of the JSON lengths of ``chat``

    @property
    def tokens(self) -> int:
        """The estimate of this record's chat messages alone, as a JSON list."""
        return tokens_for_length(self.length + 2 + max(0, len(self.chat) - 1))


def entry(msg: WithParts, chat: list[ChatMessage]) -> Entry:
    if not chat:
        return Entry(msg, chat, 0)
    # The items' lengths: the list's JSON less its brackets and the commas between items.
    return Entry(msg, chat, utf16_length(json_text(chat)) - 2 - (len(chat) - 1))


@dataclass(frozen=True)
class Converted:
    """Records converted once, message by message. ``tokens(i, j)`` is exactly the estimate of the
    JSON list of ``entries[i:j]``'s chat messages (what ``estimate_json`` would give), in O(1)."""

    entries: list[Entry]
    _lengths: list[int] = field(default_factory=list, repr=False)
    _counts: list[int] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self._lengths[:] = [0, *accumulate(e.length for e in self.entries)]
        self._counts[:] = [0, *accumulate(len(e.chat) for e in self.entries)]

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def msgs(self) -> list[WithParts]:
        return [e.msg for e in self.entries]

    @property
    def chat(self) -> list[ChatMessage]:
        return [m for e in self.entries for m in e.chat]

    def length(self, start: int = 0, end: int | None = None) -> int:
        """The JSON length of the messages' list: brackets, items and the commas between them."""
        end = len(self.entries) if end is None else end
        count = self._counts[end] - self._counts[start]
        return self._lengths[end] - self._lengths[start] + 2 + max(0, count - 1)

    def tokens(self, start: int = 0, end: int | None = None) -> int:
        return tokens_for_length(self.length(start, end))

    def index(self) -> dict[str, Entry]:
        return {e.msg.id: e for e in self.entries}


def window_tokens(
    system_blocks: Sequence[str], converted: Converted, start: int = 0, end: int | None = None
) -> int:
    """The estimated size of a context: the system blocks and a run of converted messages."""
    system_msgs = [{"role": "system", "content": block} for block in system_blocks]
    extra = sum(utf16_length(json_text(m)) + 1 for m in system_msgs)
    return tokens_for_length(converted.length(start, end) + extra)
