"""The only place that imports litellm.

litellm takes seconds to import, so nothing imports it at module top level: callers ask
``get_litellm()`` when they need it — only for models the lean path (``lean``) does not serve, for
prices the JSON map cannot give, and for token counts once it is loaded anyway. ``run``, ``chat`` and
``acp`` import it in the background as they start when their model needs it (``warm``).
This module owns the one configured litellm handle (thread-safe, configured exactly once).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from types import ModuleType

_lock = threading.Lock()
_litellm: ModuleType | None = None

_QUIET_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "httpx", "httpcore", "openai")


def get_litellm() -> ModuleType:
    """Import and configure litellm on first use; later calls return the same module."""
    global _litellm
    if _litellm is not None:
        return _litellm
    with _lock:
        if _litellm is None:
            # Never fetch the price map from the internet, and keep litellm's own logging quiet:
            # we report errors ourselves, one line each.
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            os.environ.setdefault("LITELLM_LOG", "ERROR")
            import litellm

            litellm.suppress_debug_info = True
            litellm.set_verbose = False
            # Not globally: set globally, litellm also re-sends a request that got HTTP 422 and, on a
            # second 422, returns None instead of raising. stream.py passes drop_params=True per call,
            # which only drops parameters the model does not take (e.g. temperature on o1).
            litellm.drop_params = False
            litellm.turn_off_message_logging = True
            litellm.callbacks = []
            # No callbacks, so nothing to log per chunk: without this litellm still hands every
            # streamed chunk to a logging thread (about half of its CPU per chunk).
            litellm.disable_streaming_logging = True
            litellm.success_callback = []
            litellm.failure_callback = []
            # Token counts (its cost bookkeeping, estimates) use the tiktoken encoding litellm ships,
            # never a tokenizer downloaded from Hugging Face: offline that lookup stalled every step of
            # a groq/… model by ~48 s of retries. HF_HUB_OFFLINE is not set instead: the user's own
            # commands, run by the bash tool, inherit our environment.
            litellm.disable_hf_tokenizer_download = True
            for name in _QUIET_LOGGERS:
                logging.getLogger(name).setLevel(logging.CRITICAL)
            _litellm = litellm
    return _litellm


def loaded_litellm() -> ModuleType | None:
    """The configured litellm if ``get_litellm`` has finished, else None (never imports)."""
    return _litellm


def is_loaded() -> bool:
    """Whether litellm has been imported at all in this process (possibly still importing)."""
    return "litellm" in sys.modules
