"""``agentcli chat``: the interactive REPL (its state and turns: ``chat_session``; its read loop:
``repl``; its slash commands: ``slash``).

The prompt shows at once. A model the lean path serves never imports litellm; for any other, litellm
imports in the background while the user types. The loop is built when the first message is sent,
under a spinner that starts at Enter. Enter sends, Alt-Enter (or Esc then Enter)
adds a line, Ctrl-C or Esc cancels the running turn (Ctrl-C at the prompt clears the line), Ctrl-D exits.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

from rich.console import Console
from rich.text import Text

from agentcli.cli.chat_mcp import Notices
from agentcli.cli.chat_session import ChatState, open_chat, require_terminal
from agentcli.cli.common import load_config, open_store
from agentcli.cli.repl import repl
from agentcli.cli.trust_question import ask_in_chat
from agentcli.ui.wrap import Wrapped


def _preload() -> None:
    """Import what the first turn needs while the user types (a failure resurfaces at that turn)."""
    with contextlib.suppress(Exception):
        import agentcli.app.setup  # noqa: F401 - the loop, tools, compaction, model routing
        import agentcli.llm.lean_path  # noqa: F401 - httpx
        from agentcli.llm import modelmap

        modelmap.model_map()  # litellm's price and limit map, as JSON


def chat(
    *,
    model: str | None,
    session: str | None,
    cont: bool,
    api_base: str | None,
    yes: bool,
    trust: bool = False,
    agent: str | None = None,
) -> None:
    require_terminal()
    directory = Path.cwd()
    loaded, early = ask_in_chat(load_config(directory, trust=trust), directory)
    from agentcli.app.setup import pick_agent, resolve_session, session_agent, start_mcp, warm_for
    from agentcli.cli.model_choice import default_model, session_model

    store = open_store()
    session_id = resolve_session(store, session, cont, directory)
    if agent is None and session_id is not None:  # a continued session goes on with its agent
        agent = session_agent(loaded, store.get_session(session_id).agent)
    first = pick_agent(loaded, agent)  # an unknown --agent: one line, before the chat opens
    # ... and on its model
    choice = session_model(store, session_id, model, api_base, default_model(loaded, first.name))
    # Only a model the lean path does not serve needs litellm: its import overlaps with the typing.
    # The session loop's own modules (tools, compaction, the HTTP client) load meanwhile too.
    warm_for(loaded, choice.model, choice.api_base)
    threading.Thread(target=_preload, name="agentcli-preload", daemon=True).start()
    notices = Notices(Console(highlight=False))
    mcp = start_mcp(loaded, directory, notify=notices.add)  # in the background: the prompt never waits

    state = ChatState(
        loaded=loaded,
        store=store,
        directory=directory,
        model=choice.model or loaded.config.model or first.model,
        api_base=choice.api_base,
        yes=yes,
        session_id=session_id,
        typed_ahead=early,
        mcp=mcp,
        notices=notices,
        agent=first.name,
        model_pinned=choice.model is not None,
        choice=choice,
    )
    renderer = open_chat(state)
    if (resumed := choice.resumed_line()) is not None:
        state.console.print(Wrapped(Text(resumed, "yellow")), soft_wrap=True)
    _warn_missing_key(state)
    repl(state, renderer)


def _warn_missing_key(state: ChatState) -> None:
    """At startup, without litellm: a key the chosen model surely needs and does not have."""
    from agentcli.llm.keys import key_message, missing_key
    from agentcli.llm.route import resolve

    if not state.model:
        return
    try:
        route = resolve(state.model, state.loaded.config.providers_dict(), state.api_base)
    except ValueError:
        return  # the first message reports a bad name with the full check
    missing = missing_key(route)
    if missing:
        state.console.print(Wrapped(Text(key_message(state.model, missing), "yellow")), soft_wrap=True)
