"""Which keys name a secret: the nouns (``password``, ``token``, ``secret``, ``apikey``…), the words
that make ``key`` a secret's (``api_key``, ``PrivateKey``), the words a noun may be glued to
(``userpass``), and the words that make a token an id to go on from (``next_page_token``)."""

from __future__ import annotations

import re


def word_set(spaced: str) -> frozenset[str]:
    return frozenset(spaced.split(" "))


PASSWORD_NOUNS = ("password", "passwd", "passphrase", "pwd", "pass")
# Files that hold a credential, named as a key (a Kubernetes Secret's ``.dockerconfigjson:``, ``.netrc:``
# under ``data:``): the value is the file's content, base64 or inline.
CREDENTIAL_FILES = ("dockercfg", "dockerconfigjson", "netrc", "npmrc", "pgpass", "pypirc", "htpasswd")
# Last words of a key that name a secret (and ``authorization``, whose value starts with a scheme).
NOUNS = frozenset(
    (
        *PASSWORD_NOUNS,
        "secret",
        "token",
        "credential",
        "credentials",
        "apikey",
        "auth",
        "session",
        "sessionid",
        "cookie",
        "creds",  # (an abbreviation: in code it names objects, so only a literal assigned whole counts)
        *CREDENTIAL_FILES,
    )
)
# Weak nouns: a plain word under them names a mode or a backend (``auth: oauth2``, ``session: redis``).
WEAK = frozenset({"auth", "session", "sessionid", "cookie"})
_STRONG = ("password", "passwd", "secret")
_ENDINGS = ("password", "passwd", "passphrase", "secret", "token", "apikey")  # ``PGPASSWORD``, ``authtoken``
# ``<qualifier> key`` names a secret key (``api_key``, ``PrivateKey``, ``TokenKey``: a credential's noun
# before ``key`` names the key as that credential); ``primary_key`` and ``public_key`` do not.
QUALIFIERS = word_set(
    "api access secret private signing encryption master client auth account license session shared "
    "storage subscription webhook consumer app admin service hmac jwt cookie token"
)
# Words a credential's noun may be glued to in a one-word key (``userpass``, ``accesskey``, ``apitoken``).
GLUED = QUALIFIERS | word_set("bot user bearer license licence deploy personal db root store key")
# Words naming a place in a sequence or a change: a token or key they qualify is an id that a server
# hands back to go on from (``next_page_token``, ``nextToken``, ``NextContinuationToken``, AWS's
# ``ChangeToken``, ``sync_token``, ``resume_token``), not a credential.
POSITIONS = word_set(
    "page pages pagination paging next prev previous continuation continue cursor sync change changes "
    "resume marker offset scroll iterator position checkpoint bookmark watermark shard seek start after "
    "before last"
)
# Words naming a request a client makes up an id for: AWS's ``ClientRequestToken`` and
# ``LifecycleActionToken``, an ``idempotency_token`` (a UUID that makes a retried call run once).
REQUESTS = word_set("idempotency dedup dedupe request action")
# Words a secret key may end with after its noun: ``PASSWORD_CONFIRMATION``, ``CREDENTIALS_B64``.
_SUFFIXES = frozenset(
    {"confirmation", "confirm", "value", "b64", "base64", "plain", "plaintext", "raw", "hex"}
)
WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def position_id(key: str) -> bool:
    """A token or key whose word before it names a position, a page or a change: an id to go on from
    (``next_page_token``, ``nextToken``, ``ChangeToken``), or a request the client names
    (``ClientRequestToken``); not ``refresh_token`` or ``access_token``."""
    words = [w.lower() for w in WORD.findall(key)]
    return len(words) > 1 and (words[-2] in POSITIONS or words[-2] in REQUESTS)


def noun_of(key: str) -> str | None:
    """The secret a key names (its last word, or ``key`` after a qualifier), or None."""
    words = [w.lower() for w in WORD.findall(key)]
    # a qualifier after the noun (``PASSWORD_CONFIRMATION``) or a number (``password01``, ``TOKEN_2``)
    while len(words) > 1 and (words[-1] in _SUFFIXES or words[-1].isdigit()):
        words.pop()
    if not words:
        return None
    last = words[-1]
    if last in NOUNS or last == "authorization":
        return last
    if last == "key" and len(words) > 1 and words[-2] in QUALIFIERS:
        return "key"
    if words[-3:] == ["secret", "key", "base"]:
        return "key"
    if ending := next((e for e in _ENDINGS if last.endswith(e)), None):
        return ending
    # a noun glued to a word naming whose it is: ``userpass``, ``dbpwd``, ``accesskey`` (not ``bypass``,
    # ``monkey``)
    if (glued := next((n for n in ("pass", "pwd", "key") if last.endswith(n)), None)) and last[
        : -len(glued)
    ] in GLUED:
        return glued
    # a plural or a misspelling: ``secrets``, ``passwords``, ``secrete``
    return next((n for n in _STRONG if last.startswith(n) and len(last) - len(n) <= 2), None)


def kind(noun: str) -> str:
    return "password" if noun in PASSWORD_NOUNS else "secret"


def spelt(word: str, noun: str) -> bool:
    """Whether ``word`` is ``noun`` spelt another way: one letter added, dropped or changed (another
    language's ``passord``/``passwort``, a typo's ``pasword``), for nouns of 6+ letters."""
    if len(noun) < 6 or abs(len(word) - len(noun)) > 1 or word == noun:
        return word == noun
    if len(word) == len(noun):
        return sum(a != b for a, b in zip(word, noun, strict=True)) == 1
    short, long = sorted((word, noun), key=len)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def names_key(v: str, key: str) -> bool:
    """A name made of its key's own words (``ACCESS_TOKEN = "accessToken"``): a field's or a constant's
    name, not its value; two words at least (``admin_password = "admin"`` is a default password)."""
    words = [w.lower() for w in WORD.findall(v) if w != "_"]
    if len(words) < 2 or not re.fullmatch(r"[A-Za-z][A-Za-z_\-.]*", v):
        return False
    return set(words) <= {w.lower() for w in WORD.findall(key)}


_WORDS_JOINED = re.compile(r"_*[a-z]+(?:[_\-][a-z]+)+_*")  # open_sesame, correct-horse-battery
_CAMEL_WORDS = re.compile(r"[A-Za-z]*[a-z][A-Z][A-Za-z]*")


def words_password(v: str, noun: str, key: str, given: bool, quoted: bool) -> bool:
    """A password made of words (``open_sesame``, ``correct-horse-battery``, quoted ``"openSesame"``)
    under a key naming a password, as a literal (quoted, alone on a config line or an option's, ``given``):
    not when a word is
    a credential's noun or the key's own, or it names a secret itself (``user_password``,
    ``db-password-prod``, ``api_key``: a field's name)."""
    if noun not in PASSWORD_NOUNS or not (quoted or given):
        return False
    if not (_WORDS_JOINED.fullmatch(v) or (quoted and _CAMEL_WORDS.fullmatch(v))):
        return False
    words = {w.lower() for w in WORD.findall(v)}
    own = {w.lower() for w in WORD.findall(key)}
    return not (noun_of(v) or any(w in NOUNS or w in own or spelt(w, noun) or noun in w for w in words))


def numeric_secret(v: str, noun: str) -> bool:
    """A number that is a secret by its length: a numeric password of 8+ digits, a numeric key or
    token of 16+ (past a millisecond timestamp's 13); shorter ones are ports, counts and ids."""
    return noun not in WEAK and len(v) >= (8 if noun in PASSWORD_NOUNS else 16)
