"""Text every backend can store, made at the store boundary.

Three kinds of character cannot be kept everywhere: PostgreSQL refuses NUL in text and ``\\u0000``
in jsonb ("unsupported Unicode escape sequence": the message was lost and an empty session left),
SQLite's full-text index ends a document at a NUL (the words after it were never found), and no
UTF-8 encoder takes a lone surrogate (a byte that was not UTF-8, decoded with ``surrogateescape``).
Each becomes U+FFFD on every backend, so whatever one database holds another can hold too
(``sessions copy``) and the model is sent what was stored.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_json

REPLACEMENT = "\ufffd"
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
# A JSON ``\u0000`` escape: preceded by an even run of backslashes, so ``\\u0000`` (an escaped
# backslash, then the letters "u0000" the user typed) is left alone.
_NUL_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\u0000")


def text(value: str) -> str:
    return _UNSTORABLE.sub(REPLACEMENT, value) if _UNSTORABLE.search(value) else value


def value(obj: Any) -> Any:
    """``obj`` (JSON-like: dicts, lists, strings, numbers) with every string cleaned, keys too."""
    if isinstance(obj, str):
        return text(obj)
    if isinstance(obj, dict):
        return {value(k): value(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [value(v) for v in obj]
    return obj


def json_text(document: str) -> str:
    """A JSON document with its NUL escapes replaced (its other characters are already storable)."""
    if "\\u0000" not in document:  # the common case: one scan, no regex
        return document
    return _NUL_ESCAPE.sub(lambda m: m.group(1) + REPLACEMENT, document)


def dump_model(model: BaseModel, exclude: set[str]) -> str:
    """``model_dump_json`` made storable. The encoder refuses lone surrogates outright: only then is
    the record walked and cleaned (a rare, slower path)."""
    try:
        return json_text(model.model_dump_json(exclude=exclude))
    except PydanticSerializationError:
        # Python mode: JSON mode would already have mangled surrogates in dict keys.
        return to_json(value(model.model_dump(exclude=exclude))).decode()


def dump_json(obj: Any) -> str:
    """``json.dumps`` of a plain value (state, a session field), made storable."""
    return json.dumps(value(obj))
