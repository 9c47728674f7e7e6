"""Unified diffs for permission prompts and edit results."""

from __future__ import annotations

import difflib
from dataclasses import dataclass


@dataclass
class DiffStat:
    patch: str
    additions: int
    deletions: int

    def summary(self) -> str:
        return f"+{self.additions} -{self.deletions} lines"


def unified(path: str, before: str, after: str) -> DiffStat:
    """A unified diff of two versions of a file, with added/removed line counts."""
    lines = list(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), fromfile=path, tofile=path
        )
    )
    adds = sum(1 for ln in lines if ln.startswith("+") and not ln.startswith("+++"))
    dels = sum(1 for ln in lines if ln.startswith("-") and not ln.startswith("---"))
    # Lines without a final newline would run together; difflib leaves that to the caller.
    patch = "".join(ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n" for ln in lines)
    return DiffStat(patch, adds, dels)
