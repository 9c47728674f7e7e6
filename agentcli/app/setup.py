"""Building a SessionLoop from the config and command-line choices (imports litellm only for a model
the lean path does not serve)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.app.errors import CliError
from agentcli.bus import Bus
from agentcli.config import LoadedConfig, data_dir, global_config_dir, project_root
from agentcli.llm.keys import DEMO_HINT, key_message, missing_key_thorough
from agentcli.plugins.manager import Plugins
from agentcli.private_files import private_dir
from agentcli.session.agents.registry import Agent, AgentError, AgentRegistry
from agentcli.session.loop import SessionLoop
from agentcli.session.model import ModelInfo, resolve_model
from agentcli.session.options import DEFAULT_MAX_STEPS, LoopOptions
from agentcli.session.permission import Asker, PermissionPolicy
from agentcli.session.runtime import SessionRuntime
from agentcli.session.window import DEFAULT, WindowFinder
from agentcli.store.store import Store
from agentcli.trusted_config import TrustedConfig

if TYPE_CHECKING:  # the MCP host is imported when servers start (it brings asyncio)
    from agentcli.mcp.host import McpHost

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


def model_info(loaded: LoadedConfig, name: str, api_base: str | None, *, discover: bool = True) -> ModelInfo:
    """``discover`` False: a window no config or map gives comes from the cache alone (never a request)."""
    try:
        info = resolve_model(
            name,
            loaded.config.providers_dict(),
            api_base,
            windows=WindowFinder(private_dir(data_dir()), discover=discover),
            default_context=loaded.config.compaction.default_context,
        )
    except ValueError as exc:
        raise ModelUnavailable(str(exc), 2) from None
    _check_provider(info)
    return info


def default_window_line(info: ModelInfo) -> str:
    """The one line for a model whose window nothing tells: compaction still works, on a guess."""
    return (
        f"the context window of {info.name} is unknown (no limit in the config, its server does not say): "
        f"taking {info.limits.context:,} tokens; set the model's limit.context or compaction.default_context"
    )


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
    """Start importing litellm, and rehearsing its first stream (``llm.warm``), in the background now if
    a model this process will use (the session model, ``small_model``, the compaction agent's) needs
    it, so that work overlaps with everything else instead of delaying the first answer; True when
    started. Never raises: a bad model name is reported later, by ``build_loop``."""
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
            from agentcli.llm import warm

            warm.start(route.litellm_model, route.api_base)
            return True
    return False


def start_mcp(
    loaded: TrustedConfig,
    directory: Path,
    notify: Callable[[str], None] | None = None,
    joined: Mapping[str, Any] | None = None,
    changed: Callable[[], None] | None = None,
) -> McpHost | None:
    """Start the configured MCP servers in the background (None when there are none: the SDK is then
    never imported). An untrusted project's servers were already left out of ``loaded``. ``joined``:
    servers of the user's own from elsewhere (an editor's, over ACP), replacing config ones by name."""
    servers = {**loaded.config.mcp, **(joined or {})}
    if not servers:
        return None  # the host's own modules are not even loaded
    from agentcli.mcp.host import from_config

    return from_config(
        servers,
        directory=directory,
        log_dir=private_dir(data_dir()) / "mcp",
        notify=notify or stderr_line,
        changed=changed,
    )


def stderr_line(line: str) -> None:
    """One line from another thread (an MCP server's): written in one call, so that the turn's own
    output cannot land between the line and its newline."""
    text = f"agentcli: {line}"
    if sys.stderr.isatty():  # wrapped between words, never inside one, in a narrow terminal
        from agentcli.ui.wrap import for_stream

        text = for_stream(text, sys.stderr)
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def mcp_notes(loaded: TrustedConfig) -> list[str]:
    """Why a project's servers are not there: the folder is not trusted (their keys were left out)."""
    state = loaded.trust
    if state is None or state.trusted:
        return []
    names = []
    for key in state.keys():  # noqa: SIM118 - a method of the trust state, not a dict
        parts = key.split(".")
        if parts[0] == "mcp" and len(parts) == 2:
            names.append(parts[1])
        elif parts[0] == "agent" and len(parts) == 4 and parts[2] == "mcp":
            names.append(f"{parts[3]} (@{parts[1]})")  # an agent's own server
    if not names:
        return []
    return [f"not started, this folder is not trusted: {', '.join(names)} (`agentcli trust {state.root}`)"]


def agent_mcp_starter(
    loaded: TrustedConfig, directory: Path, notify: Callable[[str], None] | None = None
) -> Callable[[str, Mapping[str, Any]], McpHost | None]:
    """How a loop starts an agent's own MCP servers the first time that agent runs."""

    def start(agent: str, servers: Mapping[str, Any]) -> McpHost | None:
        from agentcli.mcp.host import from_config

        return from_config(
            servers,
            directory=directory,
            log_dir=private_dir(data_dir()) / "mcp" / agent.replace("/", "_"),
            notify=notify or stderr_line,
            owner=agent,
        )

    return start


def pick_agent(loaded: TrustedConfig, name: str | None) -> Agent:
    """The agent a loop starts with: ``--agent``, else the config's default; one line when unusable."""
    registry = AgentRegistry.from_config(loaded.config)
    try:
        return registry.require_primary(name, what="--agent") if name else registry.default()
    except AgentError as exc:
        raise CliError(str(exc), 2) from None


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
    mcp: McpHost | None = None,
    agent: str | None = None,
    notify: Callable[[str], None] | None = None,
    need_key: bool = True,
) -> SessionLoop:
    """``model``: the user's choice (--model, /model, a continued session's own), which an agent's own
    model does not replace. ``need_key`` False: the loop will send nothing (undoing a compaction, the
    context view), so a missing key is not a reason to refuse."""
    config = loaded.config
    start_agent = pick_agent(loaded, agent)
    main = model_info(
        loaded, choose_model(loaded, model or (None if config.model else start_agent.model)), api_base
    )
    if need_key:
        check_key(main)
    if main.window_source == DEFAULT:
        (notify or stderr_line)(default_window_line(main))
    small = (
        model_info(loaded, config.small_model, api_base if not config.small_model else None)
        if config.small_model
        else None
    )
    compacting = config.agent.get("compaction")
    compaction = model_info(loaded, compacting.model, None) if compacting and compacting.model else None
    bus = bus or Bus()
    plugins = Plugins(bus)
    plugins.load(list(config.plugin), project_root(directory))
    loop = SessionLoop(
        SessionRuntime(
            store=store,
            config=config,
            model=main,
            options=LoopOptions(
                directory=directory,
                data_dir=private_dir(data_dir()),  # spilled tool outputs live here: 0700
                global_config_dir=global_config_dir(),
                max_steps=DEFAULT_MAX_STEPS,  # an agent's `steps` replaces it for that agent
                on_busy=stderr_line,
                project_trusted=loaded.trust is None or loaded.trust.trusted,
                folder_trusted=loaded.trust is not None and loaded.trust.explicit,
                mcp=mcp,
                agent_mcp=agent_mcp_starter(loaded, directory, notify),
                resolve_model=lambda name: _checked_model(loaded, name),
                model_pinned=model is not None,
            ),
            bus=bus,
            plugins=plugins,
            policy=PermissionPolicy.for_config(loaded, yes=yes, asker=asker),
            small_model=small,
            compaction_model=compaction,
            agent=start_agent,
        )
    )
    return loop


def _checked_model(loaded: TrustedConfig, name: str) -> ModelInfo:
    info = model_info(loaded, name, None)
    check_key(info)
    return info


def resolve_session(store: Store, session: str | None, cont: bool, directory: Path) -> str | None:
    if session:
        return store.find_session(session).id
    if cont:
        latest = store.latest_session(str(directory))
        if latest is None:
            raise CliError(f"no session to continue in {directory}")
        return latest.id
    return None


def session_agent(loaded: TrustedConfig, recorded: str | None) -> str | None:
    """A continued session's agent, if the config still has it as a primary agent (else the default)."""
    if not recorded:
        return None
    agent = AgentRegistry.from_config(loaded.config).get(recorded)
    return recorded if agent is not None and agent.primary else None


def mentioned_subagent(runtime: SessionRuntime, text: str, directory: Path) -> str | None:
    """``@name message`` where ``name`` is a subagent (and no file of that name is here): the name."""
    first = text.lstrip().split(None, 1)[0] if text.strip() else ""
    if not first.startswith("@") or len(first) < 2:
        return None
    name = first[1:]
    agent = runtime.agents.get(name) if runtime.agents is not None else None
    if agent is None or not agent.subagent or (directory / name).exists():
        return None
    return name
