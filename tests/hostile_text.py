"""Hostile inputs for the redactor, built from its rules' own pieces: every keyword of every rule
source agentcli runs (its own patterns, gitleaks', kingfisher's, the key and public-material scans)
repeated bare and after each separator, and the constructions the patterns take apart (crypt
prefixes, ``key=`` runs, PEM headers, base64 and token runs, URL user info). A backtracking regex that
retries a long scan at each of many places is quadratic on one of these: tests/test_redact_hostile.py
holds each to linear time, and scripts/bench_redact.py reports the worst."""

from __future__ import annotations

from agentcli.redact import gitleaks, keyvalue, kingfisher, public
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


def line(unit: str, size: int) -> str:
    """``unit`` repeated to ``size`` characters, one line."""
    return (unit * (size // len(unit) + 1))[:size]
