"""h2 (HTTP/2, with hpack's Huffman tables) loaded when a connection speaks HTTP/2, not with httpx.

httpcore imports h2's modules as it loads whenever h2 is installed (litellm requires it), though the
lean path never asks for HTTP/2: about 12 ms of a short turn's CPU. ``defer`` registers each module
httpcore imports as a stand-in that is already "imported" (the import system finds it in
``sys.modules`` and reads only its ``__spec__``); the first attribute anyone reads of it loads the
real module in its place, so HTTP/2 (litellm's ``LITELLM_HTTP2``, a plugin's client) works as before.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types
from typing import Any

MODULES = ("config", "connection", "events", "exceptions", "settings")  # what httpcore imports
_loading = threading.RLock()  # one thread swaps a stand-in for its module (h2.connection loads h2.config)


class _Deferred(types.ModuleType):
    def __getattr__(self, attr: str) -> Any:  # an attribute the stand-in does not have: load
        name = self.__name__
        with _loading:
            if sys.modules.get(name) is self:
                del sys.modules[name]
            module = importlib.import_module(name)
        return getattr(module, attr)


def defer() -> None:
    """Before httpcore loads; a no-op once it or h2 has, or when h2 is not installed."""
    if "httpcore" in sys.modules or "h2" in sys.modules:
        return
    try:
        package = importlib.import_module("h2")  # its __init__ holds its version alone
    except ImportError:
        return
    for short in MODULES:
        name = f"h2.{short}"
        spec = importlib.util.find_spec(name)
        if spec is None:
            continue
        stand_in = _Deferred(name)
        stand_in.__spec__ = spec
        sys.modules[name] = stand_in
        setattr(package, short, stand_in)
