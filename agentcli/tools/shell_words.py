"""The words of a bash command as bash itself will see them, for the permission rules.

A tree-sitter word node becomes the word(s) bash passes to the command: quotes removed, ``$'…'``
(ANSI-C quoting) decoded, backslash escapes and backslash-newline resolved, brace expansion done
(``r{m,}`` is ``rm r``). What depends on the run (a variable, a substitution) is marked ``dynamic``;
an unquoted ``*``, ``?`` or ``[…]`` is marked as a pattern bash matches against files, with the
files it could name on this machine. Quoted characters travel escaped (a backslash before them) until
the end, so a quoted ``{a,b}`` or ``*`` is not expanded, as in bash.
"""

from __future__ import annotations

import glob
import os
import re
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from tree_sitter import Node

MAX_WORDS = 256  # brace expansions we spell out before calling a word undecidable
MAX_CANDIDATES = 64  # files a command-name pattern may name that we check


class Word(NamedTuple):  # a tuple: made for every word of every checked line, so it must be cheap
    text: str  # as the command receives it; the source text where it is only known at run time
    dynamic: bool = False  # built from a variable, a substitution or a placeholder filled at run time
    pattern: str | None = None  # a glob bash matches against files (Python glob syntax), if any


_DYNAMIC = frozenset(
    {"command_substitution", "simple_expansion", "expansion", "process_substitution", "arithmetic_expansion"}
)
# Characters that mean something to brace expansion or globbing; quoted ones are escaped to stay literal.
_QUOTE = str.maketrans({c: "\\" + c for c in "\\{},*?[]"})
_UNESCAPE = re.compile(r"\\(.)", re.S)
_DQ_ESCAPE = re.compile(r'\\([\\"$`\n])')  # the only escapes inside double quotes
_ANSI = re.compile(
    r"\\(?:x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{1,4})|U([0-9a-fA-F]{1,8})|([0-7]{1,3})|c(.)|(.))", re.S
)
_ANSI_SIMPLE = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
    "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip


def text(node: Node, data: bytes) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


def is_dynamic(node: Node) -> bool:
    if node.type in _DYNAMIC:
        return True
    return any(is_dynamic(c) for c in node.children)


def _ansi_char(m: re.Match[str]) -> str:
    hex2, u4, u8, octal, ctrl, other = m.groups()
    if hex2 or u4 or u8:
        return chr(min(int(hex2 or u4 or u8, 16), 0x10FFFF))
    if octal:
        return chr(int(octal, 8) & 0xFF)
    if ctrl:
        return chr(ord(ctrl.upper()) ^ 0x40)
    return _ANSI_SIMPLE.get(other, "\\" + other)


def ansi_c(body: str) -> str:
    """The value of ``$'body'``."""
    return _ANSI.sub(_ansi_char, body) if "\\" in body else body


def _string_parts(node: Node, data: bytes) -> list[str]:
    """The literal value of each piece of a double-quoted string; expansions as their source."""
    out = []
    for child in node.children:
        if child.type == "string_content":
            out.append(_DQ_ESCAPE.sub(r"\1", text(child, data)))
        elif child.type != '"':
            out.append(text(child, data))
    return out


def _escaped(node: Node, data: bytes) -> str | None:
    """The word in escaped form (quoted characters behind a backslash), or None if dynamic."""
    kind = node.type
    if kind in ("word", "number", "brace_expression"):
        return text(node, data).replace("\\\n", "")
    if kind == "raw_string":
        return text(node, data)[1:-1].translate(_QUOTE)
    if kind == "ansi_c_string":
        return ansi_c(text(node, data)[2:-1]).translate(_QUOTE)
    if kind in ("string", "translated_string"):
        if is_dynamic(node):
            return None
        inner = node.children[-1] if kind == "translated_string" else node
        return "".join(_string_parts(inner, data)).translate(_QUOTE)
    if kind == "concatenation":
        parts = [_escaped(c, data) for c in node.children]
        known = [p for p in parts if p is not None]
        return "".join(known) if len(known) == len(parts) else None
    return None


def _shown(node: Node, data: bytes) -> str:
    """A dynamic word as close to what bash passes as we can say: quotes off, expansions as written."""
    if node.type == "string":
        return "".join(_string_parts(node, data))
    if node.type == "concatenation":
        out = []
        for child in node.children:
            esc = _escaped(child, data)
            out.append(_shown(child, data) if esc is None else unescape(esc))
        return "".join(out)
    return text(node, data)


def unescape(escaped: str) -> str:
    return _UNESCAPE.sub(r"\1", escaped) if "\\" in escaped else escaped


_SPECIAL = re.compile(r"[\\{*?\[]")
_GLOB = re.compile(r"[*?\[]")


def is_plain(word: str) -> bool:
    """A bare word with nothing for bash to resolve (no escape, brace or glob); find's ``{}`` too."""
    return _SPECIAL.search(word) is None or word == "{}"


def words(node: Node, data: bytes) -> list[Word] | None:
    """The words one node becomes (several after brace expansion); None if there are too many."""
    if node.type == "word":
        plain = text(node, data)
        if is_plain(plain):
            return [Word(plain)]
    escaped = _escaped(node, data)
    if escaped is None:
        return [Word(_shown(node, data), dynamic=True)]
    expanded = expand_braces(escaped) if "{" in escaped else [escaped]
    if expanded is None:
        return None
    return [Word(unescape(e), pattern=glob_pattern(e)) for e in expanded]


def _closing(s: str, start: int) -> tuple[int, list[int]] | None:
    """The index of the brace closing the one at ``start`` and its top-level commas."""
    depth, i = 0, start
    commas: list[int] = []
    while i < len(s):
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i, commas
        elif c == "," and depth == 1:
            commas.append(i)
        i += 1
    return None


_SEQUENCE = re.compile(r"(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?")


class _TooMany(Exception):
    """A brace expansion longer than MAX_WORDS: not spelled out."""


def _sequence(body: str) -> list[str] | None:
    """``1..3`` → 1 2 3, ``a..c``, ``1..10..2``; None if ``body`` is not a sequence."""
    m = _SEQUENCE.fullmatch(body)
    if m is None:
        return None
    first, last, step_text = m.groups()
    numeric = first.lstrip("-").isdigit()
    if numeric != last.lstrip("-").isdigit():
        return None
    step = abs(int(step_text or 1)) or 1
    lo, hi = (int(first), int(last)) if numeric else (ord(first), ord(last))
    if abs(hi - lo) // step > MAX_WORDS:
        raise _TooMany
    values = range(lo, hi + (1 if hi >= lo else -1), step if hi >= lo else -step)
    return [str(v) if numeric else chr(v) for v in values]


def _alternatives(word: str, start: int) -> tuple[int, list[str]] | None:
    """The brace group opening at ``start``: where it ends and what it expands to, if it expands."""
    found = _closing(word, start)
    if found is None:
        return None
    end, commas = found
    if commas:
        cuts = [start, *commas, end]
        return end, [word[a + 1 : b] for a, b in zip(cuts, cuts[1:], strict=False)]
    sequence = _sequence(word[start + 1 : end])
    return None if sequence is None else (end, sequence)


def expand_braces(s: str) -> list[str] | None:
    """Bash's brace expansion of an escaped word: ``a{b,c}d`` → ``abd acd``, ``{1..3}``; None if it
    makes more than MAX_WORDS words."""
    todo, done = [s], []
    try:
        while todo:
            word = todo.pop()
            i = 0
            while i < len(word):
                if word[i] == "\\":
                    i += 2
                    continue
                if word[i] == "{" and (group := _alternatives(word, i)) is not None:
                    end, alternatives = group
                    todo.extend(word[:i] + alt + word[end + 1 :] for alt in reversed(alternatives))
                    break
                i += 1
            else:
                done.append(word)
            if len(done) + len(todo) > MAX_WORDS:
                return None
    except _TooMany:
        return None
    return done


def glob_pattern(escaped: str) -> str | None:
    """The word as a Python glob if bash would match it against files (an unquoted ``*``, ``?``, ``[…]``)."""
    if _GLOB.search(escaped) is None:
        return None
    out, magic, i = [], False, 0
    while i < len(escaped):
        c = escaped[i]
        if c == "\\" and i + 1 < len(escaped):
            nxt = escaped[i + 1]
            out.append(f"[{nxt}]" if nxt in "*?[]" else nxt)
            i += 2
            continue
        if c in "*?" or (c == "[" and "]" in escaped[i + 2 :]):
            magic = True
        out.append(c)
        i += 1
    return "".join(out) if magic else None


def command_candidates(pattern: str) -> list[str]:
    """The commands a command-name pattern could run: files it matches (a path), or commands on
    PATH it matches (a bare name is matched in the working directory, where any name may appear)."""
    if "/" in pattern:
        found = glob.glob(os.path.expanduser(pattern))
    else:
        found = []
        for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
            found += [os.path.basename(p) for p in glob.glob(os.path.join(glob.escape(folder), pattern))]
            if len(found) > MAX_CANDIDATES:
                break
    return sorted(set(found))[:MAX_CANDIDATES]


def pipe_to(value: Word) -> Word | None:
    """A file name that opens a pipe: ``|cmd`` or ``!cmd`` runs ``cmd`` (strace -o, perl's open, gawk's
    ``print > "|cmd"``). Any option's file value is read so, whatever the program: a real file whose name
    starts with ``|`` is rare, and judging it as the command line costs at most a question."""
    if value.text[:1] in ("|", "!") and value.text[1:].strip():
        return Word(value.text[1:], dynamic=value.dynamic)
    return None
