"""A token beside a word naming a credential: the one construction for vendor keys no rule knows.

Most vendors' keys are hex or lower-case runs (``checklyhqTOKEN=<32 hex>``, ``ZENDESK_KEY=…``,
``Unseal Key 2: …``), which the random-token judge leaves alone by design: alone, hex reads as a
digest and a lower-case run as a name. Beside a word that names a credential — a key ending in
``key``/``token``/``secret``/``pat``/``auth``…, a header (``x-api-key:``), a query parameter
(``?token=``), or prose (``api key is …``, ``access token …``) — such a run is a secret when it clears
a floor suited to its shape:

- hex (a UUID's too): 32+ hex digits, letters and digits both, not a filler;
- one case of letters and digits: 24+ of them, 4+ digits and 4+ letters, near-maximal entropy, no
  word-length runs of letters (a name: ``ubuntu-2204-x64-node18``);
- mixed case: what ``judge.looks_random`` accepts.

What keeps a digest readable: the word must end the key (``key_id``, ``tokenizer`` and ``monkey`` name
no secret), a key or prose word naming public or bookkeeping material (``cache_key``, ``primary_key``,
``page_token``, gpg's ``using RSA key <fingerprint>``) does not count, a run inside a path or a URL's
path does not start after the word, and a placeholder or a reference is never a secret. Commit ids,
lockfile hashes and image digests carry no such word (``commit …``, ``"integrity": "sha512-…"``,
``@sha256:…``), and ``public`` spans them anyway.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from functools import cache

from agentcli.redact.judge import b64decode, entropy, is_text, looks_random, placeholder
from agentcli.redact.nouns import GLUED, POSITIONS, REQUESTS

# Token characters (and ``/``, inside base64) as ``a``, ``=`` as itself, anything else as a space.
_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/"
_MAP = bytes(b"a"[0] if chr(i) in _CHARS else i if chr(i) == "=" else b" "[0] for i in range(256))
_RUN = b"a" * 20 + b"a*={0,2}"  # a literal start: searched in C, 5x faster than a{20,}
_WINDOW = 96  # characters looked back for the credential's word, on the same line
# A cheap first look: a window holding none of these has no credential word.
_STEMS = ("key", "token", "secret", "pat", "auth", "pass", "pw", "cred", "bearer", "licen")

_CRED = (
    r"(?P<w>api[_.\-]?key|keys?|tokens?|secrets?|pat|auth|authorization|credentials?|password|passwd"
    r"|pwd|pw|passphrase|bearer|license|licence)"
)
# After the word, a qualifier a secret's key may carry (``API_KEY_PROD``, ``TOKEN_2``).
_AFTER = r"(?:[_.\-](?:\d{1,2}|v\d|value|prod|production|live|test|dev|staging|b64|hex))?"
# ``KEY=``, ``"token": "``, ``'API_KEY' , '"``, ``x-api-key: ``, ``?token=``, ``<apiKey>``,
# ``setApiKey("``, ``Authorization: Bearer ``.
_ASSIGN = (
    r"(?P<key>[a-z0-9_.\-]{0,48}?)" + _CRED + _AFTER + r"[\"'`\]]{0,2}[ \t]*"
    r"(?:(?:=>|:=|=|:|,|>)[ \t]*[\"'`@]{0,3}|\([ \t]*[\"'`])[ \t]*"
    r"(?:(?:bearer|token|basic|apikey|key)[ \t]+)?\Z"
)
# An authorization header with any scheme: ``SSWS …``, ``GenieKey …``, ``Token token=…``.
_AUTH = (
    r"authori[sz]ation[\"'`]?[ \t]*[:=][ \t]*[\"'`]?[a-z][a-z0-9_.\-]{0,30}[ \t]+"
    r"(?:[a-z0-9_\-]{1,20}=)?[\"']?\Z"
)
# Prose: ``api key is …``, ``sourcegraph access token …``, ``Unseal Key 2: …``, ``token …``,
# ``API token for Checkly: …`` (a name after ``for``/``of`` wants a separator).
_PROSE = (
    r"(?:(?P<q>[a-z]+)[ \t_\-]+)?" + _CRED + r"(?:[ \t]+\d{1,2})?"
    r"(?:[ \t]+(?:for|of)[ \t]+(?P<of>[a-z0-9_.\-]+(?:[ \t]+[a-z0-9_.\-]+)?))?"
    r"[\"'`]?[ \t]*(?:(?P<sep>is|was|=>|:|=|-)[ \t]*)?[\"'`]?\Z"
)


def _words(spaced: str) -> frozenset[str]:
    return frozenset(spaced.split(" "))


_WORD = r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+"
# Words before ``key``/``token`` that name public or bookkeeping material, not a credential.
_NOT_SECRET = (
    _words(
        "cache primary foreign sort partition object hash lookup routing public pub "
        "row unique composite map index group bucket s3 gpg pgp rsa dsa ecdsa ed25519 ssh host fingerprint "
        "kid sha git commit"
    )
    | POSITIONS
    | REQUESTS
)
# Bare ``key`` in prose counts after a name (``mailgun key …``, ``unseal key 2: …``), not after these.
# Words a credential's word may be glued to in a lower-case key (``apitoken``, ``secretkey``).
_GLUED = tuple(sorted(GLUED))
_PROSE_NOT_NAME = _words(
    "the a an this that these those your my our their its his her new old same one which each any no "
    "some every other own first last is are was of for to in on by with from and or"
)
_HEX = r"[0-9a-f]+|[0-9A-F]+"
_LETTERS = r"[a-zA-Z]+"
_LOWER = r"[a-z]+"


@cache
def _re(source: str) -> re.Pattern[str]:
    """``source`` compiled the first time it is used: importing agentcli.redact stays cheap."""
    return re.compile(source)


@cache
def _runs() -> re.Pattern[bytes]:
    return re.compile(_RUN)


def find(text: str, lower: str, ascii: bytes) -> Iterator[tuple[int, int, str]]:
    """(start, end, kind) of each token that clears its shape's floor right after a word naming a
    credential. ``lower`` is ``text`` lower-cased (the same length), ``ascii`` one byte a character."""
    if "hook" in lower:
        yield from _webhook_paths(text, lower)
    for m in _runs().finditer(ascii.translate(_MAP)):
        start, end = m.span()
        value = text[start:end]
        if start and text[start - 1] in "/.\\@:$%{" and not _after_separator(text, start):
            continue  # a URL's or a path's segment, a host, a reference
        # (the line's start looked for in the window only: from each of a long line's runs back to the
        # line's start is quadratic, 2 MB of 21-character words took 2 s)
        line = lower.rfind("\n", max(0, start - _WINDOW), start) + 1
        window = lower[max(line, start - _WINDOW) : start]
        if not any(stem in window for stem in _STEMS) or not _clears_floor(value):
            continue
        if _named(text, window, start - len(window)):
            yield (start, end, "secret")


# A URL's path segment naming a webhook (``/webhooks/``, ``/hooks/``, Teams' ``/webhookb2/``), and the
# segments after it: a webhook's URL is its credential (whoever has it may post), held in those of them
# that are token-like (HubSpot's ``/webhooks/v1/<portal>/<id>``, Mattermost's ``/hooks/<id>``, n8n's
# ``/webhook/<uuid>``); words (``catch``, ``v1``, ``IncomingWebhook``) and numbers alone (GitHub's
# ``/hooks/123``, an API's id) stay readable.
_HOOK = re.compile(r"hooks?(?:b\d)?/")
_SEGMENT = re.compile(r"[A-Za-z0-9_.@\-]{1,128}")
_MAX_SEGMENTS = 6


def _webhook_paths(text: str, lower: str) -> Iterator[tuple[int, int, str]]:
    for m in _HOOK.finditer(lower):
        at = m.start()
        if lower.startswith("web", at - 3):
            at -= 3
        if not at or text[at - 1] != "/" or not _in_url(text, at):
            continue  # not a URL's path (``src/hooks/``, ``.git/hooks/``, ``webhooks/`` alone)
        first = last = -1
        end = m.end()
        for _ in range(_MAX_SEGMENTS):
            segment = _SEGMENT.match(text, end)
            if segment is None:
                break
            if _token_like(segment.group()):
                first, last = segment.start() if first < 0 else first, segment.end()
            end = segment.end() + 1
            if text[segment.end() : end] != "/":
                break
        if first >= 0:
            yield (first, last, "secret")


def _in_url(text: str, at: int) -> bool:
    """Whether ``at`` lies in a URL: ``://`` before it, with no space between (on 256 characters)."""
    window = text[max(0, at - 256) : at]
    scheme = window.rfind("://")
    return scheme >= 0 and not any(c.isspace() for c in window[scheme:])


def _token_like(segment: str) -> bool:
    """A path segment that is an id or a key: 8+ characters, letters and 2+ digits, no filler, no file's
    or host's dot (``useAuth2Token.ts``)."""
    return (
        len(segment) >= 8
        and "." not in segment
        and sum(c.isdigit() for c in segment) >= 2
        and any(c.isalpha() for c in segment)
        and not placeholder(segment)
    )


def _after_separator(text: str, start: int) -> bool:
    """``key: value`` with no space, ``Jenkins-Crumb:…``: a colon after a word, not a URL's ``://``."""
    return text[start - 1] == ":" and text[start - 2 : start - 1].isalnum()


def _named(text: str, window: str, offset: int) -> bool:
    """Whether ``window`` (lower-cased, ending where the token starts) ends with a word naming a
    credential: a key and its separator, or prose."""
    if m := _re(_ASSIGN).search(window):
        key = text[offset + m.start("key") : offset + m.end("w")]
        before = window[m.start("key") - 1] if m.start("key") else ""
        if _key_names_secret(key, m.group("w"), before):
            return True
    if _re(_AUTH).search(window):
        return True
    if m := _re(_PROSE).search(window):
        q, w = m.group("q"), m.group("w")
        if m.group("of") and (not m.group("sep") or not _NOT_SECRET.isdisjoint(m.group("of").split())):
            return False  # ``key of the cache: …``
        boundary = m.start("w") == 0 or not window[m.start("w") - 1].isalnum()
        if not boundary or q in _NOT_SECRET:
            return False
        if m.start() and window[m.start() - 1] == "-":  # a flag: ``--api-key …``, ``-ApiKey …``
            return not w.endswith("s")  # not a list of them (``gpg --recv-keys <fingerprint>``)
        return w not in ("key", "keys") or bool(q and len(q) >= 3 and q not in _PROSE_NOT_NAME)
    return False


def _key_names_secret(key: str, word: str, before: str) -> bool:
    """``key`` (original case, ending with the credential ``word``) is a secret's key: the word starts
    a word of it (``apiKey``, ``FOO_TOKEN``, ``checklyhqTOKEN``, all-caps ``ZENDESKKEY``; not
    ``monkey``) and the word before it names no public or bookkeeping value (``cache_key``)."""
    if before and (before.isalnum() or before == "_"):
        return False  # the key runs on beyond the window: judged by the rules alone
    stem = key[: len(key) - len(word)]
    if stem and stem[-1].isalpha():
        first = key[len(stem)]
        glued = stem.lower().endswith(_GLUED)  # ``mailgunapikey``, ``authtoken``, ``accesskey``
        if not (glued or first.isupper() and (stem[-1].islower() or key.isupper())):
            return False
    words = [w.lower() for w in _re(_WORD).findall(stem)]
    return not (words and words[-1] in _NOT_SECRET)


def random_shaped(value: str) -> bool:
    """A token random by its shape, whatever word is beside it (the floors below)."""
    return _clears_floor(value)


def one_case_token(text: str, start: int, value: str) -> bool:
    """A lower-case token with no word beside it: 24+ letters and digits in one run, 4+ of each, not hex (a
    digest is hex), near-maximal entropy and not pronounceable (the floor beside a credential word),
    outside a path or a URL (a run after ``/``, ``@`` or ``.``: a store path's hash, a host)."""
    core = value.rstrip("=")
    if not core.isalnum() or not core.islower() or _re(_HEX).fullmatch(core):
        return False  # (``to-list-jobs-1481154202164`` is words and a time; upper case, an id's base32)
    return not (start and text[start - 1] in "/@.\\") and _clears_floor(value)


def _clears_floor(value: str) -> bool:
    """A random value by its shape: 32+ hex digits, 24+ letters-and-digits of one case, or a
    mixed-case random token; never a placeholder (``1234567890abcdef…``, ``xxxx``, ``<your-key>``)."""
    value = value.rstrip("=")
    core = value.replace("-", "").replace("_", "")
    if placeholder(value) or not core.isalnum() and not core.replace("+", "").replace("/", "").isalnum():
        return False
    digits = sum(c.isdigit() for c in core)
    letters = len(core) - digits
    if _re(_HEX).fullmatch(core):
        return len(core) >= 32 and digits >= 4 and letters >= 4 and entropy(core) >= 3.0
    if core.isalnum() and (core.islower() or core.isupper()):
        if len(core) < 24 or digits < 4 or letters < 4:
            return False
        runs = _re(_LETTERS).findall(core)
        if max(map(len, runs)) > 20 or _pronounceable(runs):
            return False  # a name or a slug
        return entropy(core) >= min(0.8 * math.log2(min(len(core), 36)), 3.6)
    return looks_random(value) or _case_mixed(core)


def _case_mixed(core: str) -> bool:
    """Letters whose case changes every letter or two (``YXNkZmZmZmZm``), with no digit: no name mixes
    case so (a name's lower-case runs are words: ``CredstashKeyId``), a random token with no digit
    does (one in fifty of 22 characters has none) and so does base64."""
    runs = _re(_LOWER).findall(core)
    if len(runs) < 4 or sum(c.isupper() for c in core) < 4 or any(c.isdigit() for c in core):
        return False
    raw = b64decode(core)
    return sum(map(len, runs)) / len(runs) < 2.0 and entropy(core) >= 3.5 and not (raw and is_text(raw))


def _pronounceable(runs: list[str]) -> bool:
    """Pronounceable runs: vowels are a fifth of random letters, twice that in words; hex's letters
    (a-f) are a third vowels, so a run mostly of hex is judged by the hex digits' entropy alone."""
    letters = "".join(runs).lower()
    if sum(c > "f" for c in letters) <= 4:
        return False
    return sum(c in "aeiou" for c in letters) >= 0.35 * len(letters) and max(map(len, runs)) >= 4
