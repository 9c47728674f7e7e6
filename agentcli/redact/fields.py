"""Where a key's value lies apart from the key, in the shapes that keep them in separate fields: a name
field and the value field after it (Kubernetes' ``- name: DB_PASSWORD`` / ``value: …``, ``{"name":
"password", "value": "…"}``, CloudFormation's ``ParameterKey``/``ParameterValue``, ``<entry
key="password">…</entry>``, an element naming a key and the element holding its value: a plist's
``<key>Password</key><string>…</string>``, Hadoop's ``<name>…secret.key</name><value>…</value>``), a
name attribute and its value attribute (``<add key="SmtpPassword" value="…"/>``), the items of a list
under a key naming secrets (``passwords:`` and its ``- …`` lines, ``"tokens": ["…", "…"]``), and the
default a declaration gives a parameter named for a secret (CloudFormation's ``Default:``, Terraform's
``variable "db_password" { default = "…" }``, an ARM template's ``defaultValue``, a JSON Schema's
``"default"``). Each finds where a
value lies; ``keyvalue`` judges it as a value under that key. Every scan is bounded (a few hundred
characters, a few lines or items), so a text full of such keys costs linear time."""

from __future__ import annotations

import re

from agentcli.redact import code

# A field naming a value (``name:``, ``"key":``, ``key="``, CloudFormation's ``ParameterKey``), and
# the field holding it right after: on the same line after a comma, or on the next line.
_NAME_FIELD = re.compile(r"(?<![\w\-])[\"']?(?:name|key|parameterkey)[\"']?[ \t]*[:=][ \t]*[\"']?\Z", re.I)
_VALUE_FIELD = re.compile(
    r"[\"']?[ \t]*(?:,|\r?\n)[ \t]*(?:-[ \t]+)?[\"']?(?:value|parametervalue)[\"']?[ \t]*[:=][ \t]*", re.I
)
_FIELD_VALUE = re.compile(r"[^\n\r,}\]]{1,256}")
_ELEMENT_TEXT = re.compile(r"[\"'][^<>\n]{0,200}(?<!/)>([^<\n]{1,256})</")
# An element naming a key, and the element after it holding the value (blank lines between at most).
# (Java's web.xml: ``<param-name>`` then ``<param-value>``)
_NAME_ELEMENT = re.compile(r"<(?:key|name|param-name)>[ \t]*", re.I)
_VALUE_ELEMENT = re.compile(
    r"[ \t]*</(?:key|name|param-name)>[ \t\r\n]{0,200}<(value|string|param-value)>([^<\n]{1,256})</\1>", re.I
)
# ``<add key="SmtpPassword" value="…"/>``, ``<property name="db.password" value="…"/>``: a name
# attribute naming a secret, and its value attribute.
_NAME_ATTRIBUTE = re.compile(r"(?:key|name)[ \t]*=[ \t]*[\"']\Z", re.I)
_VALUE_ATTRIBUTE = re.compile(r"[ \t]+value[ \t]*=[ \t]*(?=[\"'])", re.I)

# A list's items: ``[`` and quoted strings (JSON, Python, TOML), or the ``- item`` lines of a YAML
# block sequence under a key with nothing after it on its line.
_MAX_ITEMS = 64
# A list's opening: ``[``, Go's ``[]string{``, C#'s ``new[] {``, Java's array ``{``, Kotlin's ``listOf(``,
# Java's ``List.of(``, Rust's ``vec![`` (a map's ``{"k": …}`` is no list: its items are not all strings).
_LIST_OPEN = re.compile(
    r"(?:\[\][\w.]{1,32}\{|new(?:[ \t]+[\w.]{1,32})?[ \t]*\[\][ \t]*\{|(?:listOf|arrayOf|setOf|mutableListOf"
    r"|List\.of|Set\.of|Arrays\.asList|vec!)[ \t]*[(\[]|\[|\{)"
)
_GAP = re.compile(r"[ \t\r\n]{0,200}")
_COMMA = re.compile(r"[ \t\r\n]{0,200},")
_LINE_END = re.compile(r"[ \t]*(?:#[^\n]{0,256})?\r?\n")
_ITEM_LINE = re.compile(r"([ \t]{0,64})-[ \t]+")
_SKIPPED_LINE = re.compile(r"[ \t]{0,64}(?:#[^\n]{0,256})?\r?\n")
_BARE_ITEM = re.compile(r"[^\s\"'`#&*!|>\[\]{}][^\n\r]{0,255}")
_MAPPING = re.compile(r"[^\s:]:(?:[ \t]|$)")

# A declaration's default: a field named so on a line of the block a key opens (deeper than the key).
_MAX_LINES = 8
_BLOCK_OPEN = re.compile(r"[ \t]*\{?[ \t]*(?:#[^\n]{0,256})?\r?\n")
# A block on one line: ``"password": {"type": "string", "default": "…"}`` (JSON Schema, OpenAPI).
_ONE_LINE_BLOCK = re.compile(r"\{[^{}\n]{0,256}\}")
_FIELD_START = re.compile(r"(?:\{|,)[ \t]*")
# (quoted as JSON writes it, or HCL's ``default =``: ``, default:`` inside a description is prose)
_ONE_LINE_DEFAULT = re.compile(
    r"(?:[\"'](?:default|default_?value)[\"'][ \t]*:|(?:default|default_?value)[ \t]*=)[ \t]*", re.I
)
_INDENT = re.compile(r"[ \t]{0,64}")
_DEFAULT = re.compile(r"[\"']?(?:default|default_?value)[\"']?[ \t]*[:=][ \t]*", re.I)
_REST = re.compile(r"[^\n\r]{0,256}")
_BARE_VALUE = re.compile(r"[^\s,;\"'`{}\[\]]{1,256}")

Span = tuple[int, int, bool]  # a value's start, end and whether it is quoted (or an element's text)


def field_value(text: str, key: int, key_end: int) -> Span | None:
    """A name given as a field's value, its value in the next field: ``- name: DB_PASSWORD`` and
    ``value: …`` below it, ``{"name": "password", "value": "…"}``, ``<entry key="password">…</entry>``,
    ``<key>password</key>`` and the ``<value>``/``<string>`` element after it. The value's span and
    whether it is quoted, or None."""
    tag = text.rfind("<", max(0, key - 16), key)
    if tag >= 0 and _NAME_ELEMENT.fullmatch(text, tag, key):
        element = _VALUE_ELEMENT.match(text, key_end)
        return (element.start(2), element.end(2), True) if element else None
    if not _NAME_FIELD.search(text, max(0, key - 24), key):
        return None
    if value := _VALUE_FIELD.match(text, key_end):
        at = value.end()
        if inside := code.string(text, at):
            return (*inside, True)
        bare = _FIELD_VALUE.match(text, at)  # (bounded: a line of such fields costs linear time)
        end = strip_comment(text, at, bare.end() if bare else at)
        return (at, end, False) if end > at else None
    if element := _ELEMENT_TEXT.match(text, key_end):
        return (element.start(1), element.end(1), True)
    return None


def attribute_value(text: str, key: int, key_end: int) -> tuple[int, int] | None:
    """The value attribute after a name attribute naming a secret, or after an element named for one
    (``<password value="…"/>``); ``key_end`` is after the name's closing quote, if any."""
    if text[key - 1 : key] != "<" and not _NAME_ATTRIBUTE.search(text, max(0, key - 16), key):
        return None
    value = _VALUE_ATTRIBUTE.match(text, key_end)
    return code.quoted(text, value.end()) if value else None


def items(text: str, key: int, at: int) -> tuple[list[Span], int] | None:
    """The items of a list given to a key, ``at`` right after its separator: ``["…", "…"]`` and the
    other languages' list literals (quoted strings only: a bare item is code's name), or a YAML block
    sequence (``- …`` lines, each a scalar, not a mapping, indented no less than the key) when nothing
    follows the separator on its line. The items and where the list ends, or None when no list of
    values starts at ``at``."""
    if opened := _LIST_OPEN.match(text, at):
        found: list[Span] = []
        end = opened.end()
        while len(found) < _MAX_ITEMS:
            end = _end(_GAP, text, end)
            if text.startswith(("]", "}", ")"), end) or end == len(text):  # (or cut off: a read tool's part)
                return (found, end + 1) if found else None
            inside = code.string(text, end)
            if inside is None:
                return None  # a bare item or a nested list or map: code, not a list of literals
            found.append((*inside, True))
            end = inside[1] + 1
            if comma := _COMMA.match(text, end):
                end = comma.end()
        return None
    line_end = _LINE_END.match(text, at)
    if line_end is None:
        return None
    column = key - (text.rfind("\n", max(0, key - 256), key) + 1)
    lines: list[Span] = []
    end = line_end.end()
    for _ in range(_MAX_ITEMS):
        if skipped := _SKIPPED_LINE.match(text, end):
            end = skipped.end()  # a comment or a blank line between the items
            continue
        dash = _ITEM_LINE.match(text, end)
        if dash is None or len(dash.group(1)) < column:
            break
        if inside := code.string(text, dash.end()):
            value: Span = (*inside, True)
        elif (bare := _BARE_ITEM.match(text, dash.end())) and not _MAPPING.search(bare.group()):
            value = (bare.start(), strip_comment(text, bare.start(), bare.end()), False)
        else:
            break  # a mapping (``- name: x``) or a nested list: not a list of values
        lines.append(value)
        nl = text.find("\n", value[1], value[1] + 256)
        if nl < 0:
            break
        end = nl + 1
    return (lines, end) if lines else None


def default(text: str, key: int, at: int) -> Span | None:
    """The default a declaration block gives a key: ``at`` is right after the key, its separator
    and a ``{`` if any, where the block's first line starts on the next line; a ``default:``,
    ``"Default":``, ``default =`` or ``"defaultValue":`` field on one of its first lines, each indented
    deeper than the key's own line (CloudFormation's parameters, Terraform's variables, ARM templates).
    The value's span and whether it is quoted, or None."""
    if block := _ONE_LINE_BLOCK.match(text, at):
        for start in _FIELD_START.finditer(text, at, block.end()):
            if field := _ONE_LINE_DEFAULT.match(text, start.end(), block.end()):
                return _default_value(text, field.end())
        return None
    opened = _BLOCK_OPEN.match(text, at)
    if opened is None:
        return None
    line = text.rfind("\n", max(0, key - 256), key) + 1
    depth = _end(_INDENT, text, line) - line
    end = opened.end()
    for _ in range(_MAX_LINES):
        indent = _end(_INDENT, text, end)
        if indent - end <= depth or text.startswith(("}", "\n", "\r"), indent):
            return None  # the block closed before any default
        if field := _DEFAULT.match(text, indent):
            return _default_value(text, field.end())
        rest = _end(_REST, text, indent)
        if not text.startswith("\n", rest) and not text.startswith("\r\n", rest):
            return None
        end = rest + (2 if text.startswith("\r", rest) else 1)
    return None


def _default_value(text: str, at: int) -> Span | None:
    if inside := code.string(text, at):
        return (*inside, True)
    bare = _BARE_VALUE.match(text, at)
    return (at, bare.end(), False) if bare else None


def _end(pattern: re.Pattern[str], text: str, at: int) -> int:
    """Where ``pattern``, which matches everywhere (if only ""), ends when matched at ``at``."""
    m = pattern.match(text, at)
    return m.end() if m else at


def strip_comment(text: str, start: int, end: int) -> int:
    """Where a value ends before a comment on its line (`` #``, `` ;``, `` //``)."""
    value = text[start:end]
    for mark in (" #", "\t#", " ;", " //"):
        cut = value.find(mark)
        if cut >= 0:
            value = value[:cut]
    return start + len(value.rstrip())
