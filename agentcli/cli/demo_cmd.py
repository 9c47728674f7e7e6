"""``agentcli demo``: a short real session with no key and no network.

A scripted model (the tests' server, shipped in the package) runs on 127.0.0.1 inside this process;
the real loop, tools and store work on a scratch project, so the user sees a file read and edited,
the gauge climb, a pruning and an automatic compaction — then is left in the REPL on that session.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from rich.text import Text

from agentcli.cli.chat_session import ChatState, open_chat, require_terminal, send
from agentcli.cli.common import open_store
from agentcli.cli.demo_model import MODEL, demo_config
from agentcli.cli.repl import repl
from agentcli.demo import script
from agentcli.demo.scripted_server import FakeLLM, Reply, is_summary_request
from agentcli.ui import theme
from agentcli.ui.wrap import Wrapped


def run_demo(*, chat: bool, fast: bool) -> None:
    if chat:
        require_terminal()
    # The scripted model is OpenAI-compatible: the lean streaming path serves it, litellm is never imported.
    root = Path(tempfile.mkdtemp(prefix="agentcli-demo-"))  # private (0700)
    script.make_project(root)
    os.chdir(root)  # the bash tool and the REPL work here, as if the user had started agentcli in it
    server = FakeLLM().start()
    server.title = script.TITLE
    server.fallback = script.FALLBACK
    store = open_store()
    state = ChatState(
        loaded=demo_config(server.base_url), store=store, directory=root, model=MODEL, api_base=None, yes=True
    )
    console = state.console
    renderer = open_chat(state)
    console.print(
        Wrapped(
            Text(
                "A scripted local model (no key, no network; its answers and token counts are canned) "
                f"works on a scratch project in {root}.",
                theme.META,
            )
        ),
        soft_wrap=True,
    )
    pause = 0.0 if fast else 1.2
    for turn in script.turns(root, pace=0.0 if fast else 0.02):
        time.sleep(pause)
        console.print(f"[bold]› {turn.prompt}[/]")
        server.push(*turn.replies)
        send(state, renderer, turn.prompt)
        if state.turn is not None and state.turn.cancelled:
            break
    # /compact after the script: a summary, not the "no more script" reply, becomes the summary.
    server.on(lambda rec: is_summary_request(rec.body), Reply(text=script.LATER_SUMMARY, chunk_size=24))
    state.yes = False  # from here on the user answers permission questions as in any chat
    state.loop = None
    sid = state.session_id
    if not chat:
        console.print(Wrapped(Text(f"demo session {sid} in {root}")), soft_wrap=True)
        return
    console.print(
        Wrapped(
            Text(
                f"The demo session is yours now ({sid}): the scripted model has no more script, but "
                "/context, /sessions, /compact and /help work; /model NAME switches to a real model.",
                theme.META,
            )
        ),
        soft_wrap=True,
    )
    repl(state, renderer)
