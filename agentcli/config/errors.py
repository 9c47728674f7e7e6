"""The one exception of the config package."""

from __future__ import annotations


class ConfigError(Exception):
    """A configuration problem, already phrased as one line for the user."""
