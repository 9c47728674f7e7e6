"""Values under secret-looking keys, in every shape a config takes: YAML, JSON, .env, TOML, INI,
Java properties, XML, code assignments, command-line flags, .netrc, libpq and ADO strings.

A key is secret-looking when its last word names a secret (``DB_PASSWORD``, ``clientSecret``,
``api-key``, ``spring.datasource.password``; not ``password_min_length`` nor ``secretName``). Its
value is then a secret if it is a literal: quoted, or alone on a config line (spaces allowed, so a
passphrase goes whole), or a word in a ``key=value`` string — and not a reference (a variable, an
attribute, a call, a type, ``${VAR}``), a placeholder, a path, a label or prose (``Password: must be
at least 12 characters.``). Which words name a secret is ``nouns``'s; where a string literal lies in
code (prefixes, format strings, parallel assignments) is ``code``'s.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from agentcli.redact import code, context, fields, gitleaks, judge
from agentcli.redact.annotations import (
    DOTTED,
    TYPES,
    annotation,
    class_name,
    code_goes_on,
    documented,
    dotted_token,
    field_name,
    past_annotation,
    renamed,
    union,
)
from agentcli.redact.judge import PLACEHOLDER, PLACEHOLDER_WORDS, entropy, looks_random, not_template
from agentcli.redact.nouns import (
    CREDENTIAL_FILES,
    NOUNS,
    PASSWORD_NOUNS,
    QUALIFIERS,
    WEAK,
    WORD,
    kind,
    names_key,
    noun_of,
    numeric_secret,
    position_id,
    spelt,
    word_set,
    words_password,
)

_SCHEMES = frozenset({"basic", "bearer", "token", "digest", "negotiate", "ntlm", "apikey", "key", "sso-key"})

# Where the scan looks: every noun, and every ``<qualifier><sep>key``.
KEYWORDS = sorted(
    {"password", "passwd", "passphrase", "pwd", "pass", "secret", "token", "credential", "creds", "auth"}
    | set(CREDENTIAL_FILES)
    | {"session=", "sessionid", "cookie"}  # a session cookie's value (not every "session" in code)
    | {f"{q}{sep}key" for q in QUALIFIERS for sep in ("", "_", "-", ".")}
)

_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
# After the keyword (lower-cased text): the rest of the key, a closing quote, the separator.
# (a key may be a quoted subscript assigned to: ``$config['db_password'] = …``, ``ENV["API_TOKEN"] = …``)
_TAIL = re.compile(
    r"[a-z0-9_.\-]{0,48}(?:\[\d{0,4}\])?([\"']?)(?:(?<=[\"'])\](?=[ \t]*:?=(?!=)))?"
    r"[ \t]*(===|!==|!=|:=|=>|==|=|::|:|>|,)?[ \t]*"
)
_SUBSCRIPT = re.compile(r"\[\d{0,4}\]\Z")  # ``char secret[25] = "…"``: an array's size, not the key's
# ``std::string secret("…")``: a declaration (a type before the name) initialised from a literal.
_TYPE_BEFORE = re.compile(r"[A-Za-z_][\w:<>]*[ \t]+\Z")
_STATEMENT_END = re.compile(r"[ \t]*;?[ \t]*(?:\n|\Z)")
# ``if (api_key == "…")``: a literal compared with a secret is that secret, hard-coded.
_CALL = re.compile(r"[A-Za-z_$][\w.$]*[ \t]*[(\[]")  # f(…, a.b[…: code however its brackets end
_TOKEN = re.compile(r"[A-Za-z0-9_\-+/=.~]{16,}")
_MIN_KEY = 12
_MACHINE_NOUNS = frozenset({"key", "apikey", "token"})  # what a program generates, long and random
_SYMBOLS = frozenset("!@#$%^&*()[]{}<>?~|;:,")
_COMPARISONS = frozenset({"===", "!==", "==", "!="})
_YODA = re.compile(r"([\"'])((?:(?!\1)[^\n\\]){3,256})\1[ \t]*(?:===|!==|==|!=)[ \t]*\Z")
# Words that make any key secret-looking when its value is also random (``mySecretString``).
_INNER_NOUNS = frozenset(
    {"secret", "token", "password", "passwd", "pass", "apikey", "credential", "credentials"}
)
_LINE_PREFIX = re.compile(code.NUMBERED + r"[ \t]*(?:-[ \t]+)?(?:(?:export|ENV|ARG)[ \t]+)?[\"']?")
_COMMENT_PREFIX = re.compile(code.NUMBERED + r"[ \t]*(?:#|//|;)[ \t]*[\"']?")
_ENV = re.compile(r"(?:^|\n)[ \t]*ENV[ \t]+\Z")  # a Dockerfile's ``ENV KEY value`` (its older form)
_NETRC = re.compile(r"\b(?:machine|login)[ \t]")
_NETRC_INLINE = re.compile(r"\blogin[ \t]+\S+[ \t]+\Z")  # machine h login me password …
_INLINE_VALUE = re.compile(r"[^\s'\"`,;()\[\]{}<>&\\]{1,256}")
_LINE_VALUE = re.compile(r"(?:[^\n\r\\]|\\(?![nr\"]))*")
_XML_VALUE = re.compile(r"([^<\n]{1,256})</")
_WORD_VALUE = re.compile(r"[^\s'\"`]{1,256}")

_FUNCTION_WORDS = word_set(
    "a an the to of for in on at by with from is are be was were it its this that your you we our must "
    "should will can may not or and if when then than as used use see please enter"
)
# Verbs that open an instruction standing where a value would (``"Get this from elsewhere"``, ``"set in
# CI"``, ``"ask the ops team"``): with a function word after them, prose telling where the value is.
_INSTRUCTIONS = word_set(
    "get set put add insert replace fill use ask see enter paste change generate obtain copy provide fetch "
    "load read find contact request retrieve supply specify configure define update create edit override "
    "leave check look take grab store keep todo fixme tbd"
)
_WHERE = word_set("here there elsewhere later me yours")
_CODE = re.compile(
    r"[()\[\]{}]|==(?=.)|=>|::|&&|\|\||\?[?.]|^(?:await|new|lambda|function|return|yield)\b| [-+*/] "
)
_PATH = re.compile(r"(?:~|\.{1,2})?/[\w.\-/]*")
_URL = re.compile(r"[a-z][a-z0-9+.\-]*://[^\s@]*", re.I)
_UPPER_SNAKE = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_SUBSTITUTION = re.compile(r"\$\([a-z][\w .\-]*\)")  # ``$(openssl rand -hex 32)``: a command's output
_LOWER_SNAKE = re.compile(r"_*[a-z]+(?:_[a-z]+)+_*")  # (``_private``, ``__dunder__`` too)
_LAYOUT = re.compile(r"[A-Za-z_]+(?::[A-Za-z_]+){2,}:?")
_LOWER_KEBAB = re.compile(r"[a-z]+(?:-[a-z]+)+")
_CAMEL = re.compile(r"[A-Za-z]*[a-z][A-Z][A-Za-z]*")  # a compound name: hashedPassword, SecretStr
_PLAIN = re.compile(r"[A-Za-z]+[0-9]*")
# Values that are public by design: publishable client keys, public keys, digests.
_PUBLIC_PREFIXES = ("pk.", "pk_live_", "pk_test_", "ssh-", "ecdsa-", "sha256:", "sha512-", "sha384-", "data:")
_WORD_AFTER = re.compile(r" [a-z]{2,}\b")  # the sentence a word begins goes on
_SCHEME_VALUE = re.compile(r"([A-Za-z][A-Za-z\-]*)[ \t]+(\S+)")


Span = tuple[int, int, str]


def find(text: str, lower: str, places: Iterable[int]) -> Iterator[tuple[int, int, str]]:
    """(start, end, kind) of each secret value under a secret-looking key; ``places`` are where
    ``KEYWORDS`` occur in ``lower`` (``text`` lower-cased, the same length)."""
    done = -1
    for place in sorted(places):
        if place < done:
            continue  # inside a key or value already judged (``pass`` within ``password``)
        m = _TAIL.match(lower, place)
        sep = m.group(2) if m else None
        if m is None or sep == "::" or documented(text, place, sep, _key_start):
            continue
        start = _key_start(text, place)
        if (paired := _paired(text, place, start, m)) is not None:
            hit, done = paired
            if hit:
                yield hit
            continue
        if (apart := _apart(text, start, m)) is not None:
            hits, done = apart
            yield from hits
            continue
        if sep is None and m.end() == m.end(1) and not _declared(text, place, m):
            continue  # no separator at all
        if sep is None and not (
            code.flag(text, start)
            or lower.startswith(("password", "passwd"), start)
            or _declared(text, start, m)
            or _ENV.search(text, max(0, start - 24), start)
        ):
            continue  # a space separates only a flag, .netrc's ``password``, a declaration's value, ENV's
        done = m.start(1)
        key = _SUBSCRIPT.sub("", text[start:done])
        noun = noun_of(key)
        if sep in _COMPARISONS:
            if noun and (pair := _compared(text, noun, key, m.end())):
                yield pair
                done = max(done, pair[1])
            continue
        if _no_value(noun, key, sep):
            continue
        inner = noun is None and any(w.lower() in _INNER_NOUNS for w in WORD.findall(key))
        span = _value_span(text, start, m) if noun or inner else None
        if span is None:
            continue
        vstart, vend, quoted, style = span
        if inner:  # the secret word is not the key's last: a random or password-shaped value is one
            value = text[vstart:vend].rstrip(",;")
            token = _TOKEN.fullmatch(value) and looks_random(value)
            found = (vstart, vstart + len(value)) if token or _shaped(value, key, quoted, style) else None
            noun = "secret"
        else:
            found = _judge(text, noun or "", key, vstart, vend, quoted, style)
        if found:
            yield (*found, kind(noun or ""))
            done = max(done, found[1])


def _no_value(noun: str | None, key: str, sep: str | None) -> bool:
    """An id to go on from (``next_page_token``); a credential file named outside a mapping's key; a
    test run's verdict (``PASS: ar thin archive``, automake's and DejaGnu's logs, Go's ``--- PASS:``)."""
    if key == "PASS" and sep == ":":
        return True  # (a password under that name is ``.env``'s ``PASS=…``)
    return noun in CREDENTIAL_FILES and sep not in (":", "=") or noun in _MACHINE_NOUNS and position_id(key)


def _paired(text: str, place: int, start: int, m: re.Match[str]) -> tuple[Span | None, int] | None:
    """A key whose value a shape of its own pairs with it: a literal compared first (``"…" ==
    password``), one of a parallel assignment's names (``a, password = "x", "y"``), a name attribute
    and its value attribute (``<add key="…" value="…"/>``), a name field and its value field (``- name:
    DB_PASSWORD`` / ``value: …``). What it finds, and where the scan goes on; None when the key is in no
    such shape (and a path's segment, ``/forgot-password``, is no key at all)."""
    key_end, sep = m.start(1), m.group(2)
    key = text[start:key_end]
    if sep is None and (yoda := _yoda(text, place, m.end(1))):
        return yoda, yoda[1]
    if start and text[start - 1] == "/":
        return None, m.end()
    if sep in (None, ",", "=", ":=") and (assigned := code.parallel(text, start, key_end)):
        noun = noun_of(key)
        found = _judge(text, noun, key, *assigned, "inline") if noun else None
        return ((*found, kind(noun)) if found and noun else None), key_end
    if (
        sep is None
        and (m.group(1) or text[start - 1 : start] == "<")
        and (attr := fields.attribute_value(text, start, m.end(1)))
    ):
        noun = noun_of(key)
        secret = noun and literal(text[attr[0] : attr[1]], noun, key, True, "inline")
        return ((*attr, kind(noun)) if secret and noun else None), max(m.end(), attr[1]) if noun else m.end()
    if field := fields.field_value(text, start, key_end):
        noun = noun_of(key)
        found = _judge(text, noun, key, *field, "line") if noun else None
        return ((*found, kind(noun)) if found and noun else None), key_end
    return None


def _apart(text: str, start: int, m: re.Match[str]) -> tuple[list[Span], int] | None:
    """The values a key names apart from it: the items of a list under it (``passwords:`` and its ``-
    …`` lines, ``"tokens": ["…", "…"]``), or the default a declaration block gives it (CloudFormation's
    ``Default:``, Terraform's ``variable "db_password" { default = "…" }``). What it finds, and where
    the scan goes on; None when the key gives no such shape."""
    sep, key_end = m.group(2), m.start(1)
    key = text[start:key_end]
    if not (sep in (":", "=", ":=", "=>") or (sep is None and m.group(1))):
        return None
    if sep is not None and (listed := fields.items(text, start, m.end())):
        plural = key.endswith(("s", "S"))  # a list's key names its items in the plural: ``api_keys``
        noun = noun_of(key) or (noun_of(key[:-1]) if plural else None)
        if not noun or noun in WEAK:
            return None  # (a list under ``auth`` holds scopes or modes: ``petstore_auth: ["read:pets"]``)
        values, end = listed
        machine = noun in _MACHINE_NOUNS  # a list of keys or tokens: each machine-made, random-looking
        hits = [_judge(text, noun, key, *v, "line") for v in values if not machine or _random(text, v)]
        return [(*hit, kind(noun)) for hit in hits if hit], end
    if (value := fields.default(text, start, m.end())) and (noun := noun_of(key)):
        found = _judge(text, noun, key, *value, "line")
        return ([(*found, kind(noun))] if found else []), key_end
    return None


def _random(text: str, value: tuple[int, int, bool]) -> bool:
    return context.random_shaped(text[value[0] : value[1]])


def _compared(text: str, noun: str, key: str, at: int) -> Span | None:
    """``password == "…"``: a literal compared with a secret-named variable (not a format string)."""
    pair = code.string(text, at)
    if (
        pair is None
        or code.formatted(text, at, pair)
        or not literal(text[pair[0] : pair[1]], noun, key, True, "inline")
    ):
        return None
    return (*pair, kind(noun))


def _shaped(value: str, key: str, quoted: bool, style: str) -> bool:
    """A value shaped like a password (one word of 8+ characters, letters and symbols other than a
    name's ``-_.``) that is a literal, under a key naming a secret before its last word
    (``my_password_secure``, ``apikey_myservice``), on its line or a commented-out one: not a name or id."""
    if len(value) < 8 or any(c.isspace() for c in value) or not (quoted or style in ("line", "comment")):
        return False
    letters = any(c.isalpha() for c in value)
    symbols = any(not c.isalnum() and c not in "-_.:" for c in value)  # (``urn:ietf:params:…`` is a name)
    return letters and symbols and literal(value, "secret", key, quoted, style)


def _declared(text: str, key: int, m: re.Match[str]) -> tuple[int, int] | None:
    """A literal given to a name without ``=``: a C++ declaration's ``Type secret("…")``, or a
    directive's ``password "…";`` alone on its line. The literal's span, or None."""
    at = m.end()
    if text[at : at + 1] == "(" and at == m.end(1):
        if not _TYPE_BEFORE.search(text, max(0, key - 64), key):
            return None
        quoted = code.quoted(text, at + 1)
        return quoted if quoted and text[quoted[1] + 1 : quoted[1] + 2] in (")", ",") else None
    if at == m.end(1) or _line_style(text, key) != "line":
        return None
    quoted = code.quoted(text, at)
    return quoted if quoted and _STATEMENT_END.match(text, quoted[1] + 1) else None


def _yoda(text: str, place: int, key_end: int) -> tuple[int, int, str] | None:
    """``if ("…" == password)``: a literal compared with a secret-named variable, written first."""
    start = _key_start(text, place)
    noun = noun_of(text[start:key_end])
    m = _YODA.search(text, max(0, start - 300), start) if noun else None
    if m is None or not literal(m.group(2), noun or "", text[start:key_end], True, "inline"):
        return None
    return (m.start(2), m.end(2), "password" if noun in PASSWORD_NOUNS else "secret")


def _key_start(text: str, place: int) -> int:
    start = place
    while start > 0 and place - start < 64 and text[start - 1] in _KEY_CHARS:
        start -= 1
    return start


def _value_span(text: str, key: int, m: re.Match[str]) -> tuple[int, int, bool, str] | None:
    """Where the value after a key and its separator lies, whether it is quoted, and its style:
    ``line`` (alone on a config line), ``comment`` (on a commented line), ``pair``, ``word``,
    ``inline`` or ``xml``."""
    sep, at = m.group(2), m.end()
    if sep in ("==", "::"):
        return None
    line = _line_style(text, key)
    if sep == ">":
        if not key or text[key - 1] != "<":
            return None
        xml = _XML_VALUE.match(text, at)
        return (at, at + len(xml.group(1)), True, "xml") if xml else None
    at = past_annotation(text, at) if sep == ":" else at  # ``password: str = "…"``: the annotation skipped
    if sep is None and (declared := _declared(text, key, m)):
        return (*declared, True, line or "inline")
    if sep is None and _ENV.search(text, max(0, key - 24), key):
        value = _LINE_VALUE.match(text, at)  # Dockerfile's ``ENV DB_PASSWORD value``: the rest of the line
        end = fields.strip_comment(text, at, value.end() if value else at)
        return (at, end, False, "line") if end > at else None
    if sep is None and not (code.flag(text, key) or _netrc(text, key, line)):
        return None
    if sep == "," and not (
        m.group(1) and text[max(0, key - 8) : key - 1].rstrip().endswith("(") and code.quoted(text, m.end())
    ):
        return None  # only a call's first two arguments pair up, quoted: define('DB_PASSWORD', '…')
    quoted = code.string(text, at)
    if quoted and not m.group(1) and _closes(text, key, at):
        return None  # ``"Password:",`` ``'password = '.$p[…]``: the key and its sign are a string's text
    if quoted and code.formatted(text, at, quoted):
        return None
    if quoted:
        return (*quoted, True, line or "inline")
    if text.startswith("]", m.end(1)):
        return None  # ``headers["Authorization"] = signature``: code assigning a variable
    if line and sep is not None:
        value = _LINE_VALUE.match(text, at)
        end = fields.strip_comment(text, at, value.end() if value else at)
        if (
            key
            and text[key - 1] in "\"'"
            and not m.group(1)
            and (close := text.rfind(text[key - 1], at, end)) >= 0
        ):
            end = close  # ``- "DB_PASSWORD=…"``: a string holding the pair ends at its quote
        return (at, end, False, line) if end > at else None
    word = (_WORD_VALUE if sep is None else _INLINE_VALUE).match(text, at)
    # ``key=value`` with nothing between (libpq, query strings, logs) is a pair; a flag's or
    # .netrc's value a word; anything else inline.
    style = "word" if sep is None else "pair" if at == m.end(2) else "inline"
    return (at, word.end(), False, style) if word else None


def _closes(text: str, key: int, at: int) -> bool:
    """Whether the quote at ``at`` closes a string literal opened before the key on its line (the key
    and its separator are that literal's text; what follows the quote is code or the next literal)."""
    quote, window = text[at], max(0, key - 400)
    # (the line's last 400 characters: the whole text before, on one long line, is quadratic)
    line = text[max(window, text.rfind("\n", window, key) + 1) : key]
    return (line.count(quote) - line.count("\\" + quote)) % 2 == 1


def _line_style(text: str, key: int) -> str:
    """``line`` if only indentation (a list dash, ``export``, a quote) stands before the key on its
    line, ``comment`` if a comment sign does, else ``""`` — a JSON-escaped ``\\n`` counts as a line end."""
    window = max(0, key - 160)
    newline, escaped = text.rfind("\n", window, key), text.rfind("\\n", window, key)
    if newline < 0 and escaped < 0 and window > 0:
        return ""
    begin = max(newline + 1, escaped + 2 if escaped >= 0 else 0)
    if _LINE_PREFIX.fullmatch(text, begin, key):
        return "line"
    return "comment" if _COMMENT_PREFIX.fullmatch(text, begin, key) else ""


def _netrc(text: str, key: int, line: str) -> bool:
    """.netrc's ``password VALUE``: after ``login NAME`` on its line, or on a line of its own below
    a ``machine``/``login`` line."""
    window = text[max(0, key - 200) : key]
    return _NETRC_INLINE.search(window) is not None or (line == "line" and _NETRC.search(window) is not None)


def _judge(
    text: str, noun: str, key: str, start: int, end: int, quoted: bool, style: str
) -> tuple[int, int] | None:
    value = text[start:end]
    if noun == "authorization" and value.strip().lower() in _SCHEMES:
        return None  # the scheme alone; its credential is further on (or a placeholder)
    if noun == "authorization":
        scheme = _SCHEME_VALUE.fullmatch(value)
        if scheme and scheme.group(1).lower() in _SCHEMES:
            start, value = start + scheme.start(2), scheme.group(2)
            return (start, start + len(value)) if not_template(value) and len(value) >= 8 else None
    if noun == "creds" and not (code.whole(text, end) and " " not in value if quoted else style == "line"):
        return None  # not ``creds = " --user=" + auth``, ``creds: 'Mapping[…]' = None``
    if not quoted and text[end : end + 1] in ("(", ".", "["):
        return None  # a call, an attribute, an index: code, not a literal
    if (
        (noun == "pass" or value.isalpha())
        and not quoted
        and style == "inline"
        and _WORD_AFTER.match(text, end)
    ):
        return (
            None  # ``credential: sanitize the prompt``, ``First pass: determine …``: a sentence's first word
        )
    if noun == "cookie" and not judge.session_cookie(value) or key[:1] == "-" and judge.metavariable(value):
        return None  # (``--passwd=FILE``: a flag's argument in capitals is what its reader fills in)
    if not quoted and value.endswith((",", ";")):
        if re.fullmatch(r"[A-Za-z_$][\w$.]*", value[:-1]):
            return None  # ``password: pwd,`` in a JavaScript object: a variable
        value, end = value[:-1], end - 1
    return (start, end) if literal(value, noun, key, quoted, style) else None


def literal(value: str, noun: str, key: str, quoted: bool, style: str) -> bool:
    """Whether ``value`` under a key naming ``noun`` is a secret literal, not a name, a label or prose."""
    v = value.strip()
    low = v.lower()
    if quoted and noun in PASSWORD_NOUNS and judge.symbols_only(v):
        return True  # ``"@#!%#"``: a password of symbols only, no separator or mask
    led = quoted and judge.symbol_led(v)  # a password's first character may be a symbol
    if (
        len(v) < 3
        or not any(c.isalnum() for c in v)  # punctuation only: a separator, a mask
        or (not not_template(v) and not judge.literal_dollar(v) and not led)
        or PLACEHOLDER.search(v)
        or low.rstrip("),:;") in TYPES | PLACEHOLDER_WORDS  # (``secret: str = None):``: a signature's end)
        or (annotation(v) if quoted else union(v))  # (quoted: pydoc prints a string annotation so)
        or low in NOUNS
        or low.rstrip(": ") in NOUNS | PLACEHOLDER_WORDS  # a form's label: "Password:"
        or low.removesuffix("s") in NOUNS  # the kind named, not a value: "secrets: passwords, keys"
        or low == key.lower()
        or (v.isalpha() and spelt(low, noun))  # "Passord", "Passwort": the noun's label, translated
        or names_key(v, key)  # ``IAM_ROLE_STATEMENTS_TOKEN = "iamRoleStatements"``: the key's own name
        or (v.isdigit() and not numeric_secret(v, noun))
        or _URL.fullmatch(v)
        or _PATH.fullmatch(v)
        or (v.startswith(("!", "&", "|", ">", "~", "-----BEGIN")) and not led)
        or v.lower().startswith(_PUBLIC_PREFIXES)
    ):
        return False
    # (a command line's option is a literal as a config line's value is: ``--password=open_sesame``)
    given = style == "line" or key.startswith("-")
    named = _reference(v, noun, quoted, style) and not words_password(v, noun, key, given, quoted)
    if named or gitleaks.wrong_format(v) or _SUBSTITUTION.search(v):
        return False  # (a shell's substitution inside: ``sk-$(openssl rand -hex 32)``)
    if noun in WEAK and _PLAIN.fullmatch(v):
        return False  # ``auth: oauth2`` names a mode
    if not quoted and code_goes_on(v):
        return False
    if " " in v or "\t" in v:
        return _phrase(v, noun, quoted, style)
    if not quoted and _CODE.search(v) and (style != "line" or code.balanced(v) or _CALL.match(v)):
        return False  # alone on its line, brackets that do not pair up are a password's characters
    if noun in _MACHINE_NOUNS and len(v) < _MIN_KEY and not any(c in v for c in _SYMBOLS):
        return (quoted or style == "line") and judge.short_random(v)  # else a word or id, not a key
    return len(v) >= (3 if quoted else 6 if style == "inline" else 4)


def _reference(v: str, noun: str, quoted: bool, style: str = "") -> bool:
    """A name rather than a value: an attribute path, an environment name, a variable, a type (not in
    an element's text, ``<passphrase>gpgPassphrase</passphrase>``: XML has no variables)."""
    if style == "xml":
        return DOTTED.fullmatch(v) is not None and not dotted_token(v)
    if DOTTED.fullmatch(v) and not dotted_token(v):
        return True  # an attribute path (``config.db.password``)
    if not quoted and renamed(v) or noun in _MACHINE_NOUNS and field_name(v):
        return True  # ``ArrowToken$1``; ``"NextPageMarker"``: a machine-made key is no run of words
    if _LOWER_SNAKE.fullmatch(v) or _LOWER_KEBAB.fullmatch(v) or _LAYOUT.fullmatch(v):
        return True  # a_name, a-name: code's, YAML's, flags' names; a:b:c a record's fields (/etc/passwd)
    if _UPPER_SNAKE.fullmatch(v) and not (len(v) >= 12 and entropy(v) >= 3.5):
        return True
    if _CAMEL.fullmatch(v) and (not quoted or noun in v.lower()):
        return True  # hashedPassword, SecretStr, PasswordInput (a quoted "zymMlopiWfqU" is a literal)
    if noun in v.lower() and class_name(v):
        return True  # MCPCredentials, _StrPathToken, ed25519.Ed25519PrivateKey: a type named for the noun
    # A name built around the noun: tls-secret, db_password (but password123 is a password).
    parts = [p.lower() for p in re.split(r"[-_.]", v)]
    return len(parts) > 1 and any(noun in p for p in parts) and all(p.isalpha() for p in parts)


def _phrase(v: str, noun: str, quoted: bool, style: str) -> bool:
    """A passphrase, not a label, a sentence or code."""
    words = v.lower().split()
    if style == "comment" or (not quoted and style != "line"):
        return False
    if not quoted and (_CODE.search(v) or noun == "pass"):
        return False  # (``First pass: determine …``: a pass is also a step of a program, unquoted prose)
    if v.endswith((".", "?", "!", ":")) or len(words) > 8:
        return False
    if any(noun in w or w in NOUNS or spelt(w, noun) for w in words):
        return False  # "Enter your password", "the API token you created"
    if words[0] in _INSTRUCTIONS and any(w in _FUNCTION_WORDS or w in _WHERE for w in words[1:]):
        return False  # "Get this from elsewhere": where the value is to be found, not the value
    return sum(w in _FUNCTION_WORDS for w in words) < (3 if quoted else 2)
