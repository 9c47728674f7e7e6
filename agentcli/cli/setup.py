"""Building a SessionLoop from the config and command-line choices (imports litellm only for a model
the lean path does not serve)."""

from __future__ import annotations

import sys
from pathlib import Path

from agentcli.bus import Bus
from agentcli.cli import lifecycle
from agentcli.cli.common import CliError
from agentcli.config import LoadedConfig, data_dir, global_config_dir, project_root
from agentcli.llm.keys import DEMO_HINT, key_message, missing_key_thorough
from agentcli.plugins.manager import Plugins
from agentcli.private_files import private_dir
from agentcli.session.loop import DEFAULT_MAX_STEPS, LoopOptions, SessionLoop
from agentcli.session.model import ModelInfo, resolve_model
from agentcli.session.permission import Asker, PermissionPolicy
from agentcli.store.store import Store
from agentcli.trusted_config import TrustedConfig

NO_MODEL = (
    'no model chosen: pass --model (e.g. openai/gpt-4o, ollama/llama3) or set "model" in opencode.json, '
    f"{DEMO_HINT}"
)


def choose_model(loaded: LoadedConfig, model: str | None) -> str:
    name = model or loaded.config.model
    if not name:
        raise CliError(NO_MODEL, 2)
    return name


class ModelUnavailable(CliError):
    """A model name nothing here can route (a session's model whose provider is not configured)."""


def model_info(loaded: LoadedConfig, name: str, api_base: str | None) -> ModelInfo:
    try:
        info = resolve_model(name, loaded.config.providers_dict(), api_base)
    except ValueError as exc:
        raise ModelUnavailable(str(exc), 2) from None
    _check_provider(info)
    return info


def check_key(info: ModelInfo) -> None:
    """Before any request: a provider key that is surely missing is one line, not a failed call."""
    missing = missing_key_thorough(info.route)
    if missing:
        raise CliError(key_message(info.name, missing), 2)


def _check_provider(info: ModelInfo) -> None:
    """Fail fast, in one line, on a model string litellm cannot route (instead of a failed request).
    A model the lean path serves is routable by construction: litellm is not imported for it."""
    if info.lean:
        return
    from agentcli.llm.lazy import get_litellm

    litellm = get_litellm()
    try:
        litellm.get_llm_provider(info.route.litellm_model, api_base=info.route.api_base)
    except Exception:
        raise ModelUnavailable(
            f"unknown model '{info.name}': litellm cannot tell which provider serves it; use a litellm model "
            "string such as openai/gpt-4o or anthropic/claude-sonnet-4-20250514, or provider/model from "
            "opencode.json",
            2,
        ) from None


def warm_for(loaded: LoadedConfig, model: str | None, api_base: str | None) -> bool:
    """Start importing litellm in the background now if a model this process will use (the session
    model, ``small_model``, the compaction agent's) needs it, so the import overlaps with everything
    else; True when started. Never raises: a bad model name is reported later, by ``build_loop``."""
    from agentcli.llm import lean
    from agentcli.llm.route import resolve

    config = loaded.config
    agent = config.agent.get("compaction")
    wanted = [
        (model or config.model, api_base),
        (config.small_model, None),
        (agent.model if agent else None, None),
    ]
    for name, base in wanted:
        if not name:
            continue
        try:
            route = resolve(name, config.providers_dict(), base)
        except ValueError:
            continue
        if not lean.serves(route.litellm_model, route.api_base):
            from agentcli.llm.lazy import warm_in_background

            warm_in_background()
            return True
    return False


def build_loop(
    loaded: TrustedConfig,
    store: Store,
    *,
    model: str | None,
    api_base: str | None,
    yes: bool,
    asker: Asker | None,
    directory: Path,
    bus: Bus | None = None,
    need_key: bool = True,
) -> SessionLoop:
    """``need_key`` False: the loop will send nothing (undoing a compaction, the context view), so a
    missing key is not a reason to refuse."""
    config = loaded.config
    main = model_info(loaded, choose_model(loaded, model), api_base)
    if need_key:
        check_key(main)
    small = (
        model_info(loaded, config.small_model, api_base if not config.small_model else None)
        if config.small_model
        else None
    )
    agent = config.agent.get("compaction")
    compaction = model_info(loaded, agent.model, None) if agent and agent.model else None
    build = config.agent.get("build")
    bus = bus or Bus()
    plugins = Plugins(bus)
    plugins.load(list(config.plugin), project_root(directory))
    rules = config.permission.model_dump(exclude_none=True)
    loop = SessionLoop(
        store=store,
        config=config,
        model=main,
        options=LoopOptions(
            directory=directory,
            data_dir=private_dir(data_dir()),  # spilled tool outputs live here: 0700
            global_config_dir=global_config_dir(),
            max_steps=(build.max_steps if build and build.max_steps else DEFAULT_MAX_STEPS),
            on_busy=lambda line: print(f"agentcli: {line}", file=sys.stderr, flush=True),
            project_trusted=loaded.trust is None or loaded.trust.trusted,
        ),
        bus=bus,
        plugins=plugins,
        policy=PermissionPolicy(rules=rules, yes=yes, asker=asker),
        small_model=small,
        compaction_model=compaction,
    )
    lifecycle.settle()  # startup is over: what it loaded is frozen, collections resume their pace
    return loop


def resolve_session(store: Store, session: str | None, cont: bool, directory: Path) -> str | None:
    if session:
        return store.find_session(session).id
    if cont:
        latest = store.latest_session(str(directory))
        if latest is None:
            raise CliError(f"no session to continue in {directory}")
        return latest.id
    return None
