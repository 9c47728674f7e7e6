"""Names and annotations that stand where a secret's value would, in code: a type annotation (a union
too: ``token: str | None = None``), a class named for the secret (``credentials: MCPCredentials``), a
dotted name code goes on from (``token=self.bearer)``). keyvalue reads a value as none of these before
it judges it a secret."""

from __future__ import annotations

import re
from collections.abc import Callable

from agentcli.redact import code
from agentcli.redact.judge import entropy, looks_random
from agentcli.redact.nouns import word_set

# A type annotation and the ``=`` after it: Python's ``str``, TypeScript's ``string``, Kotlin's and
# Swift's ``String``, Rust's ``&str``/``&'static str``, generics (``Optional[str]``, ``Option<String>``);
# a space before the ``=``, as every style guide writes it (a YAML password ``abc=def`` stays whole).
_TYPE = r"&?(?:'[a-z]+[ \t]+)?[A-Za-z_][\w.:]{0,63}(?:\[[\w., \[\]]{0,64}\]|<[\w., <>&']{0,64}>)?\??"
# (a union too: Python's ``str | None``, TypeScript's ``string | undefined``)
TYPED = re.compile(_TYPE + r"(?:[ \t]*\|[ \t]*" + _TYPE + r"){0,8}[ \t]+=(?![=>])[ \t]*")
# An annotation with no value after it (a parameter's ``token: str | None,``, a docstring's ``password:
# str or None``): two or more types joined by ``|`` or ``or``, one of them a type's own name or None.
_UNION = re.compile(_TYPE + r"(?:[ \t]*(?:\||[ \t]or[ \t])[ \t]*" + _TYPE + r"){1,8}")
_UNION_PART = re.compile(r"[ \t]*(?:\||[ \t]or[ \t])[ \t]*")
TYPES = word_set(
    "str string int integer bool boolean bytes any object number float double char secretstr secretbytes"
)
_NONE = frozenset({"none", "null", "undefined", "nil", "optional"})
DOTTED = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")
_CHUNK = re.compile(r"[A-Z]+(?![a-z])|[A-Z][a-z]+|[0-9]+|_")  # a class name's pieces
# A dotted name code goes on from: an operator word after it (``valid_token.token or ""``, ``a.b if c
# else d``), or a call or a bracket it closes when it is an attribute of ``self`` or names of words
# (``self.bearer)``, ``self.issue_new_tokens)``; ``my.pass0rd)`` is a password); alone, a dotted name
# is already a reference.
_DOTTED_CODE = re.compile(
    r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+[ \t]+(?:or|and|if|in|is|not)[ \t].*"
    r"|(?:(?:self|this|cls)(?:\.[A-Za-z_]+)+|[A-Za-z]*_[A-Za-z_]*(?:\.[A-Za-z_]+)+|[A-Za-z]+(?:\.[A-Za-z_]*_[A-Za-z_]*)+)"
    r"[)\]}]+[,;]?"
)


def union(v: str) -> bool:
    """A union of types (``str | None``, ``bool | str | None``, ``str or None``): an annotation, not a value.
    Each part is a type's own name or a class's (capitalised, dotted, generic), one of them a type's own
    (``hunter2 | None`` is not an annotation)."""
    if not _UNION.fullmatch(v):
        return False
    names = [p.lstrip("&").split("[")[0].split("<")[0].rstrip("?") for p in _UNION_PART.split(v)]
    known = [n.lower() in TYPES | _NONE for n in names]
    return any(known) and all(k or n[:1].isupper() or "." in n for n, k in zip(names, known, strict=True))


# A generic's own annotation (``Optional[str]``, ``Sequence[int]``, ``dict[str, Any]``): a name, then
# types in brackets.
_GENERIC = re.compile(r"([A-Za-z_][\w.]{0,63})\[([\w.,| \[\]]{1,64})\]")
_NAME = re.compile(r"[A-Za-z_][\w.]*")
_CONTAINERS = frozenset({"dict", "list", "tuple", "set", "frozenset", "type"})


# A parameter's annotation quoted, as pydoc prints a string annotation, and the ``=`` of its default.
QUOTED_TYPED = re.compile(r"'([^'\n]{1,128})'[ \t]+=(?![=>])[ \t]*")


def annotation(v: str) -> bool:
    """A type annotation standing for a value, as ``pydoc`` and ``inspect`` print a parameter annotated
    by a string (``api_key: 'str | None' = None``, ``pass_fds: 'Sequence[int]' = ()``): a union, or a
    generic whose names are types, None or classes (``Optional[str]``; ``hunter2[x]`` is none)."""
    if union(v):
        return True
    if not (m := _GENERIC.fullmatch(v)):
        return False
    names = [m.group(1).rsplit(".", 1)[-1], *_NAME.findall(m.group(2))]
    if looks_random(names[0]):
        return False
    known = [n.lower() in TYPES | _NONE | _CONTAINERS for n in names]
    return any(known) and all(k or n[:1].isupper() for n, k in zip(names, known, strict=True))


def past_annotation(text: str, at: int) -> int:
    """Where a value starts after a type annotation and its ``=`` at ``at`` (``password: str = "…"``,
    pydoc's ``api_key: 'str | None' = '…'``, the annotation quoted), or ``at`` when there is none."""
    if typed := TYPED.match(text, at):
        return typed.end()
    quoted = QUOTED_TYPED.match(text, at)
    return quoted.end() if quoted and annotation(quoted.group(1)) else at


def code_goes_on(v: str) -> bool:
    """A dotted name that code goes on from (``self.bearer)``, ``valid_token.token or ""``)."""
    return _DOTTED_CODE.fullmatch(v) is not None and not dotted_token(v.split()[0].rstrip(")]},;"))


def class_name(v: str) -> bool:
    """A class's name, perhaps private or behind a module path: capitalised words, initialisms and
    numbers run together (``_UserAPIKeyAuth``, ``ed25519.Ed25519PrivateKey``); a random run has
    lower-case letters standing alone (``Xk9mQ2v``) or too many pieces."""
    name = v.rsplit(".", 1)[-1].lstrip("_")
    if not name[:1].isupper() or ("." in v and not DOTTED.fullmatch(v)):
        return False
    chunks = _CHUNK.findall(name)
    return "".join(chunks) == name and len(chunks) <= 6 and not looks_random(name)


def dotted_token(v: str) -> bool:
    """Dot-joined token parts, not names: a part of 12+ characters mixing letters and digits
    (a Kubernetes bootstrap token's ``id.secret``)."""
    return any(
        len(p) >= 12 and any(c.isdigit() for c in p) and any(c.isalpha() for c in p) and entropy(p) >= 3.0
        for p in v.split(".")
    )


# A reST field list's field before a parameter's name: ``:param client_secret:``, ``:type str token:``.
_FIELD_LIST = re.compile(
    r":(?:param|parameter|arg|argument|key|keyword|kwarg|type|ivar|cvar|var|vartype)"
    r"[ \t]+(?:[\w.\[\]|,]+[ \t]+)?\Z"
)
_RENAMED = re.compile(r"[A-Za-z_]\w*\$\d+")
_PASCAL_WORDS = re.compile(r"(?:[A-Z][a-z]+){2,}")
_LOWER_RUN = re.compile(r"[a-z]+")


def docstring_field(text: str, key: int) -> bool:
    """The key at ``key`` is a parameter a docstring's field names (``:param client_secret: The
    client's secret.``, ``:type credentials: :class:`…```): what follows is prose or a type."""
    return _FIELD_LIST.search(text, max(0, key - 64), key) is not None


def documented(text: str, place: int, sep: str | None, key_start: Callable[[str, int], int]) -> bool:
    """The key whose secret's word is at ``place`` (``key_start`` finds where the key starts, looked
    for only after a ``:``) is a parameter or an option documentation describes: a docstring's field
    (``:param token:``), a ``--help`` listing's entry (``-W, --password   force password prompt``): what
    follows is its description, not a value."""
    return (sep == ":" and docstring_field(text, key_start(text, place))) or code.help_entry(text, place)


def renamed(value: str) -> bool:
    """A binding a bundler renamed (``ArrowToken$1``, ``type ArrowToken = ArrowToken$1;``)."""
    return _RENAMED.fullmatch(value) is not None


def field_name(value: str) -> bool:
    """Capitalised words run together (``NextPageMarker``, ``ExclusiveStartShardId``): a field's name,
    never a machine-made key or token (3+ lower-case letters a word on average)."""
    if not _PASCAL_WORDS.fullmatch(value):
        return False
    runs = _LOWER_RUN.findall(value)
    return sum(map(len, runs)) / len(runs) >= 3.0
