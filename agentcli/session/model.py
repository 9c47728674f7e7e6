"""A model as the session uses it: where requests go (the litellm route) and its limits."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from agentcli.llm import cache, lean
from agentcli.llm.limits import ModelLimits, lookup_limits
from agentcli.llm.route import PLACEHOLDER_API_KEY, Route, resolve
from agentcli.session.window import DEFAULT, DEFAULT_CONTEXT, WindowFinder


@dataclass(frozen=True)
class ModelInfo:
    route: Route
    limits: ModelLimits
    timeout: float | None = None  # seconds; from the provider's options.timeout (milliseconds)
    # Silence allowed before the answer starts and between chunks (OpenCode's options.headerTimeout and
    # options.chunkTimeout, milliseconds, false for none); None: llm/watch.py's defaults.
    first_byte_timeout: float | None = None
    idle_timeout: float | None = None
    # Who told the window when neither the config nor the model map did: a server ("the llama.cpp
    # server"), an overflow error, or "default" (agentcli.session.window); "": the config or the map.
    window_source: str = ""

    def with_window(self, tokens: int, source: str) -> ModelInfo:
        """This model with a window learned since it was resolved (input and output stay as known)."""
        return replace(self, limits=replace(self.limits, context=tokens), window_source=source)

    @property
    def name(self) -> str:
        return self.route.display

    @property
    def lean(self) -> bool:
        """Served by the lean path: nothing about this model needs litellm imported."""
        return lean.serves(self.route.litellm_model, self.route.api_base)

    def request_kwargs(self, session_id: str | None = None) -> dict[str, Any]:
        """The ``ChatRequest`` fields this model sets. ``session_id``: the request belongs to that
        session, which keys the provider's prompt cache where it takes a key (``cache``)."""
        kwargs: dict[str, Any] = {
            "model": self.route.litellm_model,
            "api_base": self.route.api_base,
            "api_key": self.route.api_key,
        }
        extra: dict[str, Any] = dict(self.route.params)
        if self.route.headers:
            extra["extra_headers"] = dict(self.route.headers)
        route = self.route
        if session_id and cache.sends_cache_key(route.litellm_model, route.api_base, route.cache_key):
            extra["prompt_cache_key"] = session_id
        if extra:
            kwargs["extra"] = extra
        if self.timeout:
            kwargs["timeout"] = self.timeout
        if self.first_byte_timeout:
            kwargs["first_byte_timeout"] = self.first_byte_timeout
        if self.idle_timeout:
            kwargs["idle_timeout"] = self.idle_timeout
        return kwargs


def resolve_model(
    name: str,
    providers: dict[str, Any],
    api_base: str | None = None,
    env: Mapping[str, str] | None = None,
    *,
    windows: WindowFinder | None = None,
    default_context: int | None = None,
) -> ModelInfo:
    """Limits from the config's ``provider.<id>.models.<id>.limit`` win over litellm's model map. A
    window neither gives is asked of the model's server through ``windows`` (cached), else taken as
    ``default_context`` (``compaction.default_context``; None: ``window.DEFAULT_CONTEXT``) when
    ``windows`` is given: a front end resolving a model to talk to it. Without ``windows``: unknown."""
    env = os.environ if env is None else env
    route = resolve(name, providers, api_base)
    if (
        route.api_base
        and not route.api_key
        and route.litellm_model.startswith("openai/")
        and not env.get("OPENAI_API_KEY")
    ):
        # A local OpenAI-compatible server needs no key, but the OpenAI client refuses to send without one.
        route = replace(route, api_key=PLACEHOLDER_API_KEY)
    # The lean path never imports litellm: its models' limits come from the JSON map alone.
    ask = not lean.serves(route.litellm_model, route.api_base)
    if route.limits:
        context, input_, output = route.limits
        # Only what the config leaves out is looked up (the map's rules cost a parse of all of it).
        known = ModelLimits() if context and output else lookup_limits(route.litellm_model, ask_litellm=ask)
        limits = ModelLimits(context=context or known.context, input=input_, output=output or known.output)
    else:
        limits = lookup_limits(route.litellm_model, ask_litellm=ask)
    source = ""
    if not limits.context and windows is not None:
        found = windows.find(route)
        context = found.tokens or default_context or DEFAULT_CONTEXT
        source = found.source if found.tokens else DEFAULT
        limits = replace(limits, context=context)
    options = (providers.get(route.provider_id) or {}).get("options") or {}
    timeout = options.get("timeout")
    return ModelInfo(
        window_source=source,
        route=route,
        limits=limits,
        timeout=timeout / 1000 if isinstance(timeout, int) and timeout > 0 else None,
        first_byte_timeout=_silence(options.get("headerTimeout")),
        idle_timeout=_silence(options.get("chunkTimeout")),
    )


def _silence(value: Any) -> float | None:
    """A silence limit from milliseconds; ``false`` turns it off (no limit), anything else: the default."""
    if value is False:
        return math.inf
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return value / 1000
    return None
