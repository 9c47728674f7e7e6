"""What a compaction decides before its summary request (``Prepared``), counts while it makes it
(``Attempts``) and answers (``Result``): the records ``Compactor`` passes around."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from agentcli.session.compaction import plan
from agentcli.session.request.sizes import Converted
from agentcli.store.records import CompactionPart, WithParts


@dataclass
class Result:
    outcome: Literal["continue", "stop"]
    tokens_after: int = 0
    tokens_before: int = 0
    held: Literal["", "decline", "delay"] = ""  # a plugin declined or delayed this automatic compaction


@dataclass
class Attempts:
    count: int = 0  # summary requests built
    request_tokens: int = 0  # the size of the last one
    sent: set[str] = field(default_factory=set)  # digests of the requests sent: none is sent twice


@dataclass(frozen=True)
class Prepared:
    sid: str
    parent: WithParts  # the marker
    marker_part: CompactionPart | None
    replay: WithParts | None  # the question re-sent after an overflow compaction
    in_progress: WithParts | None  # the question of a turn compacted mid-way: re-sent instead of "continue"
    history: list[WithParts]  # the window before the marker (and before the replayed question)
    window: list[WithParts]  # the window as the loop's next chat request would send it
    previous: str | None  # the newest earlier summary, merged into this one
    converted: Converted  # the window, converted once
    sized: Converted  # ``history`` without earlier marker/summary pairs, from ``converted``
    system_blocks: list[str]
    tokens_before: int
    budget: int  # tokens of recent turns kept verbatim
    selection: plan.Selection
