"""When a background summary is asked for: early enough that it is ready when compaction becomes due.

The session shows its pace: how long its last summary took to write (a background one, or a
compaction made while the turn waited) and how fast its window grows (tokens per second of the
turn, between its finished steps). The summary is asked for once the time left before the window
reaches the usable budget (compaction due) falls below that latency with a margin; never before
``FLOOR`` of the usable window (the tail kept verbatim at the cut, plus what the turn adds while the
summary is written, must still leave a swap that frees enough: ``Compactor._cut`` refuses one whose
tail fills over three quarters), and at the latest at ``compaction.background_at`` (the user's
ceiling, and the only threshold until a latency is known: asking earlier on a guess would cost a
summary request in every session that passes the floor and ends before compaction is due).

A summary that takes longer to write than the window takes to refill after a swap (a slow
summarizer, a fast-growing turn) must be asked for before the previous one is swapped in: with
summaries in flight, the next one serves the due point after theirs, so the time left counts the
tokens their swaps will free (``ahead``). The latency is the session's own once it wrote one; before
that, the last one measured for the same model in an earlier session (``remembered``).
"""

from __future__ import annotations

from dataclasses import dataclass

from agentcli.store.records import CompactionPart
from agentcli.store.store import Store

FLOOR = 0.4  # of the usable window: never earlier (below the ceiling)
# The latency learned, with room for a slower summary or a faster window. Room is paid for: the cut
# is chosen when the summary is asked for, so all the turn adds meanwhile stays verbatim after it.
MARGIN = 1.2
SMOOTHING = 0.5  # weight of the newest growth rate against the ones before
RECENT = 100  # the sessions looked at for a model's summary latency (the newest first)


@dataclass
class Pace:
    """A session's pace, learned as it goes (in the runtime's memory, per session)."""

    summary_s: float | None = None  # how long the last summary took to write
    rate: float | None = None  # tokens per second the window grows by during a turn (smoothed)
    last: tuple[str, float, int] | None = None  # (turn, when, tokens) of the last finished step seen
    recalled: bool = False  # the recent sessions were asked for a latency (``remembered``), once

    def saw(self, turn: str, at: float, tokens: int) -> None:
        """A finished step of ``turn`` with a window of ``tokens`` at ``at``. Only growth within one
        turn counts: the user's pause between turns is not the window's pace, nor is a compaction."""
        last = self.last
        if last is not None and last[0] == turn and tokens <= last[2]:
            if tokens < last[2]:
                self.last = (turn, at, tokens)  # compacted: measure from here
            return  # the same step seen again
        if last is not None and last[0] == turn and at > last[1]:
            rate = (tokens - last[2]) / (at - last[1])
            self.rate = rate if self.rate is None else SMOOTHING * rate + (1 - SMOOTHING) * self.rate
        self.last = (turn, at, tokens)

    def growth(self) -> int:
        """The tokens the window is expected to grow by while a summary is written (0: not known)."""
        return int(self.rate * self.summary_s) if self.rate and self.summary_s else 0

    def start(self, tokens: int, usable: int, ceiling: float, ahead: int = 0) -> bool:
        """Is it time to ask for the summary of a window of ``tokens``? Never when the usable window is
        unknown (0) or already reached (compaction due: the loop's to make). ``ahead``: the tokens the
        swaps of the summaries already in flight will free (0: none in flight); with some, only a
        known latency asks for another (the ceiling is for the first)."""
        if not usable or tokens >= usable:
            return False
        if not ahead and tokens >= usable * ceiling:
            return True
        if tokens < usable * FLOOR or self.summary_s is None or not self.rate:
            return False
        return (usable - tokens + ahead) / self.rate <= self.summary_s * MARGIN


def remembered(store: Store, model: str) -> float | None:
    """How long the newest summary ``model`` wrote took, in the recent sessions (this one's earlier
    processes included); None when it wrote none there."""
    sessions = [s.id for s in store.list_sessions(limit=RECENT)]
    for part in store.parts_of_type(sessions, "compaction"):
        made = part.diagnostics if isinstance(part, CompactionPart) else None
        if made is not None and made.summarizer == model and made.summary_ms > 0 and not made.fallback:
            return made.summary_ms / 1000
    return None
