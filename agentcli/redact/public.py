"""Public material that looks random: digests and checksums, PEM certificates and public keys, SSH
public keys, data URIs, publishable client tokens and values under public-looking keys (``PublicKey``,
``fingerprint``, ``ETag``). A random-looking token inside one of these spans is not a secret.

Each pattern is tried only where its keyword occurs (the caller's one Aho-Corasick pass over the
lower-cased text), and runs on that lower-cased text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_DIGEST = re.compile(
    r"(?:sha-?(?:1|224|256|384|512)|md5|blake2b?|h1|crc32c?)\)?[-:=][ \t]*[a-z0-9+/=_\-]{16,}"
)
_SSH = re.compile(
    r"(?:ssh-(?:rsa|dss|ed25519|ed448)|ecdsa-sha2-nistp\d+"
    r"|sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com)"
    r"(?:-cert-v01@openssh\.com)?[ \t]+aaaa[a-z0-9+/]+={0,3}"
)
_DATA_URI = re.compile(r"data:[a-z0-9.+\-]+/[a-z0-9.+\-]+(?:;[a-z0-9.\-]+=[^;,\s]*)*;base64,[a-z0-9+/=]+")
_PUBLISHABLE = re.compile(r"pk_(?:live|test)_[a-z0-9]{10,}|pk\.eyj[a-z0-9_\-]+\.[a-z0-9_\-]+")
_PEM_BEGIN = re.compile(r"-----begin ([a-z0-9 ]{1,40})-----")
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


def spans(lower: str, at: dict[str, list[int]]) -> Iterator[tuple[int, int]]:
    """Spans of public material in ``lower`` (the lower-cased text); ``at`` maps each of ``KEYWORDS``
    to where it occurs."""
    for keyword, pattern in PATTERNS.items():
        for place in at.get(keyword, ()):
            if m := pattern.match(lower, place):
                yield m.span()
    for place in at.get("-----begin ", ()):
        if span := _pem_block(lower, place):
            yield span
    for keyword in _SAFE_KEY_WORDS:
        for place in at.get(keyword, ()):
            if m := _SAFE_KEY.match(lower, place + len(keyword)):
                yield m.span("v")


def _pem_block(lower: str, place: int) -> tuple[int, int] | None:
    """A PEM block whose label names no private key (a certificate, a public key, a signature): a
    key's label must say ``PUBLIC`` (``RSA KEY`` alone is a private key's)."""
    m = _PEM_BEGIN.match(lower, place)
    label = m.group(1) if m else ""
    if m is None or "private" in label or (label.endswith("key") and "public" not in label):
        return None
    end = lower.find("-----end ", m.end(), m.end() + 65_536)
    if end < 0:
        return None
    close = lower.find("-----", end + 9, end + 60)
    return (place, close + 5 if close > 0 else end + 9)
