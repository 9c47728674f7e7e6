"""Passwords with no key naming them, found by the shape that gives them: the argument after the user's
in a call whose callee names a credential (``new NetworkCredential("me", "…")``, ``HTTPBasicAuth("u",
"…")``, ``smtp.PlainAuth("", "u", "…", host)``), the second of a pair given to a key naming one
(``auth=("u", "…")``), the third argument of a connector (``connect("host", "user", "…")``, the order of
DB-API, JDBC and PHP), and a ``.pgpass`` line's fifth field (``host:port:db:user:…``).

Every scan is bounded: an argument list is read by one regex of at most three arguments of 256
characters, a ``.pgpass`` line back to at most 256 characters and forward by one bounded regex.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from agentcli.redact.keyvalue import literal
from agentcli.redact.nouns import WORD, noun_of

KEYWORDS = ("auth", "credential", "password", "passwd", "login", "logon", "connect")

# The callee's last word names a credential, or any of its words names a password.
_LAST_WORDS = frozenset(
    {"auth", "authentication", "authenticate", "authenticator", "credential", "credentials", "login", "logon"}
)
_ANY_WORDS = frozenset({"password", "passwd"})
_MADE = frozenset({"credential", "credentials"})
_CONNECTORS = frozenset({"connect", "connection"})

_IDENT_END = re.compile(r"[A-Za-z0-9_]*")
_STRING = r"(?:[bBrRuU@]{1,2})?(?:\"(?:[^\"\\\n]|\\.){0,256}\"|'(?:[^'\\\n]|\\.){0,256}')(?:\.\w{1,32}\(\))?"
_ARG = rf"(?:{_STRING}|[\w.$@]{{1,64}})"
# Up to three leading arguments, each a string literal (a method called on it: ``"…".toCharArray()``)
# or a name; what follows the third is not read.
# (Ruby's and Perl's calls need no parentheses: ``req.basic_auth 'u', '…'``)
_ARGS = re.compile(
    rf"(?:[ \t]*\(|[ \t]+(?=[bBrRuU@]{{0,2}}[\"']))[ \t]*({_ARG})(?:[ \t]*,[ \t]*({_ARG}))?"
    rf"(?:[ \t]*,[ \t]*({_ARG}))?[ \t]*(?:[,)]|(?=[;#\r\n]|\Z))"
)
# A key naming a credential given a bracketed pair: ``auth=("u", "…")``, ``basic_auth: ['u', '…']``.
_PAIR = re.compile(
    rf"[\"']?[ \t]*[:=][ \t]*[(\[][ \t]*({_STRING})[ \t]*,[ \t]*({_STRING})[ \t]*,?[ \t]*[)\]]"
)
# The pair's first a user's name: no ``:``, ``/`` or space (``["write:pets", "read:pets"]`` are scopes).
_USER = re.compile(r"[bBrRuU@]{0,2}([\"'])[^:/\s\"']+\1")
_QUOTED = re.compile(r"[bBrRuU@]{0,2}([\"'])((?:(?!\1)[^\\\n]|\\.)*)\1")

Span = tuple[int, int, str]


def find(text: str, places: list[int]) -> Iterator[Span]:
    """The passwords given to credential calls and pairs, from where ``KEYWORDS`` occur (lower-cased)."""
    done = -1
    for place in sorted(places):
        if place < done:
            continue
        start = place
        while start > 0 and place - start < 64 and (text[start - 1].isalnum() or text[start - 1] == "_"):
            start -= 1
        end = _IDENT_END.match(text, place).end()  # type: ignore[union-attr]
        done = end
        words = [w.lower() for w in WORD.findall(text[start:end])]
        if not words:
            continue
        if args := _ARGS.match(text, end):
            yield from _call_password(text, words, args)
        elif (pair := _PAIR.match(text, end)) and noun_of(text[start:end]) and _USER.fullmatch(pair.group(1)):
            yield from _password(text, pair, 2)


def _call_password(text: str, words: list[str], args: re.Match[str]) -> Iterator[Span]:
    if words[-1] in _CONNECTORS:
        if args.group(2) and _STRING_START.match(args.group(2)):
            yield from _password(text, args, 3)
        return
    if words[-1] not in _LAST_WORDS and not _ANY_WORDS & set(words):
        return
    given = [i for i in (1, 2, 3) if args.group(i) is not None]
    while given and args.group(given[0]) in ('""', "''"):
        given.pop(0)  # Go's ``smtp.PlainAuth("", user, password, host)``: an empty identity first
    # the user's a literal too: after a name (``SigV4Auth(credentials, "polly")``, ``www_auth(response,
    # "scope")``) a string is anything the callee takes next; but a callee named for the credential it
    # makes (``NetworkCredential(user, "…")``, ``PasswordAuthentication(user, "…")``) takes a password
    # second whatever its user is
    named = words[-1] in _MADE or bool(_ANY_WORDS & set(words))
    if len(given) >= 2 and (named or _STRING_START.match(args.group(given[0]))):
        yield from _password(text, args, given[1])


_STRING_START = re.compile(r"[bBrRuU@]{0,2}[\"']")
_NAME = re.compile(r"_*[a-z]+(?:[_\-][a-z]+)*_*")


def _password(text: str, m: re.Match[str], group: int) -> Iterator[Span]:
    """The string literal in ``m``'s ``group``, when it is a password's value."""
    if m.group(group) is None or not (quoted := _QUOTED.match(text, m.start(group))):
        return
    value = quoted.group(2)
    if _NAME.fullmatch(value):
        return  # code passes names as strings (a field's, a scope's, a function's): not taken
    if literal(value, "password", "password", True, "inline"):
        yield (quoted.start(2), quoted.end(2), "password")


# A ``.pgpass`` line, read from its port: ``:port:database:user:password`` to the line's end (``\:`` and
# ``\\`` escaped), the host before it checked apart.
_PGPASS = re.compile(
    r":(?:\d{1,5}|\*):(?:[^\s:\\]|\\.){1,128}:(?:[^\s:\\]|\\.){1,128}:"
    r"(?P<v>(?:[^\n:\\]|\\.){1,256}?)[ \t]*(?=\r?\n|\Z)"
)
_HOST = re.compile(r"[ \t]*(?:\*|[A-Za-z0-9_\-]+(?:\.[A-Za-z0-9_\-]+)*|\[[0-9A-Fa-f:.]+\])")


def pgpass(text: str) -> Iterator[Span]:
    """The password field of each ``.pgpass`` line (``host:port:database:user:password``)."""
    if ":" not in text:
        return
    for m in _PGPASS.finditer(text):
        line = text.rfind("\n", max(0, m.start() - 256), m.start()) + 1
        if not line and m.start() > 256:
            continue
        host = _HOST.fullmatch(text, line, m.start())
        if host is None or not any(c.isalpha() or c in ".*[" for c in host.group()):
            continue  # ``12:30:45:…`` is a time, not a host
        value = m.group("v")
        if literal(value, "password", "password", True, "line"):
            yield (m.start("v"), m.end("v"), "password")
