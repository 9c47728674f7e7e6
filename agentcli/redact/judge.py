"""The judgement calls on one value: is this token random or a hash, an id, base64 of text? Is this
value a literal or a reference to one (a variable, an attribute, a type) or a placeholder?"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Callable
from itertools import pairwise

PLACEHOLDER = re.compile(r"\[REDACTED:[a-z0-9\-]+\]")

_HEX = re.compile(r"[0-9a-fA-F\-]+")
_LOWER_RUN = re.compile(r"[a-z]+")
_DIGIT = re.compile(r"[0-9]")
PLACEHOLDER_WORDS = frozenset(
    {
        "password",
        "passwd",
        "passphrase",
        "changeme",
        "redacted",
        "example",
        "secret",
        "token",
        "required",
        "optional",
        "string",
        "undefined",
        "none",
        "null",
        "nil",
        "true",
        "false",
        "yes",
        "no",
        "on",
        "off",
        "enabled",
        "disabled",
        "default",
        "auto",
        "todo",
        "tbd",
        "your-api-key",
        "your_api_key",
        "placeholder",
        "dummy",
        "value",
        # metasyntactic variables (RFC 3092): ``'password': 'bar'``, ``uri://foo:bar@example.com``
        "foo",
        "bar",
        "baz",
        "qux",
        "quux",
        "foobar",
    }
)
# The noun made the owner's: ``mypassword``, ``your_secret``, ``my-api-key`` name what goes there.
_MY_NOUN = re.compile(
    r"(?i)(?:my|your)[-_]?(?:password|passwd|passphrase|pass|secret|token|api[-_]?key|key)s?"
)
# Magic numbers of files that are sent as base64 (images, fonts, documents, archives): data, not keys.
_FILE_MAGIC = (
    b"\x89PNG",
    b"\xff\xd8\xff",
    b"GIF8",
    b"RIFF",
    b"%PDF",
    b"PK\x03\x04",
    b"\x1f\x8b",
    b"wOF",
    b"\x00\x00\x00",
)


_PRINTABLE = bytes(range(32, 127)) + b"\t\n\r"


_C_LOG_C = [0.0] + [c * math.log2(c) for c in range(1, 4097)]  # c·log2(c), looked up in C


def entropy(value: str) -> float:
    """Shannon entropy in bits per character: log2(n) - Σ c·log2(c) / n over character counts c."""
    n = len(value)
    if not n:
        return 0.0
    counts = Counter(value).values()
    if n > 4096:
        return -sum(c / n * math.log2(c / n) for c in counts)
    return math.log2(n) - sum(map(_C_LOG_C.__getitem__, counts)) / n


def b64decode(value: str) -> bytes | None:
    """``value`` as base64 (standard or URL-safe, padding optional), or None."""
    value = value.rstrip("=")
    if len(value) % 4 == 1:
        return None
    try:
        return base64.b64decode(
            value + "=" * (-len(value) % 4), altchars=b"-_" if "-" in value or "_" in value else None
        )
    except (binascii.Error, ValueError):
        return None


def is_text(raw: bytes) -> bool:
    """Readable text (a user's notes, an encoded config), not binary."""
    if len(raw) < 8 or not raw.isascii():
        return False
    return len(raw.translate(None, _PRINTABLE)) < 0.05 * len(raw)  # what is left is control bytes


def is_file_data(raw: bytes) -> bool:
    """An encoded file (image, font, archive) or an SSH public key blob, judged by its first bytes."""
    return raw.startswith(_FILE_MAGIC)


def looks_random(value: str) -> bool:
    """A long token of mixed case and digits, with near-maximal entropy for its length, that is
    neither hex (hashes, SHAs, UUIDs) nor base64 of text or of a file."""
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
    raw = b64decode(value)
    return raw is None or not (is_text(raw) or is_file_data(raw))


_JOINT = re.compile(r"[_-]+")
_ONE_CASE = re.compile(r"[a-z0-9]+|[A-Z0-9]+")
_CAMEL_MAX = 20  # a name's CamelCase part (``RSAPrivateKey``); a longer one reads as random letters


def identifier(value: str) -> bool:
    """A name joined by ``_``/``-`` from words, initialisms and numbers (``i2d_RSAPrivateKey_bio``,
    ``EVP_PKEY_CTX_set1_id``, ``id_pe_ipAddrBlocks_v2``, a model's ``Dolly_Malion-6b-4bit-128g``): three
    or more parts, each in one case or CamelCase whose lower-case runs are words (3+ letters on average,
    as ``looks_random`` asks of a whole token), and more one-case words than CamelCase parts. A random
    token's parts are mixed case and long: about 1 in 65,000 random tokens of 20-64 characters
    with ``_`` and ``-`` among them reads so."""
    parts = [p for p in _JOINT.split(value) if p]
    if len(parts) < 3:
        return False
    words = camel = 0
    for part in parts:
        if _ONE_CASE.fullmatch(part):
            words += sum(c.isalpha() for c in part) >= 2
            continue
        runs = _LOWER_RUN.findall(part)
        if len(part) > _CAMEL_MAX or not runs or sum(map(len, runs)) / len(runs) < 3.0:
            return False
        camel += 1
    return words > camel


# A word's hump in a CamelCase name: a capital and lower-case letters, with a vowel and no run of four
# consonants (``Models``, ``Spend``, ``By``; not a random token's ``Xwzq``).
_HUMP = re.compile(r"[A-Z]?[a-z]{2,}")
_VOWEL = re.compile(r"[aeiouyAEIOUY]")
_CONSONANTS = re.compile(r"[b-df-hj-np-tv-xzB-DF-HJ-NP-TV-XZ]{4}")
_WORDED = 0.85


def worded(value: str) -> bool:
    """A name of words run together (``Last30dTopEndUsersSpend``, ``XF86VidModeGetAllModeLines``,
    ``r_Suffix_Noun_Step2a``): 85 % of its letters in humps that read as words. About 1 in 100,000
    random tokens the random-token judge takes reads so (letters and digits, base64, base64url of 20-64
    characters: 3 of 385,000)."""
    letters = sum(c.isalpha() for c in value)
    humps = (h for h in _HUMP.findall(value) if _VOWEL.search(h) and not _CONSONANTS.search(h))
    return letters > 0 and sum(map(len, humps)) >= _WORDED * letters


def flag_cluster(value: str) -> bool:
    """A usage line's cluster of one-letter options (ssh's ``[-46AaCfGgKkMNnqsTtVvXxYy]``): a ``-`` and
    8+ different characters in the order getopt's authors sort them (digits, then each letter's
    capital before its small one). A random token's characters repeat and fall in no order."""
    chars = value[1:]
    order = [(c.lower(), c.islower()) for c in chars]
    return value[:1] == "-" and len(chars) >= 8 and all(a < b for a, b in pairwise(order))


# Fillers a real key never holds: x-runs and masks, counting sequences, the vendors' documented
# examples (AWS' ``AKIAIOSFODNN7EXAMPLE``), and one character or a short unit filling much of the
# value (``AKIAZZZZZZZZZZZZZZZZ``, ``abcd1234abcd1234…``; not Twitter's ``AAAAAAAAAAAAAAAAAAAAA…`` prefix).
_FILLER = re.compile(r"(?i)x{4,}|\*{3,}|\.{4,}|example|placeholder|dummy|changeme|redacted|fake")
_REPEAT = re.compile(r"(.)\1{5,}|(.{2,8}?)\2{2,}")
_ASCENDING = 6  # a run of this many consecutive characters (``123456``, ``klmnop``) is a counting filler
# A reference to a secret kept elsewhere: $VAR, ${VAR}, {{ var }}, <your-key>, %VAR%, process.env.X,
# os.environ[...], os.getenv(...), ENV["X"], secrets.X — what the value starts with.
_REFERENCE = re.compile(
    r"\$\{?\{?[A-Za-z_][\w.]*|\{\{|<[A-Za-z_][\w .\-]*>|%[A-Za-z_]\w*%|process\.env\b|os\.environ\b"
    r"|os\.getenv\b|getenv\(|ENV\[|\$\(|secrets\.[A-Za-z_]|@[A-Za-z_]\w*@"
    r"|\\fI"  # roff's italics: what a man page's reader fills in (``password \fIstring\fR``)
)


_BARE_DOLLAR = re.compile(r"\$(?![A-Za-z_{(\d$])")


def literal_dollar(value: str) -> bool:
    """A value starting with ``$`` that holds a ``$`` starting no name (``$omespeci@!ch@r$``): no shell
    or template reads it as a variable, so it is literal text, not a reference."""
    return value.startswith("$") and _BARE_DOLLAR.search(value) is not None


# What a value led by ``%`` or ``*`` opens when it is a template's slot or a mask: ``%(name)s``, ``%s``,
# ``%-10d``, ``%1``, ``%{x}``, ``%APPDATA%``; ``**``, ``*.example.com``, ``*`` alone.
_SLOT_LEAD = re.compile(
    r"%(?:[({]|[-#0 +]?\d*(?:\.\d+)?[sdifouxXeEgGcrab](?![A-Za-z0-9])|\d+(?!\w)|[A-Za-z_]\w*%)|\*(?:[*.]|\Z)"
)


def symbol_led(value: str) -> bool:
    """A quoted password led by a symbol (``"%hYp.S7w*Ep"``, ``"~!jyVeD@b+5"``, ``"*1HiE@C5^jo"``,
    ``"!NmKlqP@KU"``): 8+ characters, letters and digits among them, no space, and a lead that opens no
    template's slot nor mask. (Unquoted, YAML reads ``! & * ~`` as a tag, anchor, alias or null.)"""
    return (
        value[:1] in "%*!~"
        and len(value) >= 8
        and not any(c.isspace() for c in value)
        and any(c.isalpha() for c in value)
        and any(c.isdigit() for c in value)
        and _SLOT_LEAD.match(value) is None
        and not value.startswith("~/")
    )


_RUN = re.compile(r"[A-Z]?[a-z]+|[A-Z]+|[0-9]+")  # a name's humps, an initialism, a number


def short_random(value: str) -> bool:
    """A short machine key (8-11 letters and digits, ``4yPgA2Bl``): its case and digits change so often
    that its runs of one kind are at most two characters long on average, where a name's humps are
    words (``OAuth2Token``, ``Sha256Hmac``, ``x509Cert``); 92 % of random ones read so."""
    return (
        8 <= len(value) < 12
        and value.isascii()
        and value.isalnum()
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
        and 2 * len(_RUN.findall(value)) >= len(value)
    )


def placeholder(value: str) -> bool:
    """A filler or a reference standing where a secret would (``ghp_xxxx…``, ``$API_KEY``)."""
    value = value.strip("\"'`")
    if _REFERENCE.match(value) and not literal_dollar(value):
        return True
    if _FILLER.search(value) or value.lower() in PLACEHOLDER_WORDS:
        return True
    if len(set(value)) == 1 or _ascending(value):
        return True
    filled = sum(len(m.group()) for m in _REPEAT.finditer(value))
    return filled >= 0.4 * len(value)


def _ascending(value: str) -> bool:
    run = 1
    for a, b in zip(value, value[1:], strict=False):
        run = run + 1 if ord(b) == ord(a) + 1 and a.isalnum() else 1
        if run >= _ASCENDING:
            return True
    return False


def not_template(value: str) -> bool:
    return not (
        value.startswith(("$", "{", "%", "<", "*", "#", "[")) or set(value) <= {"*", "x", "X", ".", "-"}
    )


def _field(value: str) -> bool:
    """A connection string's field value: not a template's slot, though it may start with ``#``
    (``Password=#gets0m3;``, where a ``#`` is no CSS id nor comment)."""
    return not_template(value) or (value.startswith("#") and not value.startswith("#{"))


def _password_hash(value: str) -> bool:
    """A crypt(3)-style hash whose hash part (after its last ``$``) is no filler (``$2a$10$xxxx…``)."""
    return not placeholder(value.rsplit("$", 1)[-1])


def _varied(value: str) -> bool:
    """Provider formats with a common prefix (``sk-``, ``SK``): the body must not be a word."""
    body = value[3:] if value[:3].lower() == "sk-" else value[2:]
    return entropy(body) >= 3.0 and not body.isalpha()


# The passwords gitleaks' own curl-auth-user rule allows (its allowlist): documentation's defaults.
_DEFAULT_PASSWORD = re.compile(r"(?i)change(?:it|me)|pass(?:word)?|pwd|test|token|\*+|x+")
# A private key's base64 body is hundreds of characters; gitleaks' private-key rule asks for 64 at least.
_PEM_END = re.compile(r"-----END[A-Z0-9 ]* KEY")
_PEM_BODY_MIN = 64


def _credential(value: str) -> bool:
    """The password of a ``user:password`` pair, not a uid:gid (``docker run -u 1000:1000``) nor a
    documented default (``-u user:pass``, ``test:test``), nor a URL's rest (``-U http://host/…``)."""
    return (
        not_template(value)
        and not value.isdigit()
        and not _DEFAULT_PASSWORD.fullmatch(value)
        and not value.startswith("//")
    )


# A port or a port mapping (``5432``, ``8080:80``, ``127.0.0.1:80:80/tcp``): ``-p``'s other meaning.
_PORT = re.compile(r"[\d.:\[\]]+(?:/[a-z]+)?")


def _option_password(value: str) -> bool:
    """A command line's ``-p`` value after a user option: not a port, another option or a reference."""
    return not_template(value) and not value.startswith("-") and not _PORT.fullmatch(value)


def _url_password(value: str) -> bool:
    """A URL's password, not a documentation's default (``postgres://user:pass@localhost``, the same
    defaults as curl's ``-u user:pass``; a number is a password here, no uid:gid)."""
    return not_template(value) and not _DEFAULT_PASSWORD.fullmatch(value)


def _key_block(value: str) -> bool:
    """A private key block with a body (``BEGIN … anything … END`` is an example); a block cut off
    before its END line is judged a key (its body may be what was cut)."""
    end = _PEM_END.search(value)
    if end is None:
        return True
    body = value[value.find("-----", value.find("-----") + 5) + 5 : end.start()]
    return sum(c.isalnum() or c in "+/=" for c in body) >= _PEM_BODY_MIN


CHECKS: dict[str, Callable[[str], bool]] = {
    "credential": _credential,
    "key_block": _key_block,
    "varied": _varied,
    "not_template": not_template,
    "url_password": _url_password,
    "option_password": _option_password,
    "random": looks_random,
    "password_hash": _password_hash,
    "field": _field,
}


# What a password of symbols only is made of (not a space, not a letter or digit).
_SYMBOLS = frozenset("!@#$%^&*()[]{}<>?~|;:,=+-_./'\"`")


def symbols_only(v: str) -> bool:
    """A password of symbols only: 4+ of them, 3+ different, none a space (not ``***``, ``--``)."""
    return len(v) >= 4 and len(set(v)) >= 3 and all(c in _SYMBOLS for c in v)


_MIN_COOKIE = 16


def session_cookie(value: str) -> bool:
    """A cookie's value a server made: its first pair's value, 16+ characters and no space (RFC 6265's
    cookie-octets); ``oreo=doublestuff``, ``Token=ABCDE`` and ``JSESSIONID abc123`` are examples."""
    pair = value.split(";", 1)[0].strip().strip("\"'")
    return not any(c.isspace() for c in pair) and len(pair.split("=", 1)[-1]) >= _MIN_COOKIE


def metavariable(value: str) -> bool:
    """A flag's argument in capitals, in any script (``--passwd=FILE``, ``DATEI``, ``ФАЙЛ``): what the
    reader of a usage line or a man page fills in."""
    return value.isalpha() and value.isupper()
