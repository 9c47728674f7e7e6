"""Public material that looks random: digests and checksums, PEM certificates and public keys, SSH
public keys, data URIs, publishable client tokens and values under public-looking keys (``PublicKey``,
``fingerprint``, ``ETag``). A random-looking token inside one of these spans is not a secret.

Each pattern is tried only where its keyword occurs (the caller's one Aho-Corasick pass over the
lower-cased text), and runs on that lower-cased text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

_DIGEST = re.compile(
    r"(?:sha-?(?:1|224|256|384|512)|md5|blake2b?|h1|crc32c?)\)?[-:=][ \t]*[a-z0-9+/=_\-]{16,}"
)
_SSH = re.compile(
    r"(?:ssh-(?:rsa|dss|ed25519|ed448)|ecdsa-sha2-nistp\d+"
    r"|sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com)"
    r"(?:-cert-v01@openssh\.com)?[ \t]+aaaa[a-z0-9+/]+={0,3}"
)
# (a media type's names are 127 characters at most, RFC 6838; its parameters are bounded too: a value
# runs over the next ``data:``, so 32 KB of ``data:a/b;c=d;e=`` read to the line's end from each, 398 ms)
_DATA_URI = re.compile(
    r"data:[a-z0-9.+\-]{1,127}/[a-z0-9.+\-]{1,127}(?:;[a-z0-9.\-]{1,64}=[^;,\s]{0,256}){0,8};base64,[a-z0-9+/=]+"
)
_PUBLISHABLE = re.compile(r"pk_(?:live|test)_[a-z0-9]{10,}|pk\.eyj[a-z0-9_\-]+\.[a-z0-9_\-]+")
_PEM_BEGIN = re.compile(r"-----begin ([a-z0-9 ]{1,40})-----")
_SAFE_KEY_REACH = 25  # a key's characters after its keyword, and one separator (below)
_SAFE_KEY = re.compile(r"[a-z0-9_\-]{0,24}[\"')]?[ \t]*(?:=>|[:=])[ \t]*[\"']?(?P<v>[a-z0-9+/=_\-]{16,})")
_SAFE_KEY_WORDS = (
    "publickey",
    "public_key",
    "public-key",
    "pubkey",
    "fingerprint",
    "checksum",
    "digest",
    "etag",
    "nonce",  # a one-time value shown to the client (CSP, OAuth): public by design
)

PATTERNS: dict[str, re.Pattern[str]] = {
    **dict.fromkeys(("sha", "md5", "blake2", "h1:", "crc32"), _DIGEST),
    **dict.fromkeys(("ssh-", "ecdsa-sha2-", "sk-ssh-", "sk-ecdsa-"), _SSH),
    "data:": _DATA_URI,
    **dict.fromkeys(("pk_live_", "pk_test_", "pk.eyj"), _PUBLISHABLE),
}
KEYWORDS = sorted({*PATTERNS, "-----begin ", *_SAFE_KEY_WORDS})
_BY_PATTERN = {p: [w for w, q in PATTERNS.items() if q is p] for p in PATTERNS.values()}
_PREFIX_REACH = 64  # a pattern's keyword and separators (``ecdsa-sha2-nistp256-cert-v01@openssh.com``)


def spans(lower: str, at: dict[str, list[int]]) -> Iterator[tuple[int, int]]:
    """Spans of public material in ``lower`` (the lower-cased text); ``at`` maps each of ``KEYWORDS``
    to where it occurs."""
    for pattern, words in _BY_PATTERN.items():
        yield from _once(lower, pattern, 0, ((p, _PREFIX_REACH) for w in words for p in at.get(w, ())))
    ends = _NextEnd(lower)
    for place in at.get("-----begin ", ()):
        if span := _pem_block(lower, place, ends):
            yield span
    safe = ((p + len(k), _SAFE_KEY_REACH) for k in _SAFE_KEY_WORDS for p in at.get(k, ()))
    yield from _once(lower, _SAFE_KEY, "v", safe)


def _once(
    lower: str, pattern: re.Pattern[str], group: int | str, tries: Iterable[tuple[int, int]]
) -> Iterator[tuple[int, int]]:
    """The spans (of ``group``) ``pattern`` matches at each place of ``tries``, a place with how far
    the pattern's part before its value reaches in value characters at most. A place inside the last
    value found that far before its end is not tried: its match would end where that value ends (the
    value's characters run on to there), and each try of a line of ``md5=`` repeated reads to its end."""
    start = end = 0
    for place, reach in sorted(tries):
        if start <= place and place + reach < end:
            continue
        if m := pattern.match(lower, place):
            start, end = m.span(group)
            yield start, end


class _NextEnd:
    """Where the next ``-----end `` at or after a place is, found once for all the places before it: a
    search from each of a line of ``-----begin `` with no end would read 64 KB each."""

    def __init__(self, lower: str) -> None:
        self.lower, self.since, self.at = lower, len(lower) + 1, -1  # none in lower[since:] if at < 0

    def __call__(self, place: int) -> int:
        if place < self.since or 0 <= self.at < place:
            self.since, self.at = place, self.lower.find("-----end ", place)
        return self.at


def _pem_block(lower: str, place: int, ends: _NextEnd) -> tuple[int, int] | None:
    """A PEM block whose label names no private key (a certificate, a public key, a signature): a
    key's label must say ``PUBLIC`` (``RSA KEY`` alone is a private key's)."""
    m = _PEM_BEGIN.match(lower, place)
    label = m.group(1) if m else ""
    if m is None or "private" in label or (label.endswith("key") and "public" not in label):
        return None
    end = ends(m.end())
    if end < 0 or end > m.end() + 65_536:
        return None
    close = lower.find("-----", end + 9, end + 60)
    return (place, close + 5 if close > 0 else end + 9)
