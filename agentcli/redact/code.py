"""Where a string literal lies in code: a quoted string (with a prefix: ``@"…"``, ``r'…'``, ``f"…"``),
whether it is a format string (a template filled at run time), and the value a parallel assignment
(``a, password = "x", "y"``) gives each of its names."""

from __future__ import annotations

import re

# A line as the read and grep tools, ``cat -n`` and ``grep -n`` number it: "12: ", "  Line 12: ", "a.env:12:".
NUMBERED = r"(?:[ \t]*(?:Line |[\w./\-]+:)?\d{1,7}(?::[ \t]?|\t))?"
# A string literal's prefix: Objective-C's and C#'s ``@"…"``, Python's ``r"…"``, C's ``L"…"``.
_STRING_PREFIX = re.compile(r"(?:@|[rRbBuULfF]{1,2})(?=[\"'])")
# A format string's slots: ``{}``, ``{0}``, ``{name}``, an f-string's ``{expr}`` (not ``{{``), and
# printf's ``%s``, ``%(name)s``.
_BRACE_SLOT = re.compile(r"(?<!\{)\{[^{}\n]{0,200}\}")
_PERCENT_SLOT = re.compile(r"%(?:\(\w+\))?[-+ #0]*\d*(?:\.\d+)?[sdifrxX]")
_PERCENT_APPLIED = re.compile(r"[ \t]*%[ \t]*[\w(\[{]")
# A parallel assignment: names (a Go type after them), ``=`` or ``:=``; what may stand before the
# names on their line (``var``, ``const``, a read tool's line number); one value on the right.
_MAX_NAMES = 8
_NAME = r"[A-Za-z_$][\w$]{0,63}"
_PARALLEL = re.compile(
    NUMBERED
    + rf"[ \t]*(?:[A-Za-z]+[ \t]+){{0,2}}(?P<names>{_NAME}(?:[ \t]*,[ \t]*{_NAME}){{1,{_MAX_NAMES}}})"
    + r"(?:[ \t]+[A-Za-z_][\w.\[\]*]{0,63})?[ \t]*:?=(?!=)[ \t]*"
)
_ITEM = re.compile(r"(?:[^,;\n()\[\]{}\"'`]|\([^()\n]{0,200}\)){1,200}")
_COMMA = re.compile(r"[ \t]*,[ \t]*")
_COMMA_AFTER = re.compile(r"[ \t]*,")
_COMMA_BEFORE = re.compile(r",[ \t]*\Z")
_NAME_END = re.compile(r"(?![\w$])")
_PARALLEL_END = re.compile(r"[ \t]*(?:[;#\n]|//|\Z)")


def string(text: str, at: int) -> tuple[int, int] | None:
    """The inside of a string literal at ``at`` (``"…"``, ``@"…"``, ``r'…'``, ``f"…"``), or None."""
    prefix = _STRING_PREFIX.match(text, at)
    return quoted(text, prefix.end() if prefix else at)


def whole(text: str, close: int) -> bool:
    """Whether the string literal whose closing quote is at ``close`` ends its statement (no ``+ …``,
    no ``= None`` after a quoted annotation): a value assigned whole."""
    return _PARALLEL_END.match(text, close + 1) is not None


def formatted(text: str, at: int, inside: tuple[int, int]) -> bool:
    """Whether the string literal at ``at`` is a format string, whose slots are filled at run time
    (``f"pre_{x}"``, ``"pre_{}".format(x)``, ``"pre_%s" % x``): a template, not a value."""
    value, after = text[inside[0] : inside[1]], text[inside[1] + 1 : inside[1] + 10]
    if text[at] in "fF" and _BRACE_SLOT.search(value):
        return True
    if after.startswith(".format(") and _BRACE_SLOT.search(value):
        return True
    return bool(_PERCENT_APPLIED.match(after) and _PERCENT_SLOT.search(value))


def parallel(text: str, key: int, key_end: int) -> tuple[int, int, bool] | None:
    """A parallel assignment, ``a, password = "x", "y"`` (Go's ``var a, b string = …``, ``a, b := …``):
    the value in this name's place on the right, its span and whether it is quoted (an empty span
    when the values do not pair up with the names); None when the key is not one of such names."""
    if not (_COMMA_AFTER.match(text, key_end) or _COMMA_BEFORE.search(text, max(0, key - 8), key)):
        return None
    newline = text.rfind("\n", max(0, key - 400), key)
    if newline < 0 and key > 400:
        return None
    names = _PARALLEL.match(text, newline + 1)
    if (
        names is None
        or not names.start("names") <= key < names.end("names")
        or not _NAME_END.match(text, key_end)
    ):
        return None
    first = names.start("names")
    count = names.group("names").count(",") + 1
    index = text[first:key].count(",")
    items: list[tuple[int, int, bool]] = []
    at = names.end()
    while len(items) < count:
        if inside := string(text, at):
            items.append((*inside, True))
            at = inside[1] + 1
        elif item := _ITEM.match(text, at):
            items.append((at, item.end(), False))
            at = item.end()
        else:
            break
        comma = _COMMA.match(text, at)
        if comma is None:
            break
        at = comma.end()
    if len(items) != count or not _PARALLEL_END.match(text, at):
        return (key_end, key_end, False)
    return items[index]


def quoted(text: str, at: int) -> tuple[int, int] | None:
    """The inside of a quoted string starting at ``at`` (on one line; ``\\"`` inside JSON too)."""
    if text.startswith('\\"', at):
        end = text.find('\\"', at + 2, at + 520)
        return (at + 2, end) if end > 0 and "\n" not in text[at:end] else None
    quote = text[at : at + 1]
    if quote not in ('"', "'", "`"):
        return None
    end = at + 1
    while end < len(text) and end - at < 520:
        c = text[end]
        if c == quote:
            return (at + 1, end)
        if c == "\n":
            return None
        end += 2 if c == "\\" and quote == '"' else 1
    return None


def balanced(v: str) -> bool:
    """Whether the brackets of ``v`` pair up, as code's do."""
    stack: list[str] = []
    for c in v:
        if c in "([{":
            stack.append({"(": ")", "[": "]", "{": "}"}[c])
        elif c in ")]}" and (not stack or stack.pop() != c):
            return False
    return not stack


# An entry of a program's ``--help`` listing: indented options (``-W, --password``), perhaps a
# metavariable (``=FILE``, ``<user:password>``, ``[ARG]``), then the column of its description: two or
# more spaces (one after ``<…>``, as curl aligns) before two words of prose.
_HELP_ENTRY = re.compile(
    r"[ \t]*(?:-[\w?], ?)*--?\w[\w-]*"
    r"(?:(?:[ =]?(?:\[[^\]\n]{1,40}\]|[A-Z][A-Z_]*))?(?: {2,}|\t)|[ =]?<[^>\n]{1,40}> +)"
    r"[ \t]*(?=[A-Za-z][a-z]*[ \t]+[A-Za-z(])"
)


_HELP_COLUMN = 80  # an option's entry starts its line and is this long at most


def help_entry(text: str, key: int) -> bool:
    """The key at ``key`` is an option a ``--help`` listing describes (``-W, --password   force password
    prompt``): what follows is its description, not a value (``--password  s3cr3t \\`` on a command's
    continued line has no prose after it)."""
    line = text.rfind("\n", max(0, key - _HELP_COLUMN), key) + 1  # (bounded: linear on a long line)
    if line == 0 and key > _HELP_COLUMN:
        return False
    m = _HELP_ENTRY.match(text, line, key + _HELP_COLUMN)
    return m is not None and key < m.end()


def flag(text: str, key: int) -> bool:
    """A command-line option: ``--password`` or PowerShell's and Java's one-dash ``-Password``."""
    return text.startswith("--", key) or (text.startswith("-", key) and (key == 0 or text[key - 1] in " \t"))
