"""gitleaks' published rule set (``gitleaks.json``: its ``config/gitleaks.toml`` as JSON, MIT, see
``gitleaks_LICENSE``; the TOML itself is kept in ``scripts/data/``), loaded as data.

Each rule has a Go RE2 regex, keywords, an optional entropy threshold and allowlists. The regexes
are translated to Python's ``re`` (``translate``); the keywords feed the caller's one Aho-Corasick
pass, and a rule's regex runs only on the lines around where one of its keywords occurs (gitleaks
runs it on the whole file: in Python, 200 regexes over a megabyte would cost seconds). A match
counts when its secret (the rule's ``secretGroup``, else the first group that matched, else the
whole match) passes the rule's entropy threshold and no allowlist (the global one and the rule's:
regexes on the secret, the match or the line, and stopwords) allows it — as gitleaks decides.

Refresh the rules with ``scripts/refresh_gitleaks_rules.py`` (see docs/redaction.md).
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

RULES_JSON = Path(__file__).with_name("gitleaks.json")  # the TOML's data, parsed 60x faster
# Rules with a ``path`` hold only in files of their kind (``password = "…"`` in a .tf file): they are
# skipped, having no path here. So is the generic rule, whose keywords (``key``, ``api``, ``access``)
# are in every line of code: the key=value judge (keyvalue.py) does its job, with prose and
# references in mind.
_SKIPPED = frozenset({"generic-api-key"})
# How far from a keyword a rule's regex looks (on the keyword's line, or lines for PEM-like rules).
_BEFORE, _AFTER = 256, 2048
# Windows merge up to this size (overlapping past it): a regex's cost can grow faster than its
# window, and a long line full of a keyword must not make one window of it.
_MERGED = 4096


@dataclass(frozen=True)
class Allow:
    sources: tuple[str, ...]  # regexes, compiled on first use (most never are: see GitleaksRule)
    stopwords: tuple[str, ...]
    target: str  # what the regexes are tried on: "secret", "match" or "line"
    every: bool  # "AND": all its conditions must hold

    @cached_property
    def regexes(self) -> tuple[re.Pattern[str], ...]:
        return tuple(_compile(r) for r in self.sources)


@dataclass(frozen=True)
class GitleaksRule:
    """A rule runs only where one of its keywords occurs, so its regex is compiled on first use:
    compiling all 200-odd at import took a third of the startup that ``agentcli run`` adds."""

    id: str
    source: str  # the regex, translated to Python's syntax
    keywords: tuple[str, ...]
    entropy: float
    group: int
    allows: tuple[Allow, ...]
    multiline: bool  # the regex can match across a line end
    lead: re.Pattern[str] | None = None  # must occur within the 5 lines before a match (see _LEADS)

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(self.source)


def translate(regex: str) -> str:
    """A Go RE2 regex as a Python ``re`` one: RE2 lets ``(?i)`` stand anywhere and apply to the rest
    of its group (Python only at the start: it becomes a scoped ``(?i:…)`` group); ``\\z`` is ``\\Z``;
    a POSIX class (``[:alnum:]``) is spelled out; a ``[`` or a doubled set operator inside
    a class is a literal."""
    out: list[str] = []
    scoped: list[list[str]] = [[]]  # per open group: the flag groups opened in it, still open
    i, in_class = 0, False
    while i < len(regex):
        c = regex[i]
        if c == "\\":
            pair = regex[i : i + 2]
            out.append(r"\Z" if pair == r"\z" else pair)
            i += 2
        elif in_class:
            if c == "]":
                in_class = False
                out.append(c)
            elif posix := _POSIX_CLASS.match(regex, i):
                out.append(_POSIX[posix.group(1)])
                i = posix.end() - 1
            elif c == "[":
                out.append(r"\[")
            elif c in "&~|" and regex[i + 1 : i + 2] == c:
                out.append("\\" + c)
            else:
                out.append(c)
            i += 1
        elif c == "[":
            in_class = True
            head = "[^" if regex.startswith("[^", i) else "["
            out.append(head)
            i += len(head)
            if regex[i : i + 1] == "]":  # a leading ] is a literal
                out.append(r"\]")
                i += 1
        elif flags := _FLAGS.match(regex, i):
            spec = flags.group(1).replace("U", "")
            if i == 0 and "-" not in spec:
                out.append(f"(?{spec})")
            else:
                out.append(f"(?{spec}:")
                scoped[-1].append(spec)
            i = flags.end()
        else:
            if c == "(":
                scoped.append([])
                out.append(c)
            elif c == ")":
                out.append(")" * len(scoped.pop() if len(scoped) > 1 else []) + ")")
            elif c == "|" and scoped[-1]:  # RE2's flags hold across the alternatives of their group
                out.append(")" * len(scoped[-1]) + "|" + "".join(f"(?{f}:" for f in scoped[-1]))
            else:
                out.append(c)
            i += 1
    out.append(")" * len(scoped[0]))
    return "".join(out)


_POSIX_CLASS = re.compile(r"\[:(\w+):\]")
_POSIX = {
    "alnum": "A-Za-z0-9",
    "alpha": "A-Za-z",
    "digit": "0-9",
    "lower": "a-z",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
    "word": r"\w",
    "space": r"\s",
    "blank": r" \t",
    "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
}
# A rule whose secret spans lines: DOTALL, ``[\s\S]``, an explicit line end (not gitleaks' ``\\[nr]``,
# an escaped one in JSON). A trailing ``\s`` only ends a match at its line's end.
_MULTILINE = re.compile(r"\(\?[a-z]*s|\[\\s\\S|\\r|(?<!\\)\\n")
_FLAGS = re.compile(r"\(\?([imsU-]+)\)")


def _without_ignored_prefix(regex: str) -> str:
    """``regex`` less the ``[\\w.-]{0,50}?`` gitleaks puts before a key (the identifier's rest, never
    part of the secret): RE2 runs it in linear time, Python's backtracking tries 50x50 ways at every
    position — seconds on a long line full of the keyword."""
    while True:
        for head in ("", "(?i)", "(?i:"):
            if regex.startswith(head + _IGNORED):
                regex = head + regex[len(head + _IGNORED) :]
                break
        else:
            return regex


_IGNORED = r"[\w.-]{0,50}?"
# "``curl``, then anything over up to 5 more lines, then the header": tried from every ``curl`` that
# is ``.*`` to the window's end each time, quadratic on a line of ``curl curl …``. Instead the rest
# of the regex runs alone and the lead is looked for before each match (the same matches).
_LEADS = {
    r"\bcurl\b(?:.*?|.*?(?:[\r\n]{1,2}.*?){1,5})": re.compile(r"\bcurl\b"),
    r"\bcurl\b(?:.*|.*(?:[\r\n]{1,2}.*){1,5})": re.compile(r"\bcurl\b"),
}


def _compile(regex: str) -> re.Pattern[str]:
    return re.compile(translate(regex))


def _items(spec: dict[str, object], key: str) -> list[object]:
    value = spec.get(key)
    return value if isinstance(value, list) else []


def _allow(spec: dict[str, object]) -> Allow:
    regexes = tuple(str(r) for r in _items(spec, "regexes"))
    stopwords = tuple(str(w).lower() for w in _items(spec, "stopwords"))
    return Allow(regexes, stopwords, str(spec.get("regexTarget", "secret")), spec.get("condition") == "AND")


def _included(spec: dict[str, Any]) -> bool:
    """A rule that applies to text: it has a regex and keywords, no file path, and is not skipped."""
    return (
        "regex" in spec and "path" not in spec and bool(spec.get("keywords")) and spec["id"] not in _SKIPPED
    )


def _rules_of(config: dict[str, Any]) -> tuple[tuple[GitleaksRule, ...], Allow]:
    rules = []
    for spec in config["rules"]:
        if not _included(spec):
            continue
        allows = tuple(
            _allow(a)
            for a in spec.get("allowlists", ())
            if a.get("regexes") or a.get("stopwords")  # one of paths only never applies to text
            if not (a.get("paths") and a.get("condition") == "AND")
        )
        regex = translate(spec["regex"])
        lead = next((k for k in _LEADS if regex.startswith(k)), None)
        if lead:
            regex = regex[len(lead) :]
        rules.append(
            GitleaksRule(
                id=spec["id"],
                source=_without_ignored_prefix(regex),
                keywords=tuple(k.lower() for k in spec["keywords"]),
                entropy=float(spec.get("entropy", 0)),
                group=int(spec.get("secretGroup", 0)),
                allows=allows,
                multiline=lead is not None or _MULTILINE.search(regex) is not None,
                lead=_LEADS[lead] if lead else None,
            )
        )
    return tuple(rules), _allow(config.get("allowlist", {}))


# The keywords are needed to scan any text; the rules themselves (their regexes translated from
# RE2's dialect: half of loading them) only once a keyword occurs. Read from the JSON copy of the
# TOML (scripts/refresh_gitleaks_rules.py writes both; a test checks they agree): 0.4 ms against
# the TOML parser's 26, on every command's start.
_CONFIG = json.loads(RULES_JSON.read_text())
KEYWORDS = sorted({k.lower() for spec in _CONFIG["rules"] if _included(spec) for k in spec["keywords"]})


@dataclass(frozen=True)
class _Loaded:
    rules: tuple[GitleaksRule, ...]
    allow: Allow
    by_keyword: dict[str, list[int]]


@functools.cache
def _loaded() -> _Loaded:
    rules, allow = _rules_of(_CONFIG)
    by_keyword: dict[str, list[int]] = {}
    for n, rule in enumerate(rules):
        for k in rule.keywords:
            by_keyword.setdefault(k, []).append(n)
    return _Loaded(rules, allow, by_keyword)


def __getattr__(name: str) -> Any:
    """``RULES`` and ``GLOBAL_ALLOW``, loaded on first use."""
    if name == "RULES":
        return _loaded().rules
    if name == "GLOBAL_ALLOW":
        return _loaded().allow
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def shannon(value: str) -> float:
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values()) if n else 0.0


def find(text: str, at: dict[str, list[int]]) -> Iterator[tuple[int, int, str]]:
    """(start, end, rule id) of each secret gitleaks' rules find; ``at`` maps each of ``KEYWORDS``
    to where it occurs in the lower-cased text (the same length as ``text``)."""
    if not at:
        return
    loaded = _loaded()
    for n, where in places_by_rule(loaded.by_keyword, at).items():
        rule = loaded.rules[n]
        seen: set[tuple[int, int]] = set()  # windows may overlap
        for start, end in windows(text, sorted(where), rule.multiline):
            for m in rule.pattern.finditer(text, start, end):
                span = _secret_span(m, rule.group)
                if rule.lead and not rule.lead.search(text, _lines_before(text, m.start(), 5), m.start()):
                    continue
                if span and span not in seen and _counts(rule, text, m, span):
                    seen.add(span)
                    yield (*span, rule.id)


def places_by_rule(by_keyword: dict[str, list[int]], at: dict[str, list[int]]) -> dict[int, list[int]]:
    """Rule (by index) -> where its keywords occur, from where each keyword occurs (``at``)."""
    places: dict[int, list[int]] = {}
    for keyword, where in at.items():
        for n in by_keyword.get(keyword, ()):
            places.setdefault(n, []).extend(where)
    return places


def windows(text: str, where: list[int], multiline: bool) -> Iterator[tuple[int, int]]:
    """Merged spans around each keyword place: its line and the next (a stretch of them, on very long
    lines), or a few kilobytes either way for a rule that spans lines."""
    yield from merged((_window(text, place, multiline) for place in where), _MERGED)


def _window(text: str, place: int, multiline: bool) -> tuple[int, int]:
    if multiline:
        return max(0, place - _BEFORE), min(len(text), place + _AFTER)
    s = max(text.rfind("\n", max(0, place - _BEFORE), place) + 1, place - _BEFORE, 0)
    # to the end of the next line: a key's value may sit on the line below (XML, YAML)
    e = text.find("\n", place, place + _AFTER) + 1
    e = text.find("\n", e, place + _AFTER) + 1 if e > 0 else 0
    return s, min(len(text), place + _AFTER) if e <= 0 else e


def merged(spans: Iterable[tuple[int, int]], cap: int = 0) -> Iterator[tuple[int, int]]:
    """``spans`` (in order of their starts) with those that overlap joined, up to ``cap`` long if given."""
    begin = end = -1
    for s, e in spans:
        if s <= end and (not cap or end - begin < cap):
            end = max(end, e)
            continue
        if end > begin:
            yield begin, end
        begin, end = s, e
    if end > begin:
        yield begin, end


def _lines_before(text: str, at: int, n: int) -> int:
    """Where the line ``n`` lines above the one holding ``at`` starts (a match's lead is looked for
    from there; lines capped at the window size)."""
    start = at
    for _ in range(n + 1):
        start = text.rfind("\n", max(0, at - _AFTER), max(0, start - 1)) if start > 0 else -1
        if start < 0:
            return max(0, at - _AFTER)
    return start + 1


def _secret_span(m: re.Match[str], group: int) -> tuple[int, int] | None:
    if group and group <= m.re.groups:
        return m.span(group) if m.group(group) else None
    for g in range(1, m.re.groups + 1):
        if m.group(g):
            return m.span(g)
    return m.span() if m.group() else None


def _counts(rule: GitleaksRule, text: str, m: re.Match[str], span: tuple[int, int]) -> bool:
    secret = text[span[0] : span[1]]
    if rule.entropy and shannon(secret) <= rule.entropy:
        return False
    if rule.id.startswith("generic") and not any(c.isdigit() for c in secret):
        return False
    return not any(_allowed(a, text, m, secret) for a in (_loaded().allow, *rule.allows))


def _allowed(allow: Allow, text: str, m: re.Match[str], secret: str) -> bool:
    if allow.target == "line":
        target = text[text.rfind("\n", 0, m.start()) + 1 : _line_end(text, m.end())]
    else:
        target = m.group() if allow.target == "match" else secret
    checks = []
    if allow.regexes:
        checks.append(any(r.search(target) for r in allow.regexes))
    if allow.stopwords:
        low = secret.lower()
        checks.append(any(w in low for w in allow.stopwords))
    return bool(checks) and (all(checks) if allow.every else any(checks))


def _line_end(text: str, at: int) -> int:
    end = text.find("\n", at)
    return len(text) if end < 0 else end


_LEADING = re.compile(r"(?:\(\?i\))?(?:\\b)?(?:\(\?:|\()?")


@functools.cache
def _prefix_rules(keyword: str) -> tuple[GitleaksRule, ...]:
    """The rules whose token starts with ``keyword`` itself (``sm_sat`` in ``\\b(sm_sat_[…]{16})``)."""
    loaded = _loaded()
    out = []
    for n in loaded.by_keyword.get(keyword, ()):
        source = loaded.rules[n].source
        if source[_LEADING.match(source).end() :].lower().startswith(keyword):  # type: ignore[union-attr]
            out.append(loaded.rules[n])
    return tuple(out)


def wrong_format(value: str) -> bool:
    """``value`` starts with a vendor's token prefix (``sm_sat_``, ``ghp_``) but is not that vendor's
    token: a test's deliberate non-match, a truncated or made-up token. A vendor's format is known, so a
    value that fails it is not its secret (a real one is found by the vendor's own rule)."""
    low = value.lower()
    if not low.startswith(_vendor_prefixes()):
        return False  # (one test in C: this runs for every value under a key)
    for keyword in _vendor_prefixes():
        after = low[len(keyword) : len(keyword) + 1]
        if low.startswith(keyword) and (keyword[-1] in "_-" or after in ("_", "-")):
            rules = _prefix_rules(keyword)
            if rules and not any(r.pattern.search(value) for r in rules):
                return True
    return False


@functools.cache
def _vendor_prefixes() -> tuple[str, ...]:
    """Keywords that are a token's own prefix: at least three characters, one of them a letter
    (worked out on first use: it needs the rules themselves)."""
    return tuple(
        k
        for k in KEYWORDS
        if len(k) >= 3 and any(c.isalpha() for c in k) and k.isascii() and _prefix_rules(k)
    )
