"""The context figure: the one number the gauge, ``/context``, the plugins and the memory plugin's block
show — the size of the request the session would send now, in the provider's own tokens.

It is anchored on what the provider counted. After every chat step the request just sent is kept as
a print: a digest of each of its messages (and of its tool schemas) with the tokens that message took,
the provider's count shared out over the messages that were new in it (in proportion to their length;
the messages carried over keep what they were given before). The figure is then the messages of the
window as they stand now: each one the provider already counted at its measured tokens, each new one
(a tool's output, an answer, a summary) at the session's own characters-per-token, calibrated on the
provider's counts of recent new content. The system prompt, the tool schemas and the plugins'
reminders count as last sent. So a prune, a compaction or an undo takes away exactly what the provider
counted for what left, and only what is new is estimated.

The number is not the pre-flight compaction decision (that stays the deterministic chars/4 estimate
of ``agentcli.llm.tokens``): it is what the user and the plugins are told.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from agentcli.llm.tokens import json_text
from agentcli.session.request.history import filter_compacted
from agentcli.session.request.view import is_reminder, model_view, to_model_messages
from agentcli.store.records import Tokens
from agentcli.store.store import Store

PRINT_KEY = "context.print"  # session state: the print of the last chat request (``RequestPrint``)
# Calibration: earlier measurements fade as new content is measured, by its size (in pieces, below):
# recent content (this turn's outputs) says more about the next output than the system prompt measured
# first, and a few short messages do not outweigh a file read just before.
FADE = 20_000
PRIOR = 500  # the weight of the first request's own ratio (in pieces)
ARCHIVE_MAX = 5_000  # archived messages kept (about 30 bytes each)
RATIO_RANGE = (0.2, 5.0)  # pieces a token no tokenizer goes outside of (a scripted count can)


class Item(BaseModel):
    digest: str
    tokens: float
    frame: bool = False  # the system prompt, the tool schemas, a plugins' reminder: counted as last sent


class RequestPrint(BaseModel):
    """The last chat request as the provider counted it."""

    model: str
    reported: int  # its input tokens, cached ones included
    estimated: bool = False  # the provider reported no usage: ``reported`` is agentcli's estimate
    items: list[Item] = Field(default_factory=list)
    # Messages counted in earlier requests and not sent since (compacted away, undone): what they took,
    # should they come back (an undone compaction or undo), newest last.
    archive: list[Item] = Field(default_factory=list)
    sized: float = 0.0  # pieces of new content measured (recent-weighted) ...
    counted: float = 0.0  # ... and the tokens the provider counted for them

    @property
    def ratio(self) -> float:
        """Pieces (``size``) per token of new content in this session."""
        if self.counted <= 0 or self.sized <= 0:
            return 1.0
        low, high = RATIO_RANGE
        return min(high, max(low, self.sized / self.counted))


@dataclass(frozen=True)
class Figure:
    tokens: int
    estimated: bool  # no provider count behind it


# A rough cut of text into the pieces a BPE tokenizer starts from (words, numbers, runs of punctuation,
# whitespace): the tokens of any common tokenizer follow it more closely than characters do (code's
# dense punctuation, prose's long words), so one calibrated ratio fits both.
_PIECES = re.compile(r" ?[^\W\d_]+|\d{1,3}|[^\w\s]+|\s+")


def _text(value: Any) -> str:
    """What the model reads of a message: its strings (content, tool calls' names and arguments)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(_text(v) for k, v in value.items() if k not in ("type", "id", "tool_call_id"))
    if isinstance(value, list):
        return "\n".join(_text(v) for v in value)
    return ""


def size(message: Any) -> int:
    """A message's size in the units the ratio calibrates: its pieces, and one for its framing."""
    return 1 + len(_PIECES.findall(_text(message)))


def _digest(message: Any) -> str:
    text = json_text(message).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(text, digest_size=10).hexdigest()


def _frame(message: dict[str, Any]) -> bool:
    return message.get("role") == "system" or is_reminder(message)


def load(store: Store, session_id: str) -> RequestPrint | None:
    raw = store.get_state(session_id, PRINT_KEY)
    try:
        return RequestPrint.model_validate(raw) if raw else None
    except ValueError:  # a print from another version: measured again at the next step
        return None


def record(
    store: Store,
    session_id: str,
    model: str,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    tokens: Tokens,
) -> None:
    """After a chat step: keep the print of the request it sent, sized by the provider's count."""
    reported = tokens.input + tokens.cache.read + tokens.cache.write
    if reported <= 0:
        return
    prev = load(store, session_id)
    if prev is not None and (prev.model != model or prev.estimated != tokens.estimated):
        prev = None  # another tokenizer (or none): nothing measured carries over
    sent: list[Any] = [*messages, tools] if tools else list(messages)
    frames = [_frame(m) for m in messages] + ([True] if tools else [])
    digests = [_digest(m) for m in sent]
    pool = _pool([*prev.archive, *prev.items] if prev is not None else [], frames=True)
    known = [_take(pool, digest) for digest in digests]
    # Only what is new is sized (the pieces are the costly part): the rest carries its measured tokens.
    sized = [
        (d, size(m) if k is None else 0, f) for d, m, k, f in zip(digests, sent, known, frames, strict=True)
    ]
    kept = sum(k for k in known if k is not None)
    fresh = sum(size for (_, size, _), k in zip(sized, known, strict=True) if k is None)
    residual = reported - kept
    out = RequestPrint(model=model, reported=reported, estimated=tokens.estimated)
    if prev is not None:
        out.sized, out.counted = prev.sized, prev.counted
    share = residual / fresh if fresh and residual > 0 else 0.0
    if share and prev is None:  # the first request is mostly the system prompt and the tool schemas:
        weak = min(1.0, PRIOR / fresh)  # a weak prior for the content to come, soon outweighed
        out.sized, out.counted = fresh * weak, residual * weak
    elif share and _plausible(fresh / residual, prev):
        keep = math.exp(-fresh / FADE)
        out.sized = out.sized * keep + fresh
        out.counted = out.counted * keep + residual
    if share:
        values = [k if k is not None else size * share for (_, size, _), k in zip(sized, known, strict=True)]
    else:  # nothing new, or what was kept was given too much: everything scaled to the count
        ratio = out.ratio
        rough = [k if k is not None else size / ratio for (_, size, _), k in zip(sized, known, strict=True)]
        scale = reported / (sum(rough) or 1)
        values = [v * scale for v in rough]
    out.items = [
        Item(digest=digest, tokens=round(value, 2), frame=frame)
        for (digest, _, frame), value in zip(sized, values, strict=True)
    ]
    now = {item.digest for item in out.items}
    if prev is not None:
        left = [i for i in [*prev.archive, *prev.items] if not i.frame and i.digest not in now]
        out.archive = list({i.digest: i for i in left}.values())[-ARCHIVE_MAX:]
    store.set_state(session_id, PRINT_KEY, out.model_dump(mode="json"))


def _plausible(ratio: float, prev: RequestPrint | None) -> bool:
    low, high = RATIO_RANGE
    if not low <= ratio <= high:
        return False
    return prev is None or prev.counted <= 0 or 0.5 <= ratio / prev.ratio <= 2.0


def _pool(items: list[Item], *, frames: bool = False) -> dict[str, list[float]]:
    pool: dict[str, list[float]] = defaultdict(list)
    for item in items:
        if frames or not item.frame:
            pool[item.digest].append(item.tokens)
    return pool


def _take(pool: dict[str, list[float]], digest: str) -> float | None:
    same = pool.get(digest)
    return same.pop(0) if same else None


def figure(store: Store, session_id: str) -> Figure:
    """The session's context figure now (see the module's docstring). Before any provider count, the
    figure stored with the session (agentcli's estimate, or 0 before the first request)."""
    printed = load(store, session_id)
    if printed is None:
        session = store.get_session(session_id)
        return Figure(session.context_tokens, session.context_estimated)
    window = filter_compacted(store.stream(session_id))
    messages = to_model_messages(model_view(window), target_model=printed.model)
    pool = _pool([*printed.archive, *printed.items])
    ratio = printed.ratio
    total = sum(item.tokens for item in printed.items if item.frame)
    for message in messages:
        known = _take(pool, _digest(message))
        total += known if known is not None else size(message) / ratio
    return Figure(round(total), printed.estimated)
