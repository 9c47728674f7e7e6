"""A text a regex matches, built from its parse tree (Python's own ``re._parser``): for hostile inputs
made of a rule's own pieces (tests/hostile_text.py), such as the prefix of a token its rule would take,
cut short. Random choices (a class's character, a repeat's count, a branch) come from the caller's
seeded ``random.Random``, so the same seed gives the same text."""

from __future__ import annotations

import random
import re
from re import _constants as c  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

# The characters a class's member is drawn from (no line end: a partial match stays on its line).
_ALPHABET = [chr(i) for i in range(32, 127)] + ["\t"]
# A repeat takes at most this many more than its minimum, and one more at least where it may.
_EXTRA = 3

_CATEGORIES = {
    c.CATEGORY_DIGIT: str.isdigit,
    c.CATEGORY_NOT_DIGIT: lambda ch: not ch.isdigit(),
    c.CATEGORY_SPACE: str.isspace,
    c.CATEGORY_NOT_SPACE: lambda ch: not ch.isspace(),
    c.CATEGORY_WORD: lambda ch: ch.isalnum() or ch == "_",
    c.CATEGORY_NOT_WORD: lambda ch: not (ch.isalnum() or ch == "_"),
}


def sample(pattern: re.Pattern[str], rng: random.Random) -> str:
    """A text ``pattern`` matches, or nearly (look-arounds are left out; a class no character of
    ``_ALPHABET`` is in gives nothing)."""
    groups: dict[int, str] = {}
    out: list[str] = []
    _emit(_parser.parse(pattern.pattern, pattern.flags), rng, groups, out)
    return "".join(out)


def _emit(seq: Any, rng: random.Random, groups: dict[int, str], out: list[str]) -> None:
    for op, arg in seq:
        if op is c.LITERAL:
            out.append(chr(arg))
        elif op is c.NOT_LITERAL:
            out.append(rng.choice([ch for ch in _ALPHABET if ord(ch) != arg]))
        elif op is c.ANY:
            out.append(rng.choice(_ALPHABET[:-1]))
        elif op is c.IN:
            members = [ch for ch in _ALPHABET if _member(ch, arg)]
            if members:
                out.append(rng.choice(members))
        elif op is c.BRANCH:
            _emit(rng.choice(arg[1]), rng, groups, out)
        elif op is c.SUBPATTERN:
            at = len(out)
            _emit(arg[-1], rng, groups, out)
            if arg[0] is not None:
                groups[arg[0]] = "".join(out[at:])
        elif op is c.ATOMIC_GROUP:
            _emit(arg, rng, groups, out)
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            low, high, sub = arg
            high = low + _EXTRA if high is c.MAXREPEAT else min(high, low + _EXTRA)
            # (at least once when it may be: an optional part, a ``(…)*``, is what backtracks)
            for _ in range(rng.randint(min(low + 1, high), high)):
                _emit(sub, rng, groups, out)
        elif op is c.GROUPREF:
            out.append(groups.get(arg, ""))
        elif op is c.GROUPREF_EXISTS:
            group, yes, no = arg
            _emit(yes if group in groups else no or [], rng, groups, out)
        # AT (anchors), ASSERT, ASSERT_NOT: nothing to write


def _member(ch: str, items: Any) -> bool:
    negate = False
    hit = False
    for op, arg in items:
        if op is c.NEGATE:
            negate = True
        elif op is c.LITERAL:
            hit = hit or ord(ch) == arg
        elif op is c.RANGE:
            hit = hit or arg[0] <= ord(ch) <= arg[1]
        elif op is c.CATEGORY:
            test = _CATEGORIES.get(arg)
            hit = hit or bool(test and test(ch))
    return hit != negate
