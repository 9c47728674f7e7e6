"""Session titles as OpenCode makes them: a short background request to ``small_model`` (else the
session's model) with a title-generator system prompt and no tools. Until it answers, or if it fails,
the title is the first line of the first message."""

from __future__ import annotations

import logging
import threading
from importlib import resources

from agentcli.llm.errors import LLMError
from agentcli.llm.stream import ChatRequest, TextDelta, stream_chat
from agentcli.redact import redact
from agentcli.session.model import ModelInfo
from agentcli.store.errors import StoreError
from agentcli.store.store import Store

log = logging.getLogger(__name__)
MAX_TITLE = 80


def provisional(text: str) -> str:
    """The first line of the user's message, secrets redacted (a title is shown and listed everywhere)."""
    first = next((line.strip() for line in redact(text).splitlines() if line.strip()), "")
    return first if len(first) <= MAX_TITLE else first[: MAX_TITLE - 1].rstrip() + "…"


def clean(raw: str) -> str:
    line = next((ln.strip() for ln in raw.splitlines() if ln.strip()), "")
    for prefix in ("Title:", "title:"):
        line = line.removeprefix(prefix).strip()
    return provisional(line.strip("\"'` ").rstrip(".")) if line else ""


def generate(store: Store, session_id: str, model: ModelInfo, first_message: str) -> threading.Thread:
    def work() -> None:
        prompt = resources.files("agentcli.session").joinpath("prompts/title.txt").read_text(encoding="utf-8")
        request = ChatRequest(
            messages=[
                {"role": "system", "content": prompt},
                # The user's own typed text is redacted too: a pasted key must not reach the title model.
                {
                    "role": "user",
                    "content": f"Generate a title for this conversation:\n\n{redact(first_message[:4000])}",
                },
            ],
            max_tokens=100,
            **{**model.request_kwargs(), "timeout": 30},
        )
        try:
            text = "".join(e.text for e in stream_chat(request) if isinstance(e, TextDelta))
        except LLMError as err:
            log.info("title generation failed: %s", err.message)
            return
        title = clean(text)
        if title:
            try:
                store.update_session(session_id, title=title)
            except StoreError as err:  # the database went away, or the turn lost its lease: no title
                log.info("title not saved: %s", err)

    thread = threading.Thread(target=work, name="agentcli-title", daemon=True)
    thread.start()
    return thread
