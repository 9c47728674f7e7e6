"""Sending one summary request and writing its answer as the summary message: the compactor's, and
a background summary's (``background``), which writes into a scratch store of its own."""

from __future__ import annotations

import threading
from functools import partial

from agentcli.bus import Bus
from agentcli.llm.events import ChatRequest
from agentcli.redact import redact
from agentcli.session.compaction.summary_text import ensure_text
from agentcli.session.model import ModelInfo
from agentcli.session.processor import Processor, StepPolicy
from agentcli.session.usage import step_cost
from agentcli.store import ids
from agentcli.store.records import AssistantMessage
from agentcli.store.store import Store


def summary_message(session_id: str, parent_id: str, model: ModelInfo) -> AssistantMessage:
    """A new summary message (the compaction agent's) answering ``parent_id``."""
    return AssistantMessage(
        id=ids.ascending("msg"),
        session_id=session_id,
        parent_id=parent_id,
        agent="compaction",
        mode="compaction",
        model=model.name,
        summary=True,
    )


def summary(
    store: Store,
    bus: Bus,
    abort: threading.Event,
    message: AssistantMessage,
    request: ChatRequest,
    model: ModelInfo,
    *,
    riding: bool,
) -> str:
    """Send ``request`` to ``model`` and write its answer as ``message`` in ``store``. Returns "ok",
    "overflow" (too long, or a cache-riding request answered with a tool call and no text: retry with
    the transcript, smaller) or "error". ``riding``: the cache-riding request, whose stray tool call
    is dropped."""
    message.error = None
    message.finish = None
    policy = StepPolicy(
        cost=partial(step_cost, model.route.litellm_model),
        is_overflow=lambda _t: False,
        auto_compact=False,
        run_tools=None,
        stored_text=redact,
        ignore_calls=riding,
    )
    Processor(store, bus, abort).process(message, request, policy)
    if message.error is None and message.finish:
        called = message.finish == "tool-calls"  # only a call, dropped: asked again as a transcript
        if ensure_text(store, message):
            if message.finish == "tool-calls":  # a stray call dropped: the summary is done all the same
                message.finish = "stop"
                store.put_message(message)
            return "ok"
        return "overflow" if called and riding else "error"
    if message.error is not None and message.error.name == "ContextOverflowError":
        return "overflow"
    return "error"
