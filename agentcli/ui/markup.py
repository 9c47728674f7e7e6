"""Tool outputs are written for the model: notes in tags (``<bash_metadata>``), the read tool's
``<path>``/``<type>``/``<content>`` wrapper. People are shown the same text without that markup."""

from __future__ import annotations

import re

_NOTES = re.compile(r"\n*<bash_metadata>\n?(.*?)\n?</bash_metadata>\n*", re.DOTALL)
_READ_WRAPPER = re.compile(
    r"\A<path>[^\n]*</path>\n<type>[^\n]*</type>\n<content>\n(.*)\n</content>\Z", re.DOTALL
)


def for_people(text: str) -> str:
    """``text`` without the markup meant for the model: a tagged note becomes a plain "(note)" line."""
    if "<" not in text:
        return text
    wrapped = _READ_WRAPPER.match(text)
    if wrapped:
        text = wrapped.group(1)
    return _NOTES.sub(lambda m: "\n(" + "; ".join(m.group(1).strip().splitlines()) + ")\n", text)
