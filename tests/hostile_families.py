"""More hostile inputs for the redactor, by class, from the rules' and the code's own pieces (beyond
tests/hostile_text.py's one unit repeated): gitleaks' and kingfisher's keywords beside every separator
code and prose put next to a name, each regex the redactor holds cut short (a token's prefix: the
classic trigger of a retry), lines mixing keywords and constructions, keys followed by many candidate
values, quotes left open, brackets nested deep, long base64 or hex runs with keywords sprinkled in, and
many short lines. Where a class's cross product is large it is sampled with a fixed seed (each family's
docstring says what is taken): the same inputs on every run.

Every regex is taken from the code at run time (``code_regexes``): a rule or a construction added to
agentcli/redact/ is covered by being written, with no list here to update."""

from __future__ import annotations

import functools
import importlib
import pkgutil
import random
import re
import string
from collections.abc import Iterator

import agentcli.redact
from agentcli.redact import gitleaks, keyvalue, kingfisher
from agentcli.redact.rules import RULES
from tests.hostile_text import CONSTRUCTIONS, Unit, keyword_units, own_keywords, vendor_keywords
from tests.regex_sample import sample

SEED = 1129
# What code and prose put beside a name: an assignment's sign, a quote, a space, a call's or an index's
# bracket, a list's comma, a path's slash, an escape, a URL's escape, a variable's sigil, a brace.
SEPARATORS = ("=", ":", '"', "'", " ", "\t", "(", "[", ",", "/", "\\", "%", "$", "{")
QUOTES = ('"', "'", "`", '\\"')
OPENERS = ("{", "[", "(", "<", '{"', '["', "('", "{'", '[{"', '<a href="', "${", "%(")
# Characters outside ASCII that the regexes' ``\s``, ``\w`` and ``\d`` take and a hand-written set of
# characters may not: a form feed, NEL, a no-break space, the line and ideographic spaces, an Arabic-Indic
# digit, the one letter whose lower case is two characters. (A run's end found by ``\s`` and its start
# by " \t\r\n" read 4 KB back from each of a line of ``%41\xa0``.)
UNICODE = ("\x0c", "\x85", "\xa0", "\u2028", "\u3000", "\u0663", "\u0130")
ALPHABETS = {
    "base64": string.ascii_letters + string.digits + "+/",
    "hex": "0123456789abcdef",
    "lower": string.ascii_lowercase + string.digits,
    "upper": string.ascii_uppercase + string.digits,
}
SPRINKLE = (8, 24, 64, 200, 1000)  # characters of a run between two keywords
# How many of each sampled class are taken.
VENDOR_SEPARATED = 400
VENDOR_REGEXES = 200
UNICODE_KEYWORDS = 100
MIXED = 24
CANDIDATES = 80
SHORT_LINES = 200
# Very long lines: a per-line scan from each of a line's places back to its start is quadratic with a
# constant so small that 32 KB hides it (2 MB of 21-character words took 2 s, 512 KB 0.2 s). Judged past
# 30 ms whatever the size: the smaller text's share of ``FLOOR`` would be 0.6 s.
LONG_SIZES = (512_000, 2_048_000)
LONG_FLOOR = 0.03


def _rng(name: str) -> random.Random:
    return random.Random(f"{SEED}:{name}")


def vendor_separated_units() -> list[str]:
    """gitleaks' and kingfisher's keywords with each of ``SEPARATORS`` after them and before them
    (``weatherbit(``, ``%weatherbit``; their own forms, bare, ``word=`` and `` word``, are
    hostile_text's): ~22,000 in all, ``VENDOR_SEPARATED`` of them sampled."""
    own = set(keyword_units(vendor_keywords()))
    units = [u for w in vendor_keywords() for sep in SEPARATORS for u in (w + sep, sep + w) if u not in own]
    return _rng("separated").sample(units, VENDOR_SEPARATED)


def unicode_units() -> list[str]:
    """Each construction followed by each of ``UNICODE``, and ``UNICODE_KEYWORDS`` of agentcli's own
    keywords with one of them either side (``password\\xa0=\\xa0``)."""
    rng = _rng("unicode")
    units = [unit + ch for unit in CONSTRUCTIONS for ch in UNICODE]
    for word in rng.sample(own_keywords(), UNICODE_KEYWORDS):
        ch = rng.choice(UNICODE)
        units.append(word + ch + rng.choice(("=", ":", "")) + ch)
    return units


def _members(value: object) -> Iterator[object]:
    yield value
    if isinstance(value, dict):
        yield from value
        yield from value.values()
    elif isinstance(value, tuple | list | frozenset | set):
        yield from value


@functools.cache
def code_regexes() -> tuple[re.Pattern[str], ...]:
    """Every regex agentcli/redact/ holds: each module's compiled patterns and regex sources (a string
    a function compiles), at module level or one container deep, and each rule's of the three rule
    sets. Taken from the modules at run time, so a construction added is covered once written."""
    found: dict[tuple[str, int], re.Pattern[str]] = {}
    for info in pkgutil.iter_modules(agentcli.redact.__path__):
        module = importlib.import_module(f"agentcli.redact.{info.name}")
        for name, value in vars(module).items():
            if name.startswith("__"):
                continue
            for member in _members(value):
                if isinstance(member, re.Pattern) and isinstance(member.pattern, str):
                    found.setdefault((member.pattern, member.flags), member)
                elif isinstance(member, str) and any(ch in member for ch in "[(\\*+?{|"):
                    try:
                        pattern = re.compile(member)
                    except re.error:
                        continue
                    found.setdefault((pattern.pattern, pattern.flags), pattern)
    for rule in RULES:
        found.setdefault((rule.pattern.pattern, rule.pattern.flags), rule.pattern)
    return tuple(found.values())


def vendor_regexes(sampled: bool = True) -> list[re.Pattern[str]]:
    """gitleaks' and kingfisher's rules' regexes (~900): ``VENDOR_REGEXES`` of them sampled, or all."""
    patterns = [r.pattern for r in gitleaks.RULES] + [r.pattern for r in kingfisher.rules()]
    return _rng("vendor").sample(patterns, VENDOR_REGEXES) if sampled else patterns


def cut_short(patterns: list[re.Pattern[str]] | tuple[re.Pattern[str], ...], name: str) -> list[Unit]:
    """For each regex, a text it matches cut short (at a random place past its first half): repeated,
    each repetition a place a try starts, reads the partial token, and fails; and the same prefix once,
    followed by a run of its last character (a token that never ends)."""
    rng = _rng(name)
    units: dict[Unit, None] = {}
    for pattern in patterns:
        text = sample(pattern, rng).replace("\n", " ")
        if len(text) < 2:
            continue
        cut = text[: rng.randint((len(text) + 1) // 2, len(text) - 1)]
        units[cut] = None
        units[(cut, cut[-1])] = None
    return list(units)


def _keywords() -> list[list[str]]:
    """The keyword sources, each a list: agentcli's own, gitleaks', kingfisher's, the constructions."""
    vendor = set(vendor_keywords())
    return [
        own_keywords(),
        sorted(set(gitleaks.KEYWORDS) & vendor),
        sorted(set(kingfisher.keywords()) & vendor),
        list(CONSTRUCTIONS),
    ]


def mixed_units() -> list[str]:
    """Lines mixing sources: each unit 64 pieces, a keyword from each source in turn (agentcli's own,
    gitleaks', kingfisher's, a construction), a separator and a short random value after it; ``MIXED``
    units, of seeded random picks."""
    rng, sources = _rng("mixed"), _keywords()
    alphabet = ALPHABETS["base64"]
    units = []
    for _ in range(MIXED):
        pieces = []
        for i in range(64):
            value = "".join(rng.choices(alphabet, k=rng.randint(0, 24)))
            pieces.append(rng.choice(sources[i % len(sources)]) + rng.choice(SEPARATORS) + value)
        units.append("".join(pieces))
    return units


def candidate_units() -> list[Unit]:
    """A secret-named key (each of the key scan's keywords, as ``KEY=``, ``KEY: ``, ``"KEY": ``…), then
    many candidate values (a word, a token, a quoted word, a word and a separator); and a key with its quote
    left open, then a run of what a value holds. ``CANDIDATES`` of each sampled."""
    rng = _rng("candidates")
    heads = [
        form.format(k)
        for k in keyvalue.KEYWORDS
        for form in ("{}=", "{}: ", '"{}": ', "{} = ", "--{} ", "{}:=", "<{}>", "{} is ")
    ]
    token = "".join(rng.choices(ALPHABETS["base64"], k=24))  # (long enough for the token judges)
    values = [" abc123XYZ", f" {token}", ' "x9Yq"', " 'p@ss', ", "a=", "b;", " -p", ":a@", "$X ", "{x}"]
    units: list[Unit] = [(h, rng.choice(values) * rng.randint(1, 4)) for h in rng.sample(heads, CANDIDATES)]
    runs = [" ", "a", "a ", "A1+/", "\\", "=", "ab cd "]
    units += [
        (h + rng.choice(QUOTES), rng.choice(runs))
        for h in rng.sample([h for h in heads if not h.startswith("<")], CANDIDATES)
    ]
    units += [h + q + "v " for h in rng.sample(heads, CANDIDATES // 2) for q in QUOTES[:1]]
    return units


def nested_units() -> list[str]:
    """Brackets and quotes opened and never closed, deep: each of ``OPENERS`` bare, and before each of
    agentcli's own keywords and a key's separator (``{"password":{"password":…``) for a sample."""
    rng = _rng("nested")
    units = list(OPENERS)
    for opener in OPENERS:
        for word in rng.sample(own_keywords(), 4):
            units += [opener + word + rng.choice(('":', "=", ": ", "'")), opener + word]
    return units


def sprinkled_units() -> list[str]:
    """Runs of base64, hex and one-case alphabets with a keyword every k characters (each of
    ``SPRINKLE``), the keyword from each source in turn: 5 keywords for each alphabet and k."""
    rng, sources = _rng("sprinkled"), _keywords()
    units = []
    for alphabet in ALPHABETS.values():
        for k in SPRINKLE:
            for i in range(5):
                units.append("".join(rng.choices(alphabet, k=k)) + rng.choice(sources[i % len(sources)]))
    return units


def long_line_units() -> list[str]:
    """Runs of each alphabet (24 characters, long enough to be judged) after a space, and one after a
    credential's word (which the keyword-context scan reads back for)."""
    rng = _rng("long")
    runs = ["".join(rng.choices(alphabet, k=24)) for alphabet in ALPHABETS.values()]
    return [run + " " for run in runs] + ["token " + runs[1] + " "]


def short_line_units(pool: list[Unit]) -> list[Unit]:
    """Many short lines: ``SHORT_LINES`` of ``pool`` sampled, each ending its line (``\\n``, and every
    fourth ``\\r\\n``), so each per-line scan runs once a line."""
    rng = _rng("lines")
    plain = [u for u in pool if isinstance(u, str)]
    return [u + ("\r\n" if i % 4 == 0 else "\n") for i, u in enumerate(rng.sample(plain, SHORT_LINES))]
