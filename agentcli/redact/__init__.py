"""Secrets never leave in a summary or a title: detected secrets become ``[REDACTED:<kind>]``.

Applied to every summary request and to the summary that comes back (before it is stored), to the
title request and the provisional title, and — with ``redact.model_requests`` — to every chat request.
The detectors: gitleaks' and kingfisher's published rules, run as data (``gitleaks``, ``kingfisher``),
provider formats and PEM keys by pattern (``rules``), values under secret-looking keys (``keyvalue``),
passwords given to a call or a pair with no key naming them (``calls``), secrets inside base64 and
URL-encoded text (``encoded``, which decodes and searches again), hex and one-case tokens beside a
word naming a credential (``context``), and random-looking tokens (``judge``) outside public material
(``public``: digests, public keys, certificates, data URIs). A placeholder or a reference
(``ghp_xxxx…``, ``$API_KEY``) is never a secret (``judge.placeholder``). This module runs them and
decides overlaps. A leaf: it imports nothing else of agentcli, so what it redacts never depends on a
config a project could change. Fast: one Aho-Corasick pass (ahocorasick-rs) finds every detector's
keyword, so a megabyte is redacted in tens to a couple of hundred milliseconds (scripts/bench_redact.py).
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ahocorasick_rs import AhoCorasick, Implementation

from agentcli.redact import calls, context, encoded, gitleaks, keyvalue, kingfisher, public
from agentcli.redact.judge import (
    CHECKS,
    PLACEHOLDER,
    entropy,
    flag_cluster,
    identifier,
    looks_random,
    placeholder,
    worded,
)
from agentcli.redact.rules import RULES, TOKEN_CHARS, TOKEN_MIN, WORD_CHARS, Rule

__all__ = ["PLACEHOLDER", "Finding", "entropy", "find", "looks_random", "redact", "redact_messages"]

# How many encodings deep a secret is looked for (base64 of a JSON holding base64, as Kubernetes'
# .dockerconfigjson is).
DEPTH = 2
# Token characters as ``a``, ``=`` as itself, anything else (non-ASCII became ``?``) as a space.
_TOKEN_MAP = bytes(b"a"[0] if chr(i) in TOKEN_CHARS else i if chr(i) == "=" else b" "[0] for i in range(256))
_TOKEN_RUN = re.compile(b"a" * TOKEN_MIN + b"a*={0,2}")

# One automaton per case: rules marked ``lower`` (and the key and public-material scans) look for
# their keyword in the lower-cased text.
_CASED_KEYWORDS = sorted({r.keyword for r in RULES if not r.lower})
_LOWER_KEYWORDS = sorted(
    {r.keyword for r in RULES if r.lower}
    | set(keyvalue.KEYWORDS)
    | set(public.KEYWORDS)
    | set(gitleaks.KEYWORDS)
    | set(calls.KEYWORDS)
)
_GITLEAKS_KEYWORDS = frozenset(gitleaks.KEYWORDS)
# Findings judged as a whole block (a PEM body has runs of ``A``; base64 was judged decoded; a
# password hash starts ``$id$``, which reads as a ``$VAR`` reference, and its rule judged its filler).
_WHOLE_KINDS = frozenset({"private-key", "basic-auth", "password-hash"})
# A DFA: larger to build, 2-3x faster to run than the default NFA for ~130 keywords.
_CASED_SCAN = AhoCorasick(_CASED_KEYWORDS, implementation=Implementation.DFA)
_KEY_KEYWORDS = frozenset(keyvalue.KEYWORDS)
_CALL_KEYWORDS = frozenset(calls.KEYWORDS)
# Past this many places, one regex scan in C beats trying the pattern at each place from Python.
_MAX_ANCHORED_TRIES = 500

Span = tuple[int, int, str]


@functools.cache
def _lower_scan() -> tuple[AhoCorasick, list[str]]:
    """The lower-case automaton, with kingfisher's ~670 keywords (one pass finds them all): built on
    first use, so importing agentcli.redact loads none of kingfisher's rules."""
    keywords = sorted(set(_LOWER_KEYWORDS) | set(kingfisher.keywords()))
    return AhoCorasick(keywords, implementation=Implementation.DFA), keywords


@dataclass(frozen=True)
class Finding:
    start: int
    end: int
    kind: str


def find(text: str) -> list[Finding]:
    """Every secret in ``text``, as non-overlapping spans in order."""
    return [Finding(*f) for f in _find(text, DEPTH)]


def _find(text: str, depth: int) -> list[Span]:
    lower = text.lower()
    if len(lower) != len(text):
        lower = text.replace("\u0130", "i").lower()  # the one character that lower-cases to two
    at = _keyword_places(text, _CASED_SCAN, _CASED_KEYWORDS)
    for keyword, places in _keyword_places(lower, *_lower_scan()).items():
        at.setdefault(keyword, []).extend(places)
    # In order of the kind a placeholder names when findings overlap: the provider's format, what
    # an encoding hid, the key's word, and last a random-looking token.
    found = list(_rule_findings(text, lower, at))
    found += gitleaks.find(text, {k: ps for k, ps in at.items() if k in _GITLEAKS_KEYWORDS})
    published = list(public.spans(lower, at))
    safe = list(published)
    ascii = text.encode("ascii", "replace")  # one byte a character, for the run scans
    if depth:
        decoded = encoded.base64_runs(text, ascii, _find, depth)
        found += decoded.findings
        safe += decoded.public
        if "%" in text:
            found += encoded.url_encoded(text, _find, depth)
    found += keyvalue.find(text, lower, [p for k, ps in at.items() if k in _KEY_KEYWORDS for p in ps])
    found += context.find(text, lower, ascii)
    found += calls.find(text, [p for k, ps in at.items() if k in _CALL_KEYWORDS for p in ps])
    found += calls.pgpass(text)
    # A filler or a reference where a secret would be (``ghp_xxxx…``, ``Bearer $API_KEY``) is not one.
    found = [f for f in found if f[2] in _WHOLE_KINDS or not placeholder(text[f[0] : f[1]])]
    # The same filler test for a token found by its randomness alone (``…EXAMPLE``, ``…FaKe``).
    # (and a token of one case, which alone would read as a name, when it clears the floor a credential
    # word's token must: context.one_case_token)
    tokens = [
        span
        for span in _token_runs(ascii)
        if (
            (
                looks_random(value := text[span[0] : span[1]].rstrip("="))
                and not (identifier(value) or worded(value) or flag_cluster(value))
            )
            or context.one_case_token(text, span[0], value)
        )
        and not placeholder(value)
    ]
    if tokens:
        starts, ends = _intervals(safe)
        found += [(s, e, "high-entropy-token") for s, e in tokens if not _overlaps(starts, ends, s, e)]
    # kingfisher's rules report public material too (Stripe's publishable ``pk_live_`` keys): their
    # findings count outside it.
    if vendor := [f for f in kingfisher.find(text, at) if not placeholder(text[f[0] : f[1]])]:
        starts, ends = _intervals(published)
        found += [f for f in vendor if not _overlaps(starts, ends, f[0], f[1])]
    return _merge(found, text)


def _rule_findings(text: str, lower: str, at: dict[str, list[int]]) -> Iterator[Span]:
    for rule in RULES:
        places = at.get(rule.keyword)
        if not places:
            continue
        source = lower if rule.lower else text
        if rule.anchored and rule.bounded and not rule.offset and rule.group == 0:
            # A match may not continue a word on its left, so it is tried only where a word starts: a
            # word of the keyword repeated (``eyJeyJ…``) costs one try, not one each reading to its end.
            tries = sorted(p for p in places if not p or text[p - 1] not in WORD_CHARS)
            matches: Iterable[re.Match[str]] = _match_at(rule, source, tries)
        elif rule.anchored and (rule.offset or len(places) <= _MAX_ANCHORED_TRIES):
            tries = sorted(p - rule.offset for p in places if p >= rule.offset)
            matches = _match_at(rule, source, tries)
        else:
            matches = rule.pattern.finditer(source)
        check = CHECKS.get(rule.check)
        user = "u" in rule.pattern.groupindex
        for m in matches:
            start, end = m.span(rule.group)
            if rule.bounded and start and text[start - 1] in WORD_CHARS:
                continue
            if user and context.random_shaped(text[m.start("u") : m.end("u")]):
                yield (m.start("u"), m.end("u"), rule.kind)  # a token as user: ``//<token>:x-oauth-basic@``
            if user and text[start:end] == text[m.start("u") : m.end("u")]:
                continue  # a password that repeats its user (``user:user@``, ``admin:admin``): a default
            if check is None or check(text[start:end]):
                yield (start, end, rule.kind)


def _intervals(spans: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """Sorted starts, and the furthest end reached up to each start (for overlap look-ups)."""
    spans.sort()
    ends: list[int] = []
    for _, e in spans:
        ends.append(max(e, ends[-1]) if ends else e)
    return [s for s, _ in spans], ends


def _overlaps(starts: list[int], ends: list[int], s: int, e: int) -> bool:
    i = bisect.bisect_left(starts, e) - 1  # the last span starting before ``e``
    return i >= 0 and ends[i] > s


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


def _token_runs(ascii: bytes) -> Iterator[tuple[int, int]]:
    """Spans of runs of token characters long enough to be a token (see rules.TOKEN_CHARS); a run
    right after a backslash starts past the escape it begins with (``\\x43``, roff's ``\\fB``)."""
    mapped = ascii.translate(_TOKEN_MAP)
    for m in _TOKEN_RUN.finditer(mapped):
        start, end = m.span()
        if start and mapped[start - 1] == b"="[0]:
            continue  # a value after "=" is judged by the rules
        if start and ascii[start - 1] == b"\\"[0] and (escape := _ESCAPE.match(ascii, start)):
            start = escape.end()
            if end - start < TOKEN_MIN:
                continue
        yield start, end


# What a backslash starts, glued to the word after it: a byte or code point (``\\x13HISTORY_…`` in a
# serialised descriptor), roff's font and size changes (``\\fBASN1_…``, ``\\s-1OSSL_…``), C's letters.
_ESCAPE = re.compile(rb"x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|f[A-Z0-9]|s[-+]?[0-9]|[abnrtv]")


class _RunEnd:
    """Where the word running through a place ends, remembered for that word: findings all inside one
    long word (a rule's prefix repeated) would otherwise each scan to its end, quadratic in its length."""

    def __init__(self, text: str) -> None:
        self.text, self.lo, self.hi = text, -1, -1

    def __call__(self, at: int) -> int:
        if not self.lo <= at <= self.hi:
            word = _WORD_RUN.match(self.text, at)  # (it matches everywhere, if only "")
            self.lo, self.hi = at, word.end() if word else at
        return self.hi


_WORD_RUN = re.compile(r"[A-Za-z0-9_\-]*")


def _whole(f: Span, text: str, run_end: _RunEnd) -> Span:
    """A token found in part, made whole: a match cut short by its rule's length does not end inside
    a word (gitleaks' ``GR1348941[\\w-]{20}`` in a longer token), and a token joined by dots to more
    token-like parts is all of them (a Discord token's id.time.hmac, where the scan sees the hmac)."""
    start, end, kind = f
    if kind in _WHOLE_KINDS or any(c.isspace() for c in text[start:end]):
        return f
    end = run_end(end)
    for _ in range(2):
        if not (part := _PART.match(text, end + 1) if text[end : end + 1] == "." else None):
            break
        if not _varied(part.group()) or (part.end() < len(text) and text[part.end()] in "@/"):
            break  # a user's or a path's next part
        end = part.end()
    for _ in range(2):
        if start < 7 or text[start - 1] != ".":
            break
        left = start - 1
        while left > 0 and text[left - 1] in WORD_CHARS:
            left -= 1
        if start - 1 - left < 6 or not _varied(text[left : start - 1]) or (left and text[left - 1] in "@/"):
            break
        start = left
    return (start, end, kind)


_PART = re.compile(r"[A-Za-z0-9_\-]{6,}")


def _varied(part: str) -> bool:
    """Letters and digits, or upper case past the first letter and lower case: a token's part, not a
    word or a name."""
    digit, alpha = any(c.isdigit() for c in part), any(c.isalpha() for c in part)
    inner_upper = any(c.isupper() for c in part[1:])
    return (digit and alpha) or (inner_upper and any(c.islower() for c in part))


def _filled_part(token: str) -> bool:
    """One of a dot-joined token's parts is a filler: an example made up part by part (a JWT whose
    payload is ``abcdefghij…``), not a token a program issued."""
    return any(placeholder(part) for part in token.split(".") if len(part) >= 8)


def _merge(found: Iterable[Span], text: str) -> list[Span]:
    out: list[Span] = []
    run_end = _RunEnd(text)
    whole = [_whole(f, text, run_end) for f in sorted(found, key=lambda f: f[0])]  # (stable: kinds in order)
    for f in sorted(whole, key=lambda f: (f[0], -f[1])):
        if f[2] not in _WHOLE_KINDS and "." in text[f[0] : f[1]] and _filled_part(text[f[0] : f[1]]):
            continue  # a dot-joined token with a filler for a part (``<header>.eyJabcdefghij….<sig>``)
        if PLACEHOLDER.fullmatch(text, f[0], f[1]):
            continue  # already redacted: redacting twice changes nothing
        if out and f[0] < out[-1][1]:
            if f[1] > out[-1][1]:  # overlapping: one placeholder for the union, first kind named
                out[-1] = (out[-1][0], f[1], out[-1][2])
            continue
        out.append(f)
    return out


def redact(text: str) -> str:
    """``text`` with each detected secret replaced by ``[REDACTED:<kind>]``."""
    if not text:
        return text
    findings = _find(text, DEPTH)
    if not findings:
        return text
    parts: list[str] = []
    at = 0
    for start, end, kind in findings:
        parts += [text[at:start], f"[REDACTED:{kind}]"]
        at = end
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
