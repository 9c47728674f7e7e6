"""Secrets never leave in a summary or a title: detected secrets become ``[REDACTED:<kind>]``.

Applied to every summary request and to the summary that comes back (before it is stored), to the
title request and the provisional title, and — with ``redact.model_requests`` — to every chat request.
The detectors are in ``rules``; this module decides overlaps and the judgement calls (is this
assigned value a reference or a literal? is this token random or a hash, an id, base64 of text?).
Fast: one Aho-Corasick pass (ahocorasick-rs) finds every rule's keyword, so a megabyte is redacted
in tens of milliseconds (scripts/bench_redact.py).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ahocorasick_rs import AhoCorasick

from agentcli.redact.rules import RULES, TOKEN_CHARS, TOKEN_MIN, WORD_CHARS, Rule

PLACEHOLDER = re.compile(r"\[REDACTED:[a-z0-9\-]+\]")

# Hashes and digests look random but are public: lockfile integrity, image digests, checksums.
_DIGEST = re.compile(
    r"(?:sha(?:1|224|256|384|512)|md5|blake2b?)[-:=][a-z0-9+/=_\-]{16,}"
)  # on lower-cased text
_DIGEST_KEYWORDS = ["sha", "md5", "blake2"]  # where a _DIGEST match can begin
# Token characters as ``a``, ``=`` as itself, anything else (non-ASCII became ``?``) as a space.
_TOKEN_MAP = bytes(b"a"[0] if chr(i) in TOKEN_CHARS else i if chr(i) == "=" else b" "[0] for i in range(256))
_TOKEN_RUN = re.compile(b"a" * TOKEN_MIN + b"a*={0,2}")
_HEX = re.compile(r"[0-9a-fA-F\-]+")
_LOWER_RUN = re.compile(r"[a-z]+")
_DIGIT = re.compile(r"[0-9]")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+|[A-Z_][A-Z0-9_]*|[A-Za-z_]+")
_PLACEHOLDER_WORDS = frozenset(
    {
        "password",
        "passwd",
        "changeme",
        "redacted",
        "example",
        "secret",
        "required",
        "optional",
        "string",
        "undefined",
        "none",
        "null",
        "true",
        "false",
        "your-api-key",
        "your_api_key",
        "placeholder",
        "dummy",
    }
)


# One automaton per case: rules marked ``lower`` look for their keyword in the lower-cased text.
_CASED_KEYWORDS = sorted({r.keyword for r in RULES if not r.lower})
_LOWER_KEYWORDS = sorted({r.keyword for r in RULES if r.lower} | set(_DIGEST_KEYWORDS))
_CASED_SCAN = AhoCorasick(_CASED_KEYWORDS)
_LOWER_SCAN = AhoCorasick(_LOWER_KEYWORDS)
# Past this many places, one regex scan in C beats trying the pattern at each place from Python.
_MAX_ANCHORED_TRIES = 500


@dataclass(frozen=True)
class Finding:
    start: int
    end: int
    kind: str


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values()) if n else 0.0


def _decodes_to_text(value: str) -> bool:
    """Base64 of readable text is not a secret (a user's notes, an encoded config)."""
    try:
        raw = base64.b64decode(
            value + "=" * (-len(value) % 4), altchars=b"-_" if "-" in value or "_" in value else None
        )
    except (binascii.Error, ValueError):
        return False
    if len(raw) < 8:
        return False
    printable = sum(32 <= b < 127 or b in (9, 10, 13) for b in raw)
    return printable / len(raw) > 0.95


def looks_random(value: str) -> bool:
    """A long token of mixed case and digits, with near-maximal entropy for its length, that is
    neither hex (hashes, SHAs, UUIDs) nor base64 of text."""
    if (
        len(value) < 16
        or value.islower()
        or value.isupper()
        or not _DIGIT.search(value)
        or _HEX.fullmatch(value)
    ):
        return False  # random tokens mix upper case, lower case and digits
    if entropy(value) < 0.82 * math.log2(min(len(value), 64)):
        return False
    runs = _LOWER_RUN.findall(value)
    if sum(map(len, runs)) / len(runs) >= 3.0:  # words (CamelCase names), not random characters
        return False
    return not _decodes_to_text(value.rstrip("="))


def _not_template(value: str) -> bool:
    return not (value.startswith(("$", "{", "%", "<", "*", "#")) or set(value) <= {"*", "x", "X", "."})


def _assigned(value: str) -> bool:
    """A literal assigned to a secret-sounding name, not a reference to one (a variable, an
    attribute, an environment name, a type) nor a placeholder word."""
    if (
        not _not_template(value)
        or value.lower() in _PLACEHOLDER_WORDS
        or value.isdigit()
        or PLACEHOLDER.match(value)
    ):
        return False
    if _IDENT.fullmatch(value) and not (len(value) >= 12 and entropy(value) >= 3.5 and "." not in value):
        return False
    return len(set(value)) > 2


def _varied(value: str) -> bool:
    """Provider formats with a common prefix (``sk-``, ``SK``): the body must not be a word."""
    body = value[3:] if value[:3].lower() == "sk-" else value[2:]
    return entropy(body) >= 3.0 and not body.isalpha()


CHECKS: dict[str, Callable[[str], bool]] = {
    "varied": _varied,
    "not_template": _not_template,
    "random": looks_random,
    "assigned": _assigned,
}


def find(text: str) -> list[Finding]:
    """Every secret in ``text``, as non-overlapping spans in order."""
    lower = text.lower()
    same_length = len(lower) == len(text)  # a few characters lower-case to two; then use (?i)
    at = _keyword_places(text, _CASED_SCAN, _CASED_KEYWORDS)
    if same_length:
        at.update(_keyword_places(lower, _LOWER_SCAN, _LOWER_KEYWORDS))
    found: list[Finding] = []
    for rule in RULES:
        if rule.lower and not same_length:
            matches: Iterable[re.Match[str]] = re.finditer(rule.pattern.pattern, text, re.I)
        elif not (places := at.get(rule.keyword)):
            continue
        elif rule.anchored and len(places) <= _MAX_ANCHORED_TRIES:
            matches = _match_at(rule, lower if rule.lower else text, places)
        else:
            matches = rule.pattern.finditer(lower if rule.lower else text)
        check = CHECKS.get(rule.check)
        for m in matches:
            start, end = m.span(rule.group)
            if rule.bounded and start and text[start - 1] in WORD_CHARS:
                continue
            value = text[start:end]
            if check is not None and not check(value):
                continue
            if rule.check == "assigned" and text[end : end + 1] in ("(", "."):
                continue  # a call or an attribute: code, not a literal
            found.append(Finding(start, end, rule.kind))
    tokens = [span for span in _token_runs(text) if looks_random(text[span[0] : span[1]].rstrip("="))]
    if tokens:
        safe = _digests(lower, at) if same_length else []
        found += [
            Finding(s, e, "high-entropy-token")
            for s, e in tokens
            if not any(a <= s and e <= b for a, b in safe)
        ]
    return _merge(found)


def _digests(lower: str, at: dict[str, list[int]]) -> list[tuple[int, int]]:
    """Spans of hashes and digests (``sha256:…``), tried only where their names occur."""
    places = sorted(p for keyword in _DIGEST_KEYWORDS for p in at.get(keyword, ()))
    if len(places) > _MAX_ANCHORED_TRIES:
        return [m.span() for m in _DIGEST.finditer(lower)]
    spans: list[tuple[int, int]] = []
    for start in places:
        if (not spans or start >= spans[-1][1]) and (m := _DIGEST.match(lower, start)):
            spans.append(m.span())
    return spans


def _keyword_places(text: str, scan: AhoCorasick, keywords: list[str]) -> dict[str, list[int]]:
    """Where each keyword occurs in ``text`` (overlapping: ``sk-`` inside ``sk-ant-`` counts too)."""
    places: dict[str, list[int]] = {}
    for index, start, _ in scan.find_matches_as_indexes(text, overlapping=True):
        places.setdefault(keywords[index], []).append(start)
    return places


def _match_at(rule: Rule, text: str, places: list[int]) -> Iterator[re.Match[str]]:
    """What ``rule.pattern.finditer(text)`` yields, for a pattern that begins with its keyword:
    tried only where the keyword occurs, a match not overlapping the one before."""
    end = 0
    for start in places:
        if start >= end and (m := rule.pattern.match(text, start)):
            end = m.end()
            yield m


def _token_runs(text: str) -> Iterator[tuple[int, int]]:
    """Spans of runs of token characters long enough to be a token (see rules.TOKEN_CHARS)."""
    mapped = text.encode("ascii", "replace").translate(_TOKEN_MAP)  # one byte per character
    for m in _TOKEN_RUN.finditer(mapped):
        start = m.start()
        if not start or mapped[start - 1] != b"="[0]:  # a value after "=" is judged by the rules
            yield m.span()


def _merge(found: Iterable[Finding]) -> list[Finding]:
    out: list[Finding] = []
    for f in sorted(found, key=lambda f: (f.start, -f.end)):
        if out and f.start < out[-1].end:
            if f.end > out[-1].end:  # overlapping: one placeholder for the union, first kind named
                out[-1] = Finding(out[-1].start, f.end, out[-1].kind)
            continue
        out.append(f)
    return out


def redact(text: str) -> str:
    """``text`` with each detected secret replaced by ``[REDACTED:<kind>]``."""
    if not text:
        return text
    findings = find(text)
    if not findings:
        return text
    parts: list[str] = []
    at = 0
    for f in findings:
        parts += [text[at : f.start], f"[REDACTED:{f.kind}]"]
        at = f.end
    parts.append(text[at:])
    return "".join(parts)


def redact_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat messages (OpenAI shape) with every text, content part and tool-call argument redacted."""
    return [_redact_message(m) for m in messages]


def _redact_message(message: dict[str, Any]) -> dict[str, Any]:
    out = dict(message)
    content = out.get("content")
    if isinstance(content, str):
        out["content"] = redact(content)
    elif isinstance(content, list):
        out["content"] = [
            {**p, "text": redact(p["text"])} if isinstance(p, dict) and isinstance(p.get("text"), str) else p
            for p in content
        ]
    if isinstance(out.get("tool_calls"), list):
        out["tool_calls"] = [_redact_call(c) for c in out["tool_calls"]]
    return out


def _redact_call(call: Any) -> Any:
    fn = call.get("function") if isinstance(call, dict) else None
    if not isinstance(fn, dict) or not isinstance(fn.get("arguments"), str):
        return call
    return {**call, "function": {**fn, "arguments": redact(fn["arguments"])}}
