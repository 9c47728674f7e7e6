"""A model as the session uses it: where requests go (the litellm route) and its limits."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentcli.llm.limits import ModelLimits, lookup_limits
from agentcli.llm.route import Route, resolve


@dataclass(frozen=True)
class ModelInfo:
    route: Route
    limits: ModelLimits

    @property
    def name(self) -> str:
        return self.route.display

    def request_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"model": self.route.litellm_model, "api_base": self.route.api_base,
                                  "api_key": self.route.api_key}
        if self.route.headers:
            kwargs["extra"] = {"extra_headers": dict(self.route.headers)}
        return kwargs


def resolve_model(name: str, providers: dict[str, Any], api_base: str | None = None) -> ModelInfo:
    """Limits from the config's ``provider.<id>.models.<id>.limit`` win over litellm's model map."""
    route = resolve(name, providers, api_base)
    if route.limits:
        context, input_, output = route.limits
        known = lookup_limits(route.litellm_model)
        limits = ModelLimits(context=context or known.context, input=input_, output=output or known.output)
    else:
        limits = lookup_limits(route.litellm_model)
    return ModelInfo(route=route, limits=limits)
