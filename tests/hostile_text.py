"""Hostile inputs for the redactor, built from its rules' own pieces: every keyword of every rule
source agentcli runs (its own patterns, gitleaks', kingfisher's, the key and public-material scans)
repeated bare and after each separator, and the constructions the patterns take apart (crypt
prefixes, ``key=`` runs, PEM headers, base64 and token runs, URL user info). A backtracking regex that
retries a long scan at each of many places is quadratic on one of these: tests/test_redact_hostile.py
holds each to linear time, and scripts/bench_redact.py reports the worst."""

from __future__ import annotations

import gc
import math
import time

from agentcli.redact import gitleaks, keyvalue, kingfisher, public, redact
from agentcli.redact.rules import RULES

SEPARATORS = ("=", ":", '"', "'", "/")
CRYPT = (
    "$1$",
    "$2a$",
    "$2b$10$",
    "$5$",
    "$6$",
    "$y$",
    "$8$",
    "$7$",
    "$argon2id$",
    "$pbkdf2-sha256$",
    "$krb5tgs$",
)
# Units repeated to fill a line: each a construction some pattern takes apart.
CONSTRUCTIONS = (
    *CRYPT,
    *(c + "x" for c in CRYPT),
    "$1$$",
    "$",
    "$a",
    "key=",
    "key=a",
    "api_key=",
    "password=",
    'password="',
    "Password=x;",
    "-----BEGIN ",
    "-----BEGIN PRIVATE KEY-----",
    "-----BEGIN RSA PRIVATE KEY-----\n",
    "QUJD",
    "QUJDRA==",
    "a",
    "A1",
    "a-",
    "a.",
    "a_",
    "a/",
    "a+",
    "%41",
    "%",
    "user:pass@",
    "https://user:pass@",
    "://a:b@",
    "a:",
    ":a@",
    "@",
    "eyJ",
    "eyJhbGciOi.",
    "xoxb-1-",
    "ghp_",
    "AKIA",
    "[",
    "{",
    "\\",
    "'",
    '"',
    "`",
    "token ",
    "Bearer ",
    "is '",
)


def own_keywords() -> list[str]:
    """The keywords of agentcli's own detectors: its patterns (redact/rules.py), the key and the
    public-material scans."""
    return sorted({r.keyword for r in RULES} | set(keyvalue.KEYWORDS) | set(public.KEYWORDS))


def vendor_keywords() -> list[str]:
    """The keywords of gitleaks' and kingfisher's rules (each rule runs only near one of its own)."""
    return sorted((set(gitleaks.KEYWORDS) | set(kingfisher.keywords())) - set(own_keywords()))


def keyword_units(words: list[str]) -> list[str]:
    """Each keyword repeated bare (one long word of it), as words (after a space), and as keys
    (``word=word=…``); and the rest of the separators for agentcli's own."""
    units = dict.fromkeys(u for w in words for u in (w, " " + w, w + "="))
    return list(units)


def separated_units(words: list[str]) -> list[str]:
    """Each keyword after each other separator, and in upper case."""
    units = dict.fromkeys(u for w in words for u in (*(sep + w for sep in SEPARATORS), w.upper()))
    return [u for u in units if u not in set(keyword_units(words))]


# A unit: a text repeated to fill a line, or a head written once and then a text repeated after it
# (``password=`` and then candidate values).
Unit = str | tuple[str, str]


def line(unit: Unit, size: int) -> str:
    """``unit`` repeated to ``size`` characters, one line (its head first, if it has one)."""
    head, body = unit if isinstance(unit, tuple) else ("", unit)
    return (head + body * ((size - len(head)) // len(body) + 1))[:size]


SMALL, LARGE = 25_000, 100_000
KEYWORD_SIZES = (8_000, 32_000)
# A quadratic cost is 16x; a linear one measured up to 7x on this shared machine (its 100 KB working
# set competes for cache with the other processes more than 25 KB's).
RATIO = 8.0
LIMIT = 5.0
# Below this (for 25 KB; its share for a smaller text), the time of the small text is noise: 100 KB is
# judged by the ratio only past 8 x 30 ms.
FLOOR = 0.03


def _cost(unit: Unit, size: int) -> float:
    text = line(unit, size)
    # A collection would land in one run or another: noise in a ratio of two runs. No full collection
    # before it: in a worker that has run hundreds of tests each takes ~0.4 s, thousands of them
    # outlasted the test's timeout.
    gc.disable()
    try:
        start = time.process_time()
        redact(text)
        return time.process_time() - start
    finally:
        gc.enable()


def superlinear(
    units: list[Unit], sizes: tuple[int, int] = (SMALL, LARGE), floor: float | None = None
) -> list[str]:
    """The units whose cost grows faster than linearly (the best of three runs, before one is named).
    ``floor``: the smaller text's time below which it is noise (by default ``FLOOR``'s share)."""
    low, high = sizes
    limit = LIMIT * high / LARGE
    floor = FLOOR * low / SMALL if floor is None else floor

    def costs(unit: Unit) -> tuple[float, float]:
        # the large text is not measured when the small one alone says it is over the limit (on the
        # old code that took a minute)
        small = _cost(unit, low)
        return small, _cost(unit, high) if small * high / low <= limit else math.inf

    def over(small: float, large: float) -> bool:
        return large > RATIO * max(small, floor) or large > limit

    named = []
    for unit in units:
        small, large = costs(unit)
        for _ in range(2):
            if not over(small, large):
                break
            again = costs(unit)
            small, large = min(small, again[0]), min(large, again[1])
        if over(small, large):
            took = f"{small * 1000:.0f} ms for {low // 1000} KB, {large * 1000:.0f} ms for {high // 1000} KB"
            named.append(f"{unit!r}: {took}")
    return named


def over_limit(units: list[Unit], size: int) -> list[str]:
    """The units of which ``size`` characters cost more than their share of ``LIMIT`` (the best of three
    runs): one try of a regex that backtracks exponentially costs as much at any size, so one size,
    cheaper than two, screens every unit."""
    limit = LIMIT * size / LARGE
    named = []
    for unit in units:
        cost = _cost(unit, size)
        for _ in range(2):
            if cost <= limit:
                break
            cost = min(cost, _cost(unit, size))
        if cost > limit:
            named.append(f"{unit!r}: {cost * 1000:.0f} ms for {size // 1000} KB")
    return named
