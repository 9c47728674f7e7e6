"""litellm's first stream, rehearsed in the background before the first turn needs it.

Importing litellm is not all of its start: its first ``completion(stream=True)`` imports some 540 more
modules (the OpenAI SDK's resources and types, httpcore, litellm's proxy types and stream helpers) and
loads a tiktoken encoding, about 1 s of CPU before the first delta. ``start`` does that work in a
daemon thread as soon as a command knows its model goes through litellm, so it overlaps with loading
the config, the user's typing and the session's setup: the same imports, and one streamed completion
that litellm answers itself (``mock_response``), never sent anywhere.

The rehearsal's model is a neutral one, not the user's: with ``mock_response`` litellm still runs
some provider code before answering, and for some providers (Hugging Face's) that code asks the
network. Whatever goes wrong is swallowed: the real turn then does the work, and reports its errors.
"""

from __future__ import annotations

import contextlib
import importlib
import threading

from agentcli.llm import deferred_h2
from agentcli.llm.lazy import get_litellm

THREAD_NAME = "litellm-warm"
# An OpenAI-protocol model litellm answers itself (``mock_response``): its stream goes through the same
# wrapper, message handling and cost bookkeeping as a real one, with no provider code of its own.
REHEARSAL_MODEL = "openai/agentcli-warm-up"
# Providers litellm sends through the OpenAI SDK's client, whose first use imports its ~450 modules of
# resources and types; litellm's own OpenAI-compatible list covers the rest (a few of them have a
# handler of their own: for those the SDK's import is wasted background work, never a wrong answer).
_SDK_PROVIDERS = frozenset({"openai", "azure", "custom_openai", "text-completion-openai", "azure_text"})

_lock = threading.Lock()
_thread: threading.Thread | None = None


def start(model: str, api_base: str | None = None) -> threading.Thread:
    """Rehearse litellm's first stream for ``model`` in a daemon thread, once per process (a later
    call returns the first call's thread). Prints nothing; never delays the exit."""
    global _thread
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=_quietly, args=(model, api_base), name=THREAD_NAME, daemon=True)
            _thread.start()
        return _thread


def _quietly(model: str, api_base: str | None) -> None:
    with contextlib.suppress(Exception):  # the real request does it again, and reports it
        rehearse(model, api_base)


def rehearse(model: str, api_base: str | None = None) -> None:
    """What litellm's first stream for ``model`` imports and loads, done now, in this thread."""
    litellm = get_litellm()
    # The HTTP transport: httpx imports httpcore (and h11) when its first client is built. h2 stays a
    # stand-in until a connection speaks HTTP/2, as on the lean path, whose client may be built at this
    # very moment in another thread (``defer`` must come before httpcore, in whichever thread).
    deferred_h2.defer()
    importlib.import_module("httpcore")
    importlib.import_module("agentcli.llm.litellm_path")
    if uses_openai_sdk(model, api_base):
        importlib.import_module("openai.resources.chat")
    from agentcli.llm.events import ChatRequest
    from agentcli.llm.litellm_path import completion_kwargs

    request = ChatRequest(model=REHEARSAL_MODEL, messages=[{"role": "user", "content": "warm up"}])
    response = litellm.completion(**completion_kwargs(request), mock_response="warm up")
    for _ in response:
        pass


def uses_openai_sdk(model: str, api_base: str | None = None) -> bool:
    """Whether litellm sends ``model``'s requests through the OpenAI SDK's client (a guess that errs
    toward yes: see ``_SDK_PROVIDERS``)."""
    litellm = get_litellm()
    try:
        provider = litellm.get_llm_provider(model, api_base=api_base)[1]
    except Exception:  # an unroutable model: its turn fails before any client is built
        return False
    return provider in _SDK_PROVIDERS or provider in litellm.openai_compatible_providers
