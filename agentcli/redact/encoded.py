"""Secrets hidden by an encoding. Base64 runs and URL-encoded text are decoded and searched like any
other text (by the caller's ``find``, one level deeper); a secret found inside redacts its encoded
form — the whole base64 run (a part of one decodes to nothing), or just the encoded characters of the
secret in URL-encoded text (the rest of a URL stays readable). Base64 that decodes to readable text
with no secret, or to a file (an image, a font, an SSH public key), is public material instead.
"""

from __future__ import annotations

import binascii
import bisect
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from agentcli.redact.judge import is_file_data, is_text

Finder = Callable[[str, int], list[tuple[int, int, str]]]

# Base64 characters as ``a``, ``=`` as itself, anything else as a space: a regex starting with a
# literal then skips ahead in C (see rules.TOKEN_CHARS for the same trick).
_B64_MAP = bytes(
    b"a"[0] if chr(i).isascii() and (chr(i).isalnum() or chr(i) in "+/") else i if chr(i) == "=" else b" "[0]
    for i in range(256)
)
_B64_MIN = 12  # "user:pass" is 12 characters of base64
_B64_RUN = re.compile(b"a" * _B64_MIN + b"a*={0,2}")
_BLOCK_LINE = 60  # MIME wraps base64 at 76 characters, PEM at 64
_LINE_PREFIX = re.compile(r"[ \t]*(?:(?:Line )?\d{1,7}(?::[ \t]?|\t)[ \t]*)?")
_NEXT_LINE = re.compile(r"\r?\n[ \t]*(?:(?:Line )?\d{1,7}(?::[ \t]?|\t)[ \t]*)?")
_USER_PASS = re.compile(r"[\w.@+\-]{1,64}:(?!//)[^\s:][^\n]{3,}")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}|\+")
_URL_RUN = re.compile(r"[^\s\"'<>`]*")
_SEPARATOR = "\n\0\n"  # between decoded texts searched together: no pattern matches across it
# What ends a URL-encoded run either way: any whitespace (as ``_URL_RUN``'s ``\s``) and these. The same
# set both ways: a run's start looked for past a form feed or a no-break space its end stopped at read
# 4 KB back from each of a line of ``%41\xa0`` (32 KB took 12 s).
_URL_QUOTES = frozenset("\"'<>`")


@dataclass
class Decoded:
    findings: list[tuple[int, int, str]] = field(default_factory=list)
    public: list[tuple[int, int]] = field(default_factory=list)  # base64 of text or of a file


def base64_runs(text: str, ascii: bytes, find: Finder, depth: int) -> Decoded:
    """Each base64 run of ``text``: a finding if its decoded text holds a secret (or is a
    ``user:password`` pair, as in HTTP Basic and Docker's ``auth``), public if it decodes to other
    text or to a file, and a block of equal lines (a MIME attachment) is public as a whole.
    ``ascii`` is ``text`` encoded one byte a character (anything else as ``?``)."""
    out = Decoded()
    mapped = ascii.translate(_B64_MAP)
    runs = [m.span() for m in _B64_RUN.finditer(mapped)]
    lines = [(s, e) for s, e in runs if e - s >= _BLOCK_LINE and _line_alone(text, s, e)]
    # Base64 comes in whole quanta of 4; a long run cut short (a tool output truncated mid-way)
    # decodes up to its last whole one. Short ones are words and paths: not worth decoding.
    texts: list[tuple[int, int, str]] = []
    for start, end in [(s, e) for s, e in runs if not (e - s) % 4 or e - s >= 64]:
        try:
            raw = binascii.a2b_base64(text[start : end - (end - start) % 4])
        except binascii.Error:
            continue
        if is_text(raw):
            texts.append((start, end, raw.decode("ascii")))
        elif is_file_data(raw):
            out.public.append((start, end))
    for (start, end, decoded), inner in zip(
        texts, _search_all([t for _, _, t in texts], find, depth), strict=True
    ):
        if inner:
            out.findings.append((start, end, inner[0][2]))
        elif _USER_PASS.fullmatch(decoded.strip()):
            out.findings.append((start, end, "basic-auth"))
        else:
            out.public.append((start, end))
    out.public += _blocks(text, lines)
    return out


def _line_alone(text: str, start: int, end: int) -> bool:
    """A run alone on its line (after indentation or a line number as the read tool adds)."""
    if end < len(text) and text[end] not in "\r\n":
        return False
    line = text.rfind("\n", max(0, start - 24), start) + 1
    return (line > 0 or start < 24) and _LINE_PREFIX.fullmatch(text, line, start) is not None


def _blocks(text: str, lines: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """Three or more consecutive lines of base64 of one length (the last may be shorter): encoded
    data wrapped for mail or PEM, not a key (PEM private keys are a rule of their own)."""
    i = 0
    while i < len(lines):
        j = i + 1
        width = lines[i][1] - lines[i][0]
        while (
            j < len(lines)
            and _NEXT_LINE.fullmatch(text, lines[j - 1][1], lines[j][0])
            and lines[j - 1][1] - lines[j - 1][0] == width
            and lines[j][1] - lines[j][0] <= width
        ):
            j += 1
        if j - i >= 3:
            yield (lines[i][0], lines[j - 1][1])
        i = j


def url_encoded(text: str, find: Finder, depth: int) -> list[tuple[int, int, str]]:
    """Secrets inside URL-encoded runs (``%3A``, ``%40``, ``+``), mapped back onto the encoded text."""
    runs: list[tuple[int, str, list[int]]] = []
    done = 0
    for m in _PERCENT.finditer(text):
        if m.start() < done:
            continue
        start = m.start()
        while start > 0 and m.start() - start < 4096:
            if (c := text[start - 1]) in _URL_QUOTES or c.isspace():
                break
            start -= 1
        run = _URL_RUN.match(text, m.start())  # always matches (it may be empty)
        done = run.end() if run else m.end()
        runs.append((start, *_unquote(text[start:done])))
    found: list[tuple[int, int, str]] = []
    for (start, _, where), inner in zip(runs, _search_all([r[1] for r in runs], find, depth), strict=True):
        found += [(start + where[s], start + where[e], kind) for s, e, kind in inner]
    return found


def _search_all(texts: list[str], find: Finder, depth: int) -> list[list[tuple[int, int, str]]]:
    """``find`` on each of ``texts``, in one call on them joined (one keyword scan, not one each):
    many small decoded texts cost what one large one does. The separator ends any match."""
    if not texts:
        return []
    starts = [0]
    for t in texts:
        starts.append(starts[-1] + len(t) + len(_SEPARATOR))
    out: list[list[tuple[int, int, str]]] = [[] for _ in texts]
    for s, e, kind in find(_SEPARATOR.join(texts), depth - 1):
        i = bisect.bisect_right(starts, s) - 1
        out[i].append((s - starts[i], min(e - starts[i], len(texts[i])), kind))
    return out


def _unquote(run: str) -> tuple[str, list[int]]:
    """``run`` URL-decoded (byte by byte as Latin-1, ``+`` as a space), and where each decoded
    character came from in ``run`` (one more entry: the end)."""
    parts: list[str] = []
    where: list[int] = []
    at = 0
    for m in _ESCAPE.finditer(run):
        parts.append(run[at : m.start()])
        where.extend(range(at, m.start()))
        parts.append(" " if m.group() == "+" else chr(int(m.group()[1:], 16)))
        where.append(m.start())
        at = m.end()
    parts.append(run[at:])
    where.extend(range(at, len(run) + 1))
    return "".join(parts), where
