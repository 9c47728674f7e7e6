"""agentcli's primary agents (build, plan, the config's own) as the client's session modes.

A client is given them twice, as the protocol now has two ways: the session's ``modes`` (a mode per
primary agent, ``session/set_mode`` to switch) and one ``mode`` select among its ``configOptions``
(``session/set_config_option``), which newer clients prefer. Both name the same agents, so either
switch is the other's too. The model is not offered as an option: agentcli's models are the
config's and litellm's whole map, not a short list to pick from (``--model`` chooses one).
"""

from __future__ import annotations

from acp import RequestError
from acp.schema import (
    ConfigOptionUpdate,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
)

from agentcli.session.agents.registry import AgentError, AgentRegistry

MODE_OPTION = "mode"  # the id of the agent's select among the session's config options


def mode_state(registry: AgentRegistry, current: str) -> SessionModeState:
    """The modes (the primary agents, the default first) and the session's own."""
    return SessionModeState(
        current_mode_id=current,
        available_modes=[
            SessionMode(id=a.name, name=a.name, description=a.description or None) for a in registry.primary()
        ],
    )


def config_options(registry: AgentRegistry, current: str) -> list[SessionConfigOptionSelect]:
    """The session's config options: the agent, as a select of category "mode"."""
    return [
        SessionConfigOptionSelect(
            type="select",
            id=MODE_OPTION,
            name="Agent",
            description="Who answers: its prompt, permission rules and tools (Tab in the chat).",
            category="mode",
            current_value=current,
            options=[
                SessionConfigSelectOption(value=a.name, name=a.name, description=a.description or None)
                for a in registry.primary()
            ],
        )
    ]


def options_update(options: list[SessionConfigOptionSelect]) -> ConfigOptionUpdate:
    """The options' new values, for a client that shows the agent as a config option."""
    return ConfigOptionUpdate(session_update="config_option_update", config_options=list(options))


def checked_mode(registry: AgentRegistry, mode_id: object) -> str:
    """The primary agent a client asked for; anything else is JSON-RPC's invalid params."""
    if not isinstance(mode_id, str):
        raise RequestError.invalid_params({"modeId": mode_id, "details": "a mode id is an agent's name"})
    try:
        return registry.require_primary(mode_id, what="mode").name
    except AgentError as exc:
        raise RequestError.invalid_params({"modeId": mode_id, "details": str(exc)}) from None


def checked_option(config_id: str) -> None:
    if config_id != MODE_OPTION:
        details = f"unknown config option {config_id!r} (the options: {MODE_OPTION})"
        raise RequestError.invalid_params({"configId": config_id, "details": details})
