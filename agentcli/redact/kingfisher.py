"""kingfisher's published rules (MongoDB, Apache-2.0, see ``kingfisher_LICENSE``; they grew from Nosey
Parker's, see ``kingfisher_NOTICE``), a second well-kept rule set beside gitleaks', loaded as data.

``kingfisher_rules.yml`` is kingfisher's ``data/rules/*.yml`` verbatim; ``kingfisher.json`` its digest
(per rule: id, Rust regex, ``min_entropy``, whether kingfisher reports it, and the keywords derived from
the regex: literals one of which every match holds). Both are written by
``scripts/refresh_kingfisher_rules.py``; a test checks they agree. Nothing is read at import: the
digest, the keyword automaton and each regex load on first use, so ``agentcli run`` starts as fast.

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

from ahocorasick_rs import AhoCorasick, Implementation

from agentcli.redact.gitleaks import windows
from agentcli.redact.judge import entropy

RULES_FILE = Path(__file__).with_name("kingfisher_rules.yml")
RULES_JSON = Path(__file__).with_name("kingfisher.json")
_GENERIC_FILES = frozenset({"generic.yml"})
_FLAGS = re.compile(r"\(\?([imsx]+)\)")
_NAMED = re.compile(r"\(\?<(?=[A-Za-z_])")


def translate(pattern: str) -> str:
    """A Rust regex as Python's: each flag group (``(?x)``, a mid-pattern ``(?i)``) applies to the whole
    pattern (Python takes flags only at the start; kingfisher's put them there but for a few that make
    the rest case-insensitive: a superset), and ``(?<name>…)`` is ``(?P<name>…)``."""
    flags: set[str] = set()

    def take(m: re.Match[str]) -> str:
        flags.update(m.group(1))
        return ""

    body = _NAMED.sub("(?P<", _FLAGS.sub(take, pattern))
    return f"(?{''.join(sorted(flags))})" + body if flags else body


@dataclass(frozen=True)
class KingfisherRule:
    id: str
    kind: str  # the placeholder's name: the rule's file (``[REDACTED:weatherbit]``)
    source: str
    min_entropy: float
    keywords: tuple[str, ...]
    width: int  # the longest text a match can span (0: unbounded)

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(translate(self.source))


def _prefilter(keyword: str) -> bool:
    """A keyword rare enough to decide where a regex runs: not ``key`` or ``app``, but ``r8_``."""
    return len(keyword) >= 4 or (len(keyword) == 3 and not keyword.isalpha())


@dataclass(frozen=True)
class _Loaded:
    rules: tuple[KingfisherRule, ...]
    keywords: list[str]
    by_keyword: dict[str, list[int]]
    scan: AhoCorasick


@functools.cache
def _loaded() -> _Loaded:
    rules = []
    for spec in json.loads(RULES_JSON.read_text())["rules"]:
        keywords = spec["keywords"]
        usable = keywords and all(map(_prefilter, keywords))
        if spec["shown"] and spec["file"] not in _GENERIC_FILES and usable:
            kind = re.sub(r"[^a-z0-9]+", "-", spec["file"].removesuffix(".yml").lower()).strip("-")
            rule = KingfisherRule(
                spec["id"], kind, spec["pattern"], spec["min_entropy"], tuple(keywords), spec["width"]
            )
            rules.append(rule)
    by_keyword: dict[str, list[int]] = {}
    for n, rule in enumerate(rules):
        for k in rule.keywords:
            by_keyword.setdefault(k, []).append(n)
    keywords = sorted(by_keyword)
    scan = AhoCorasick(keywords, implementation=Implementation.DFA)
    return _Loaded(tuple(rules), keywords, by_keyword, scan)


def rules() -> tuple[KingfisherRule, ...]:
    return _loaded().rules


def find(text: str, lower: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, kind) of each token kingfisher's rules find; ``lower`` is ``text`` lower-cased (the
    same length)."""
    loaded = _loaded()
    places: dict[int, list[int]] = {}
    for index, start, _ in loaded.scan.find_matches_as_indexes(lower, overlapping=True):
        for n in loaded.by_keyword[loaded.keywords[index]]:
            places.setdefault(n, []).append(start)
    for n, where in places.items():
        rule = loaded.rules[n]
        where.sort()
        for start, end in _around(len(text), where, rule.width) if rule.width else windows(text, where, True):
            for m in rule.pattern.finditer(text, start, end):
                span = _token(m)
                if span and entropy(text[span[0] : span[1]]) >= rule.min_entropy:
                    yield (*span, rule.kind)


def _around(size: int, where: list[int], width: int) -> Iterator[tuple[int, int]]:
    """Merged spans reaching ``width`` (a match's longest) and one more character either side of each
    keyword place: every match holds a keyword, so every match lies in one, and none is cut short by a
    span's end (a cut match would be longer than ``width``)."""
    reach = width + 1
    begin = end = -1
    for place in where:
        s, e = max(0, place - reach), min(size, place + reach)
        if s <= end:
            end = e
            continue
        if end > begin:
            yield begin, end
        begin, end = s, e
    if end > begin:
        yield begin, end


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
