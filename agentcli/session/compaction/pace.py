"""When a background summary is asked for: early enough that it is ready when compaction becomes due.

The session shows its pace: how long its last summary took to write (a background one, or a
compaction made while the turn waited) and how fast its window grows (tokens per second of the
turn, between its finished steps). The summary is asked for once the time left before the window
reaches the usable budget (compaction due) falls below that latency with a margin; never before
``FLOOR`` of the usable window (the tail kept verbatim at the cut, plus what the turn adds while the
summary is written, must still leave a swap that frees enough: ``Compactor._cut`` refuses one whose
tail fills over three quarters), and at the latest at ``compaction.background_at`` (the user's
ceiling, and the only threshold until a summary's latency is known).
"""

from __future__ import annotations

from dataclasses import dataclass

FLOOR = 0.5  # of the usable window: never earlier (below the ceiling)
MARGIN = 1.5  # the latency learned, with room for a slower summary or a faster window
SMOOTHING = 0.5  # weight of the newest growth rate against the ones before


@dataclass
class Pace:
    """A session's pace, learned as it goes (in the runtime's memory, per session)."""

    summary_s: float | None = None  # how long the last summary took to write
    rate: float | None = None  # tokens per second the window grows by during a turn (smoothed)
    last: tuple[str, float, int] | None = None  # (turn, when, tokens) of the last finished step seen

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

    def start(self, tokens: int, usable: int, ceiling: float) -> bool:
        """Is it time to ask for the summary of a window of ``tokens``? Never when the usable window is
        unknown (0) or already reached (compaction due: the loop's to make)."""
        if not usable or tokens >= usable:
            return False
        if tokens >= usable * ceiling:
            return True
        if tokens < usable * FLOOR or self.summary_s is None or not self.rate:
            return False
        return (usable - tokens) / self.rate <= self.summary_s * MARGIN
