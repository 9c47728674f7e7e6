"""OpenCode's JSON with comments: comments and trailing commas blanked out, every line and column kept
in place so json's error positions still point into the user's file."""

from __future__ import annotations

import json
from typing import Any

from agentcli.config.errors import ConfigError


def strip_jsonc(text: str) -> str:
    """Blank out // and /* */ comments and trailing commas, keeping every line and column in place.

    Tokenizer-aware: `//` inside a string (a URL) is left alone. Raises ValueError(line, col, reason)
    only for an unterminated block comment; everything else is left for json to judge.
    """
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                out[i] = " "
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                line = text.count("\n", 0, i) + 1
                raise ValueError(line, i - text.rfind("\n", 0, i), "unterminated /* comment")
            for j in range(i, end + 2):
                if out[j] != "\n":
                    out[j] = " "
            i = end + 2
        else:
            i += 1
    return _strip_trailing_commas("".join(out))


def _strip_trailing_commas(text: str) -> str:
    out = list(text)
    in_string = False
    i = 0
    while i < len(text):
        c = text[i]
        if in_string:
            if c == "\\":
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c == ",":
            j = i + 1
            while j < len(text) and text[j] in " \t\r\n":
                j += 1
            if j < len(text) and text[j] in "}]":
                out[i] = " "
        i += 1
    return "".join(out)


def parse_jsonc(text: str, label: str) -> dict[str, Any]:
    """Parse OpenCode's JSON-with-comments; errors become `<label>:<line>:<col>: invalid JSON: …`."""
    if not text.strip():
        return {}
    try:
        data = json.loads(strip_jsonc(text))
    except ValueError as exc:
        if isinstance(exc, json.JSONDecodeError):
            line, col, reason = exc.lineno, exc.colno, exc.msg
        else:
            line, col, reason = exc.args
        raise ConfigError(f"{label}:{line}:{col}: invalid JSON: {reason}") from None
    except RecursionError:
        raise ConfigError(f"{label}: invalid JSON: nested too deeply") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{label}: must be a JSON object at the top level")
    return data
