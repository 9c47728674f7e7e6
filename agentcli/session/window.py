"""The window of a model whose limits no config and no model map give: asked of its server once and
kept in a private cache across runs, learned from an overflow error that names it, or a conservative
default said in one line (docs/local-models.md).

The cache (``<data dir>/model-windows.json``, 0600) is keyed by base URL and model. An answer is
trusted for a day (a server restarted with another ``-c`` is asked again the day after); an overflow
error naming another window replaces it at once.
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, Self, TypeVar

from agentcli.llm import window as server_window
from agentcli.llm.route import Route
from agentcli.private_files import write_private
from agentcli.session import events
from agentcli.store.records import LearnedWindow
from agentcli.store.store import Store


class Windowed(Protocol):
    """A model as far as its window goes (``agentcli.session.model.ModelInfo``, which builds on this
    module: named by its shape, not imported)."""

    @property
    def name(self) -> str: ...
    @property
    def limits(self) -> Any: ...
    @property
    def route(self) -> Route: ...
    @property
    def window_source(self) -> str: ...
    def with_window(self, tokens: int, source: str) -> Self: ...


M = TypeVar("M", bound=Windowed)

DEFAULT_CONTEXT = 32_768  # compaction.default_context: a window nothing tells (docs/local-models.md)
CACHE_NAME = "model-windows.json"
TTL_SECONDS = 24 * 3600
LEARNED = "the provider's overflow error"
DEFAULT = "default"


@dataclass(frozen=True)
class Found:
    tokens: int  # 0: nothing told it
    source: str


@dataclass(frozen=True)
class WindowFinder:
    """Where the cache lives; ``discover`` False: the cache only, never a request (``/context`` views)."""

    data_dir: Path
    discover: bool = True

    @property
    def path(self) -> Path:
        return self.data_dir / CACHE_NAME

    def find(self, route: Route) -> Found:
        """The window of the model ``route`` sends to, from the cache or its server; 0 when neither says."""
        if not route.api_base:
            return Found(0, "")
        key = cache_key(route)
        cached = self._read().get(key)
        if isinstance(cached, dict) and time.time() - float(cached.get("at") or 0) < TTL_SECONDS:
            return Found(int(cached.get("tokens") or 0), str(cached.get("source") or ""))
        if not self.discover:
            return Found(0, "")
        said = server_window.discover(route.api_base, server_model(route), route.api_key)
        found = Found(said.tokens, said.source) if said else Found(0, "")
        self.remember(route, found)  # a server that says nothing is not asked again for a day
        return found

    def remember(self, route: Route, found: Found) -> None:
        """Keep ``found`` for ``route``'s model; never raises (a read-only home keeps nothing)."""
        entries = self._read()
        entries[cache_key(route)] = {"tokens": found.tokens, "source": found.source, "at": time.time()}
        with contextlib.suppress(OSError):
            write_private(self.path, json.dumps(entries, indent=1, sort_keys=True))

    def _read(self) -> dict[str, object]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}


def cache_key(route: Route) -> str:
    return f"{(route.api_base or '').rstrip('/')} {server_model(route)}"


def server_model(route: Route) -> str:
    """The model id the server knows (``openai/qwen3:8b`` is sent as ``qwen3:8b``)."""
    prefix, _, rest = route.litellm_model.partition("/")
    return (
        rest
        if rest and prefix in ("openai", "hosted_vllm", "lm_studio", "ollama", "ollama_chat")
        else (route.litellm_model)
    )


def truncated(prompt_tokens: int, sent: int) -> bool:
    """Ollama's OpenAI endpoint cuts a prompt longer than its ``num_ctx`` without a word: the usage it
    reports then counts far fewer prompt tokens than were sent (``sent``: our estimate, which is never
    off by a fifth and by thousands of tokens at once)."""
    return prompt_tokens > 0 and sent - prompt_tokens > 2000 and prompt_tokens < sent * 0.8


def truncation_note(prompt_tokens: int, sent: int) -> str:
    """Who told the window when the server was seen cutting a prompt (see ``truncated``)."""
    return (
        f"the server counted {prompt_tokens:,} of about {sent:,} prompt tokens sent: it cut the prompt "
        "without saying so; Ollama: raise num_ctx or OLLAMA_CONTEXT_LENGTH"
    )


# -- learned while talking -------------------------------------------------------------------


def learn(loop: Any, session_id: str, tokens: int, source: str) -> Any:
    """The provider said the loop's model has a window of ``tokens``: the session keeps it, the cache
    too (the next session starts knowing it), and the user is told in one line. Returns the model with
    that window; None when it is what was already known, or when the config or the model map gives the
    window (the user's word stands; an overflow then compacts and replays as always)."""
    model: Windowed = loop.model
    if not model.window_source or tokens <= 0 or tokens == model.limits.context:
        return None
    loop.store.update_session(
        session_id, window=LearnedWindow(model=model.name, tokens=tokens, source=source)
    )
    if model.route.api_base:
        WindowFinder(loop.options.data_dir).remember(model.route, Found(tokens, source))
    line = f"{model.name}: the context window is {tokens:,} tokens ({source}); kept for this model"
    loop.bus.publish(events.WindowLearned(session_id, tokens, line))
    return model.with_window(tokens, source)


def session_window(store: Store, session_id: str, model: M) -> M:
    """``model`` with the window the session learned for it, when the session learned one."""
    seen = store.get_session(session_id).window
    if seen is None or seen.model != model.name or seen.tokens == model.limits.context:
        return model
    return model.with_window(seen.tokens, seen.source or LEARNED)
