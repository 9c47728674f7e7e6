"""The store's one exception, below the engine (``db``) and the migrations (``schema``) that both
raise it."""

from __future__ import annotations


class StoreError(Exception):
    """A database problem, said in one line."""
