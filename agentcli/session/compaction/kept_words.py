"""The user's own words survive a compaction: their messages are kept verbatim, newest first, within a
token budget (Codex keeps 20k tokens), the session's first message always (it usually states the task
and the rules), each cut with a marker when it alone exceeds what is left.

Pure functions over records. Incremental like the ledger: the previous compaction's kept messages
plus the user messages newer than it.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentcli.llm.tokens import estimate
from agentcli.store.artifacts import KeptMessage
from agentcli.store.records import TextPart, WithParts

SHARE = 0.10  # of the usable window, by default
MAX_TOKENS = 20_000
FIRST_SHARE = 4  # the first message may take at most a quarter of the budget
CHARS_PER_TOKEN = 4


def default_budget(usable: int) -> int:
    return min(MAX_TOKENS, int(usable * SHARE))


def user_words(msg: WithParts) -> str:
    """What the user typed in ``msg``: its text parts, without agentcli's own (synthetic ones,
    the "continue" after a compaction, a question re-sent after one, turns undone)."""
    if msg.role != "user" or msg.compaction() is not None:
        return ""
    return "\n\n".join(
        p.text
        for p in msg.parts
        if isinstance(p, TextPart)
        and p.text.strip()
        and not (p.synthetic or p.ignored or p.compaction_continue or p.replay_of)
    )


def _cut(kept: KeptMessage, tokens: int) -> KeptMessage:
    """``kept`` cut to about ``tokens`` (its start is kept: that is where a request says what it wants)."""
    chars = max(0, tokens * CHARS_PER_TOKEN)
    if len(kept.text) <= chars or estimate(kept.text) <= tokens:
        return kept
    return kept.model_copy(update={"text": kept.text[:chars], "cut": kept.cut + len(kept.text) - chars})


def keep(
    previous: list[KeptMessage],
    previous_left_out: int,
    msgs: Iterable[WithParts],
    *,
    through: str | None,
    budget: int,
    from_start: bool,
) -> tuple[list[KeptMessage], int]:
    """The user messages to keep, oldest first, and how many were left out. ``previous``: what the
    last compaction kept; ``msgs``: the window (only user messages newer than ``through`` are new);
    ``from_start``: ``msgs`` begin with the session (its first message is pinned)."""
    candidates = [m.model_copy(update={"visible": False}) for m in previous]
    first_known = not from_start
    for msg in sorted(msgs, key=lambda m: m.id):
        if through is not None and msg.id <= through:
            continue
        if words := user_words(msg):
            candidates.append(KeptMessage(message_id=msg.id, text=words, first=not first_known))
            first_known = True
    if budget <= 0 or not candidates:
        return [], previous_left_out + len(candidates)
    first = candidates[0] if candidates[0].first else None
    remaining = budget
    pinned: KeptMessage | None = None
    if first is not None:
        pinned = _cut(first, min(estimate(first.text), budget // FIRST_SHARE))
        remaining -= estimate(pinned.text)
    chosen: list[KeptMessage] = []
    rest = candidates[1:] if first is not None else candidates
    for index in range(len(rest) - 1, -1, -1):  # newest first
        size = estimate(rest[index].text)
        if size <= remaining:
            chosen.append(rest[index])
            remaining -= size
            continue
        if remaining > 0:
            chosen.append(_cut(rest[index], remaining))  # the one that did not fit, cut with a marker
            index -= 1
        left = index + 1
        chosen.reverse()
        return ([pinned] if pinned else []) + chosen, previous_left_out + left
    chosen.reverse()
    return ([pinned] if pinned else []) + chosen, previous_left_out
