"""Telling a loop from polling. OpenCode stops the third identical tool call in a row; but the same
read-only call whose result changes each time (a build log, ``memory context`` while usage grows)
is a model polling, not looping. So: identical calls whose last two results were identical are a
loop (stopped at the third, as in OpenCode); identical calls whose results keep changing are let
through up to ``POLL_LIMIT`` in a row, and only then asked about.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal

DOOM_LOOP_THRESHOLD = 3  # identical calls with identical results (OpenCode's processor)
POLL_LIMIT = 10  # identical calls whose results changed each time

Verdict = Literal["run", "loop", "polling"]


def _key(tool: str, args: Any) -> tuple[str, str]:
    return tool, json.dumps(args, sort_keys=True)


def _digest(result: str) -> str:
    return hashlib.sha256(result.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class CallRun:
    """The run of identical calls that ends the turn's calls so far, with their results' digests."""

    key: tuple[str, str] | None = None
    results: list[str] = field(default_factory=list)

    def verdict(self, tool: str, args: Any) -> Verdict:
        """What to make of the next call, before it runs."""
        if _key(tool, args) != self.key:
            return "run"
        count = len(self.results) + 1  # this call is the count-th in a row
        if count >= DOOM_LOOP_THRESHOLD and self.results[-1] == self.results[-2]:
            return "loop"
        return "polling" if count >= POLL_LIMIT else "run"

    def record(self, tool: str, args: Any, result: str) -> None:
        """A call ran (or was refused) with ``result`` as what the model was told."""
        key = _key(tool, args)
        if key != self.key:
            self.key, self.results = key, []
        self.results.append(_digest(result))

    def allowed_polling(self) -> None:
        """The user let a polling model go on: another ``POLL_LIMIT`` calls before asking again."""
        self.results = self.results[-1:]

    def __len__(self) -> int:
        return len(self.results)
