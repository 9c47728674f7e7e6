""" "Did you mean …?" for a config key that is close to one agentcli knows (``baseUrl`` → ``baseURL``,
``modle`` → ``model``)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def close_key(key: str, known: Iterable[str]) -> str | None:
    """The known key this one is most likely a slip of (case first, then a near spelling), or None."""
    by_lower = {name.lower(): name for name in known if name != key}
    match = difflib.get_close_matches(key.lower(), list(by_lower), n=1, cutoff=0.75)
    return by_lower[match[0]] if match else None


def did_you_mean(hint: str | None) -> str:
    return f" (did you mean {hint}?)" if hint else ""
