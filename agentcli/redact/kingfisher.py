"""kingfisher's published rules (MongoDB, Apache-2.0, see ``kingfisher_LICENSE``; they grew from Nosey
Parker's, see ``kingfisher_NOTICE``), a second well-kept rule set beside gitleaks', loaded as data.

``kingfisher.json`` is the digest of kingfisher's ``data/rules/*.yml`` (per rule: id, Rust regex,
``min_entropy``, whether kingfisher reports it, and the keywords derived from the regex: literals one of
which every match holds), the one file read at run time. The rules themselves, verbatim, are the
digest's source, kept beside ``scripts/refresh_kingfisher_rules.py`` (``scripts/data/``), which
writes both; a test checks they agree. Nothing is read at import: the
digest (whose keywords join the caller's one Aho-Corasick pass) and each regex load on first use, so
``agentcli run`` starts as fast.

Most of kingfisher's rules are "a vendor's name, within a few characters a credential word, then a
token of a given shape" (``weatherbit … KEY … [0-9a-z]{32}``): the vendor's name is the keyword, and a
rule's regex runs only around where it occurs (as gitleaks' do). A match counts when its token (the
first group that matched, kingfisher's ``{{ TOKEN }}``, else the whole match) reaches the rule's
``min_entropy``; the caller's placeholder judge runs on it as on every finding. Used: the rules
kingfisher reports (not its hidden helpers nor identifiers) with a keyword that is rare enough to be a
prefilter (4+ characters, or 3 holding a non-letter: a token prefix such as ``r8_``); not its generic
rules (``generic.yml``: ``secret … <hex>``, weak passwords), whose job the key=value and keyword-context
judges do with references and prose in mind, as gitleaks' generic rule is skipped.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from agentcli.redact.gitleaks import merged, places_by_rule, windows
from agentcli.redact.judge import entropy

RULES_JSON = Path(__file__).with_name("kingfisher.json")
_GENERIC_FILES = frozenset({"generic.yml"})
_FLAGS = re.compile(r"\(\?([imsx]+)\)")
_NAMED = re.compile(r"\(\?<(?=[A-Za-z_])")


def translate(pattern: str) -> str:
    """A Rust regex as Python's: each flag group (``(?x)``, a mid-pattern ``(?i)``) applies to the whole
    pattern (Python takes flags only at the start; kingfisher's put them there but for a few that make
    the rest case-insensitive: a superset), ``(?<name>…)`` is ``(?P<name>…)``, and ``(?:.|[\\n\\r])``
    is ``[\\s\\S]``."""
    flags: set[str] = set()

    def take(m: re.Match[str]) -> str:
        flags.update(m.group(1))
        return ""

    body = _NAMED.sub("(?P<", _FLAGS.sub(take, pattern)).replace(_ANY_CHAR, r"[\s\S]")
    for ambiguous, one_way in _ONE_WAY.items():
        body = body.replace(ambiguous, one_way)
    return f"(?{''.join(sorted(flags))})" + body if flags else body


# A run of ``//`` comments as gradle's rule writes it, ``(?:\s*//.*)*``: ``.`` takes ``//`` too, so a
# line of ``// // //…`` splits into comments 2^n ways, each tried when what follows fails (300 characters
# took 1.7 s, 500 never ended). The same language with each character taken one way: a comment, then
# any character of its line or a line end followed by the next comment.
_ONE_WAY = {r"(?:\s*//.*)*": r"(?:\s*//(?:.|\n\s*//)*)?"}
# "any character but a line end, or a line end": any character, written as one class, which Python's
# engine steps through faster than an alternation (kingfisher's ``(?:.|[\n\r]){0,32}?``: ~1.2x).
_ANY_CHAR = r"(?:.|[\n\r])"


@dataclass(frozen=True)
class KingfisherRule:
    id: str
    kind: str  # the placeholder's name: the rule's file (``[REDACTED:weatherbit]``)
    source: str
    min_entropy: float
    keywords: tuple[str, ...]
    width: int  # the longest text a match can span (0: unbounded)
    before: int  # how far into a match a keyword may start at most (0: at its start; -1: unbounded)

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(translate(self.source))


def _prefilter(keyword: str) -> bool:
    """A keyword rare enough to decide where a regex runs: not ``key`` or ``app``, but ``r8_``."""
    return len(keyword) >= 4 or (len(keyword) == 3 and not keyword.isalpha())


@dataclass(frozen=True)
class _Loaded:
    rules: tuple[KingfisherRule, ...]
    by_keyword: dict[str, list[int]]


@functools.cache
def _loaded() -> _Loaded:
    rules = []
    for spec in json.loads(RULES_JSON.read_text())["rules"]:
        keywords = spec["keywords"]
        usable = keywords and all(map(_prefilter, keywords))
        if spec["shown"] and spec["file"] not in _GENERIC_FILES and usable:
            kind = re.sub(r"[^a-z0-9]+", "-", spec["file"].removesuffix(".yml").lower()).strip("-")
            fields = (spec["pattern"], spec["min_entropy"], tuple(keywords), spec["width"], spec["before"])
            rules.append(KingfisherRule(spec["id"], kind, *fields))
    by_keyword: dict[str, list[int]] = {}
    for n, rule in enumerate(rules):
        for k in rule.keywords:
            by_keyword.setdefault(k, []).append(n)
    return _Loaded(tuple(rules), by_keyword)


def rules() -> tuple[KingfisherRule, ...]:
    return _loaded().rules


def keywords() -> list[str]:
    """Every used rule's keywords (lower case), for the caller's one Aho-Corasick pass."""
    return sorted(_loaded().by_keyword)


def find(text: str, at: dict[str, list[int]]) -> Iterator[tuple[int, int, str]]:
    """(start, end, kind) of each token kingfisher's rules find; ``at`` maps keywords to where they
    occur in the lower-cased text (the same length as ``text``; other keywords are ignored)."""
    loaded = _loaded()
    for n, where in places_by_rule(loaded.by_keyword, at).items():
        rule = loaded.rules[n]
        where.sort()
        for m in _matches(rule, text, where):
            span = _token(m)
            if span and entropy(text[span[0] : span[1]]) >= rule.min_entropy:
                yield (*span, rule.kind)


def _matches(rule: KingfisherRule, text: str, where: list[int]) -> Iterator[re.Match[str]]:
    """What the rule's regex finds in ``text``, tried only where it can match: at each keyword's
    start for a regex that starts with one, else around each keyword (as far as a match reaches)."""
    if rule.before == 0:
        end = 0
        for place in where:
            if place >= end and (m := _match_from(rule, text, place)):
                end = m.end()
                yield m
        return
    if rule.width:
        spans = _around(len(text), where, rule.before if rule.before > 0 else rule.width, rule.width)
    else:
        spans = windows(text, where, True)
    for start, stop in spans:
        for m in rule.pattern.finditer(text, start, stop):
            # a match of no bounded length that reaches its window's end may go on past it
            yield (rule.pattern.match(text, m.start()) or m) if m.end() == stop < len(text) else m


# How far a try of a regex of no bounded length reads (a match reaching that far is tried again
# unbounded): ``$krb5asrep$23$(?:[^:]+:)?…`` read to the text's end from each of a line of its keyword,
# quadratic. A PEM block's rule reads as far as public.py looks for a block's end.
_REACH = 1024
_BLOCK_REACH = 65_536


def _match_from(rule: KingfisherRule, text: str, place: int) -> re.Match[str] | None:
    if rule.width:
        return rule.pattern.match(text, place)
    stop = place + (_BLOCK_REACH if "-----END" in rule.source else _REACH)
    m = rule.pattern.match(text, place, stop)
    return (rule.pattern.match(text, place) or m) if m and m.end() == stop < len(text) else m


def _around(size: int, where: list[int], before: int, width: int) -> Iterator[tuple[int, int]]:
    """Merged spans from ``before`` (how far into a match its keyword starts at most) to ``width`` (a
    match's longest) around each keyword place, and one more character either side: every match holds
    a keyword, so every match lies in one, and none is cut short by a span's end (a cut match would be
    longer than ``width``)."""
    return merged((max(0, place - before - 1), min(size, place + width + 1)) for place in where)


def _token(m: re.Match[str]) -> tuple[int, int] | None:
    """The first group that matched, else the match; of a URI with ``user:password@``, the password
    (the user and the host stay readable, as agentcli's own URL rule leaves them)."""
    span = next((m.span(g) for g in range(1, (m.re.groups or 0) + 1) if m.group(g)), m.span())
    if span[0] == span[1]:
        return None
    if userinfo := _USERINFO.match(m.string, span[0], span[1]):
        return userinfo.span(1)
    return span


_USERINFO = re.compile(r"[a-z][a-z0-9+.\-]*://[^\s:/@]*:([^\s/@]+)@", re.I)
