"""Which model a session runs on: the one given (--model, /model), else the session's own — its last
model, with the --api-base it was reached through — else the config's. A session's model that
cannot be routed here (a session imported from elsewhere, a provider since removed from the config)
gives way to the config's model, with one line saying so."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentcli.app.setup import ModelUnavailable, build_loop, pick_agent, resolve_session, session_agent
from agentcli.cli import demo_model, lifecycle
from agentcli.cli.common import CliError, say
from agentcli.session.loop import SessionLoop
from agentcli.store.store import Store
from agentcli.trusted_config import TrustedConfig

API_BASE_STATE = "api_base"  # the session's --api-base, kept with its model


@dataclass(frozen=True)
class ModelChoice:
    model: str | None  # None: the config's
    api_base: str | None
    from_session: bool = False  # the session's own model (may give way to the config's)
    given_api_base: str | None = None  # --api-base itself
    resumed_api_base: bool = False  # api_base is the session's stored one (none given now)

    def resumed_line(self) -> str | None:
        """A resumed session goes back to its stored base URL, perhaps one that never answered: said."""
        if not self.resumed_api_base:
            return None
        return f"resuming on {self.api_base}, this session's base URL (--api-base URL to use another)"

    def instead(self) -> ModelChoice:
        """The config's model, for when the session's cannot be used."""
        return ModelChoice(None, self.given_api_base, False, self.given_api_base)


def session_model(
    store: Store,
    session_id: str | None,
    model: str | None,
    api_base: str | None,
    default: str | None = None,
) -> ModelChoice:
    """The model and API base a session runs on: those given, else the session's own (its last model,
    with the base URL it was used with), so `-c` needs no --model again. ``default``: the model the
    loop would choose by itself (the config's, else the agent's); a session on it pins nothing, so an
    agent's own model still applies when the agent changes."""
    if model or session_id is None:
        return ModelChoice(model, api_base, False, api_base)
    session = store.get_session(session_id)
    base = api_base or store.get_state(session_id, API_BASE_STATE)
    resumed = api_base is None and base is not None
    if not session.model or session.model == default:
        return ModelChoice(None, base, False, api_base, resumed)
    return ModelChoice(session.model, base, True, api_base, resumed)


def default_model(loaded: TrustedConfig, agent: str | None) -> str | None:
    """The model a loop picks when none is given: the config's, else the agent's own."""
    if loaded.config.model:
        return loaded.config.model
    try:
        return pick_agent(loaded, agent).model
    except CliError:
        return None


def remember_model(store: Store, session_id: str, model: str, api_base: str | None) -> None:
    """The session's model is now ``model`` (reached through ``api_base``): a later `-c` resumes on it."""
    if store.get_session(session_id).model != model:
        store.update_session(session_id, model=model)
    if store.get_state(session_id, API_BASE_STATE) != api_base:
        store.set_state(session_id, API_BASE_STATE, api_base)


def _warn(line: str) -> None:
    say(f"agentcli: warning: {line}")


def build_chosen(
    loaded: TrustedConfig,
    store: Store,
    choice: ModelChoice,
    *,
    warn: Callable[[str], None] = _warn,
    **options: Any,
) -> tuple[SessionLoop, ModelChoice]:
    """``build_loop`` on ``choice``; a session's model nothing here can route gives way to the config's
    model (said through ``warn``). Returns the loop and the choice it was built on."""
    try:
        # A stored demo session: its model lives only inside the demo.
        loaded = demo_model.for_session(loaded, choice.model, sends=options.get("need_key", True))
        built = build_loop(loaded, store, model=choice.model, api_base=choice.api_base, **options), choice
    except ModelUnavailable as exc:
        if not choice.from_session or not loaded.config.model:
            raise
        warn(f"{exc} — going on with {loaded.config.model} instead")
        instead = choice.instead()
        built = build_loop(loaded, store, model=None, api_base=instead.api_base, **options), instead
    lifecycle.settle()  # startup is over: what it loaded is frozen, collections resume their pace
    return built


def loop_for_session(
    ref: str | None, *, model: str | None, api_base: str | None, missing: str, need_key: bool = True
) -> tuple[SessionLoop, str]:
    """A non-interactive loop on a stored session (by id, else the latest here), in the session's
    directory and with its model unless ``model`` says otherwise. ``missing``: the error without one;
    ``need_key``: as ``build_loop``'s."""
    from agentcli.cli.common import load_config, open_store, require_trust

    directory = Path.cwd()
    loaded = load_config(directory)
    require_trust(loaded)
    store = open_store()
    session_id = resolve_session(store, ref, cont=ref is None, directory=directory)
    if session_id is None:
        raise CliError(missing)
    session = store.get_session(session_id)
    agent = session_agent(loaded, session.agent)
    loop, _ = build_chosen(
        loaded,
        store,
        session_model(store, session_id, model, api_base, default_model(loaded, agent)),
        yes=False,
        asker=None,
        directory=Path(session.directory or directory),
        agent=agent,
        need_key=need_key,
    )
    return loop, session_id
