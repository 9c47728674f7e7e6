"""Find the text an edit means, even when the model's oldString is slightly off.

Each strategy yields candidate substrings *of the file* that the model's oldString may stand for;
the first candidate found exactly once wins (or, with replaceAll, the first found at all). The
strategies go from strict to forgiving, so an exact match always beats a fuzzy one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

Strategy = Callable[[str, str], Iterator[str]]

NOT_FOUND = (
    "Could not find oldString in the file. It must match exactly, including whitespace, "
    "indentation, and line endings."
)
MULTIPLE = "Found multiple matches for oldString. Provide more surrounding context to make the match unique."
IDENTICAL = "No changes to apply: oldString and newString are identical."


class MatchError(ValueError):
    pass


def _find_lines(find: str) -> list[str]:
    lines = find.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()  # a trailing newline in oldString should not demand an empty line in the file
    return lines


def _blocks(content: str, size: int) -> Iterator[str]:
    """Every run of ``size`` consecutive lines of ``content``, joined back with newlines."""
    lines = content.split("\n")
    for i in range(len(lines) - size + 1):
        yield "\n".join(lines[i : i + size])


def exact(content: str, find: str) -> Iterator[str]:
    yield find


def line_trimmed(content: str, find: str) -> Iterator[str]:
    """Lines equal once leading/trailing whitespace is ignored on each."""
    wanted = [ln.strip() for ln in _find_lines(find)]
    for block in _blocks(content, len(wanted)):
        if [ln.strip() for ln in block.split("\n")] == wanted:
            yield block


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def whitespace_normalized(content: str, find: str) -> Iterator[str]:
    """Equal once every run of whitespace counts as one space (within a line or across lines)."""
    target = _squash(find)
    if not target:
        return
    words = find.split()
    pattern = re.compile(r"\s+".join(re.escape(w) for w in words))
    for line in content.split("\n"):
        if _squash(line) == target:
            yield line
        elif target in _squash(line) and (m := pattern.search(line)):
            yield m.group(0)
    size = len(_find_lines(find))
    if size > 1:
        for block in _blocks(content, size):
            if _squash(block) == target:
                yield block


def _dedent(lines: list[str]) -> list[str]:
    indents = [len(ln) - len(ln.lstrip()) for ln in lines if ln.strip()]
    cut = min(indents, default=0)
    return [ln[cut:] if ln.strip() else ln for ln in lines]


def indentation_flexible(content: str, find: str) -> Iterator[str]:
    """Equal once the common leading indentation of each side is removed."""
    wanted = _dedent(_find_lines(find))
    for block in _blocks(content, len(wanted)):
        if _dedent(block.split("\n")) == wanted:
            yield block


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "'": "'", '"': '"', "`": "`", "\\": "\\", "\n": "\n", "$": "$"}


def _unescape(text: str) -> str:
    return re.sub(r"\\([ntr'\"`\\\n$])", lambda m: _ESCAPES[m.group(1)], text)


def escape_normalized(content: str, find: str) -> Iterator[str]:
    """The model over-escaped (``\\n`` for a newline, ``\\"`` for a quote)."""
    plain = _unescape(find)
    if plain != find:
        yield plain
    for block in _blocks(content, len(plain.split("\n"))):
        if _unescape(block) == plain:
            yield block


def trimmed_boundary(content: str, find: str) -> Iterator[str]:
    """oldString carried stray blank lines or spaces at its ends."""
    trimmed = find.strip()
    if not trimmed or trimmed == find:
        return
    yield trimmed
    for block in _blocks(content, len(find.split("\n"))):
        if block.strip() == trimmed:
            yield block


STRATEGIES: tuple[Strategy, ...] = (
    exact,
    line_trimmed,
    whitespace_normalized,
    indentation_flexible,
    escape_normalized,
    trimmed_boundary,
)


def replace(content: str, old: str, new: str, replace_all: bool = False) -> str:
    """``content`` with ``old`` replaced by ``new``; MatchError when that is not unambiguous."""
    if old == new:
        raise MatchError(IDENTICAL)
    found = False
    for strategy in STRATEGIES:
        for candidate in strategy(content, old):
            if not candidate:
                continue
            first = content.find(candidate)
            if first == -1:
                continue
            found = True
            if replace_all:
                return content.replace(candidate, new)
            if content.find(candidate, first + 1) != -1:
                continue  # ambiguous: a later, stricter-looking candidate may still be unique
            return content[:first] + new + content[first + len(candidate) :]
    raise MatchError(MULTIPLE if found else NOT_FOUND)
