"""The demo's scripted model, as the rest of agentcli meets it: ``agentcli demo`` builds its config
here, and a stored demo session (``agentcli context``, ``compact --undo``, ``-c``) is told apart from an
unknown model — its limits are known, and it answers only inside the demo."""

from __future__ import annotations

import dataclasses

from agentcli.app.setup import ModelUnavailable
from agentcli.config import Config
from agentcli.trusted_config import TrustedConfig

MODEL = "demo/scripted"
_NOWHERE = "http://127.0.0.1:9/v1"  # the discard port: a stored demo session is never sent anything


def _provider(base_url: str) -> dict[str, object]:
    from agentcli.demo.script import CONTEXT, OUTPUT  # the script's figures are told against this window

    return {
        "npm": "@ai-sdk/openai-compatible",
        "options": {"baseURL": base_url, "apiKey": "demo"},
        "models": {"scripted": {"limit": {"context": CONTEXT, "output": OUTPUT}}},
    }


def demo_config(base_url: str) -> TrustedConfig:
    """The demo's own config: the scripted provider, pruning and auto-compaction on, whatever the
    user's files say (they are not read: the demo must look the same everywhere)."""
    config = Config.model_validate(
        {
            "model": MODEL,
            "provider": {"demo": _provider(base_url)},
            "compaction": {"auto": True, "prune": True},
        }
    )
    return TrustedConfig(config=config, sources=[], warnings=[])


def for_session(loaded: TrustedConfig, model: str | None, *, sends: bool) -> TrustedConfig:
    """``loaded``, able to serve a stored demo session's model when nothing will be sent (the context
    view, undoing a compaction); with ``sends``, one clear line instead of "unknown model" (a config
    model, if any, takes over as for any session whose model is gone)."""
    if model != MODEL or "demo" in loaded.config.provider:
        return loaded
    if sends:
        raise ModelUnavailable(
            f"{MODEL} is agentcli demo's scripted model and answers only inside the demo;"
            " pass --model NAME to go on with a real model",
            2,
        )
    provider = {**loaded.config.providers_dict(), "demo": _provider(_NOWHERE)}
    config = loaded.config.model_copy(
        update={"provider": Config.model_validate({"provider": provider}).provider}
    )
    return dataclasses.replace(loaded, config=config)
