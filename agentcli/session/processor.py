"""One LLM step: stream the response into parts (persisted as they arrive), run the tool calls,
record usage and cost, and say what the loop should do next.

Outcomes: ``continue`` (the step finished; the loop decides whether to go on), ``stop`` (error or
abort: end the turn), ``compact`` (the context overflowed: the loop queues a compaction).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from agentcli.bus import Bus
from agentcli.llm.assembly import ToolCalls
from agentcli.llm.errors import LLMError, retry_delay
from agentcli.llm.stream import (
    ChatRequest,
    Finish,
    ReasoningDelta,
    ReasoningSignature,
    RedactedReasoning,
    TextDelta,
    ToolCallDelta,
    Usage,
    stream_chat,
)
from agentcli.session import events
from agentcli.session.request import figure
from agentcli.session.request.history import INTERRUPTED_TEXT
from agentcli.session.usage import estimate, normalize
from agentcli.session.window import LEARNED, truncated, truncation_note
from agentcli.store import ids
from agentcli.store.records import (
    AssistantMessage,
    MessageError,
    PartTime,
    ReasoningPart,
    StepFinishPart,
    StepStartPart,
    TextPart,
    Tokens,
    ToolPart,
    ToolState,
    now_ms,
)
from agentcli.store.store import Store

Outcome = Literal["continue", "stop", "compact"]

FLUSH_SECONDS = 0.5  # a streaming part is durable within this long
DEFAULT_MAX_RETRIES = 4  # transient failures (rate limits, provider down) retried with backoff


def _sealed(event: ReasoningSignature | RedactedReasoning) -> dict[str, str]:
    """The provider metadata of a reasoning part, as the AI SDK names it (OpenCode stores the same)."""
    if isinstance(event, ReasoningSignature):
        return {"signature": event.signature}
    return {"redactedData": event.data}


def max_retries() -> int:
    raw = os.environ.get("AGENTCLI_MAX_RETRIES", "")
    return int(raw) if raw.isdigit() else DEFAULT_MAX_RETRIES


# OpenAI finish reasons → OpenCode's names.
FINISH = {
    "tool_calls": "tool-calls",
    "function_call": "tool-calls",
    "stop": "stop",
    "length": "length",
    "content_filter": "content-filter",
    "end_turn": "stop",
}


@dataclass
class StepPolicy:
    """What the processor needs from the loop besides the request."""

    cost: Callable[[Usage], float]
    is_overflow: Callable[[Tokens], bool]
    auto_compact: bool = True
    # Runs a step's tool calls; returns True when the turn must stop. None: no tools (summary).
    run_tools: Callable[[AssistantMessage, list[ToolPart]], bool] | None = None
    stored_text: Callable[[str], str] | None = None  # applied to text as it is written (summaries: redaction)
    # A summary request that offers the session's tools (to ride its prompt cache) ignores a stray
    # call instead of failing on it: the summary is the text.
    ignore_calls: bool = False
    # The provider told the model's window (tokens, who said it): the loop adopts it (session/window.py).
    learn_window: Callable[[int, str], None] | None = None
    watch_truncation: bool = False  # a local server that may cut a long prompt silently (Ollama)


@dataclass
class _Call:
    part: ToolPart
    raw: str = ""
    name: str = ""


@dataclass
class _Writer:
    """Coalesces streaming deltas into at most one write per part every FLUSH_SECONDS."""

    store: Store
    text_filter: Callable[[str], str] | None = None
    dirty: dict[str, Any] = field(default_factory=dict)
    last: float = field(default_factory=time.monotonic)

    def touch(self, part: Any) -> None:
        self.dirty[part.id] = part
        if time.monotonic() - self.last >= FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        for part in self.dirty.values():
            if self.text_filter is not None and isinstance(part, TextPart | ReasoningPart):
                part = part.model_copy(update={"text": self.text_filter(part.text)})
            self.store.put_part(part)
        self.dirty.clear()
        self.last = time.monotonic()


@dataclass
class _Step:
    """One attempt's parts as the stream fills them: each stream event type has a small handler
    (``_ON``). Text and reasoning stream into one part each; tool calls by the index they arrive under."""

    sid: str
    message_id: str
    bus: Bus
    writer: _Writer
    tools_offered: bool  # False for a summary: a tool call there fails the summary
    ignore_calls: bool = False  # a summary offered tools for the cache: a call is dropped unseen
    text: TextPart | None = None
    reasoning: ReasoningPart | None = None
    calls: ToolCalls[_Call] = field(init=False)  # joined by llm.assembly's one rule
    finish: str | None = None
    usage: Usage | None = None
    received: bool = False
    output_chars: int = 0  # what the answer held, for an estimate when the provider reports no usage

    def __post_init__(self) -> None:
        self.calls = ToolCalls(self._new_call)

    def on(self, event: Any) -> None:
        self.received = True
        handler = _ON.get(type(event))
        if handler is not None:
            handler(self, event)

    def on_text(self, event: TextDelta) -> None:
        if self.reasoning is not None and self.text is None:
            self.end_text()
        if self.text is None:
            self.text = TextPart(
                id=ids.ascending("prt"), session_id=self.sid, message_id=self.message_id, time=PartTime()
            )
        self.text.text += event.text
        self.output_chars += len(event.text)
        self.writer.touch(self.text)
        self.bus.publish(events.TextDelta(self.sid, self.text.id, event.text))

    def on_reasoning(self, event: ReasoningDelta) -> None:
        if self.reasoning is None:
            self.reasoning = ReasoningPart(
                id=ids.ascending("prt"), session_id=self.sid, message_id=self.message_id
            )
        self.reasoning.text += event.text
        self.output_chars += len(event.text)
        self.writer.touch(self.reasoning)
        self.bus.publish(events.TextDelta(self.sid, self.reasoning.id, event.text, reasoning=True))

    def on_sealed_reasoning(self, event: ReasoningSignature | RedactedReasoning) -> None:
        # Sealed (or encrypted) reasoning goes back verbatim next request: kept on the part as
        # OpenCode keeps it (metadata.anthropic), and the block ends here.
        if isinstance(event, RedactedReasoning) or self.reasoning is None:
            self.end_text()
            self.reasoning = ReasoningPart(
                id=ids.ascending("prt"), session_id=self.sid, message_id=self.message_id
            )
        self.reasoning.metadata = {**self.reasoning.metadata, "anthropic": _sealed(event)}
        self.writer.touch(self.reasoning)
        self.end_text()

    def on_tool_call(self, event: ToolCallDelta) -> None:
        if self.ignore_calls and not self.tools_offered:
            return
        call = self.calls.add(event)
        if event.name and not call.name:
            call.name = call.part.tool = event.name
        call.raw += event.arguments or ""
        self.output_chars += len(event.arguments or "")
        call.part.state = call.part.state.model_copy(update={"raw": call.raw})
        self.writer.touch(call.part)
        self.bus.publish(events.ToolUpdated(self.sid, call.part))

    def _new_call(self, event: ToolCallDelta) -> _Call:
        if not self.tools_offered:
            # The summarizer is offered no tools; a call means the summary failed (OpenCode).
            # Raised before the part is tracked, so no tool part is written on the summary.
            raise LLMError(
                kind="bad_request",
                message=f"Tool call not allowed while generating summary: {event.name}",
            )
        part = ToolPart(
            id=ids.ascending("prt"),
            session_id=self.sid,
            message_id=self.message_id,
            call_id=event.id or f"call_{ids.ascending('prt')[4:]}",
            tool=event.name or "",
        )
        return _Call(part=part, name=event.name or "")

    def on_finish(self, event: Finish) -> None:
        self.finish = event.reason

    def on_usage(self, event: Usage) -> None:
        self.usage = event

    def end_text(self) -> None:
        """Close the streaming text and reasoning parts (their end time, a last write, TextEnded)."""
        for part, is_reasoning in ((self.reasoning, True), (self.text, False)):
            if part is not None:
                part.time = (part.time or PartTime()).model_copy(update={"end": now_ms()})
                self.writer.touch(part)
                self.bus.publish(events.TextEnded(self.sid, part.id, part.text, reasoning=is_reasoning))
                self.bus.publish(events.PartUpdated(self.sid, part.model_copy()))
        self.text = self.reasoning = None

    def tool_parts(self) -> list[ToolPart]:
        return [c.part for c in self.calls.calls]


_ON: dict[type, Callable[[_Step, Any], None]] = {
    TextDelta: _Step.on_text,
    ReasoningDelta: _Step.on_reasoning,
    ReasoningSignature: _Step.on_sealed_reasoning,
    RedactedReasoning: _Step.on_sealed_reasoning,
    ToolCallDelta: _Step.on_tool_call,
    Finish: _Step.on_finish,
    Usage: _Step.on_usage,
}


class Processor:
    def __init__(self, store: Store, bus: Bus, abort: threading.Event) -> None:
        self.store = store
        self.bus = bus
        self.abort = abort

    def process(self, msg: AssistantMessage, request: ChatRequest, policy: StepPolicy) -> Outcome:
        attempt = 0
        while True:
            try:
                return self._attempt(msg, request, policy)
            except _Retry as retry:
                attempt += 1
                delay = retry_delay(retry.error, attempt)
                if delay is None or attempt > max_retries():
                    return self._fail(msg, retry.error)
                self.bus.publish(events.Retrying(msg.session_id, attempt, delay, retry.error.message))
                if self.abort.wait(delay):
                    return self._aborted(msg, [])

    # --- one attempt ----------------------------------------------------------------------

    def _attempt(self, msg: AssistantMessage, request: ChatRequest, policy: StepPolicy) -> Outcome:
        sid = msg.session_id
        step = _Step(
            sid,
            msg.id,
            self.bus,
            _Writer(self.store, policy.stored_text),
            policy.run_tools is not None,
            policy.ignore_calls,
        )
        self.store.put_part(StepStartPart(id=ids.ascending("prt"), session_id=sid, message_id=msg.id))
        self.bus.publish(events.StepStarted(sid, msg))
        try:
            for event in stream_chat(request, abort=self.abort, coalesce=True):
                step.on(event)
        except LLMError as err:
            return self._stream_failed(msg, step, policy, err)
        step.end_text()
        step.writer.flush()
        if self.abort.is_set():
            return self._aborted(msg, step.tool_parts())
        return self._finish_step(msg, step, policy, request)

    def _stream_failed(
        self, msg: AssistantMessage, step: _Step, policy: StepPolicy, err: LLMError
    ) -> Outcome:
        step.end_text()
        step.writer.flush()
        if err.kind == "aborted" or self.abort.is_set():
            return self._aborted(msg, step.tool_parts())
        if err.kind == "context_overflow":
            self._drop_calls(step.tool_parts(), step.writer)
            if err.window and policy.learn_window is not None:
                policy.learn_window(err.window, LEARNED)
            if policy.auto_compact and policy.run_tools is not None:
                # The loop compacts and replays (OpenCode's "compact"). The step keeps the
                # provider's error, so the history shows why it has no answer.
                self.bus.publish(events.ErrorOccurred(msg.session_id, err.message, err.kind))
                msg.error = _message_error(err)
                msg.completed = now_ms()
                self.store.put_message(msg)
                return "compact"
            return self._fail(msg, err)
        if not step.received and err.retryable:
            raise _Retry(err) from None
        self._drop_calls(step.tool_parts(), step.writer)
        return self._fail(msg, err)

    def _finish_step(
        self, msg: AssistantMessage, step: _Step, policy: StepPolicy, request: ChatRequest
    ) -> Outcome:
        """The stream ended: run the tool calls, write the step's finish and usage, say what next."""
        sid, usage = msg.session_id, step.usage
        tool_parts = step.tool_parts()
        for part in tool_parts:
            part.state = self._parse_input(part)
            self.store.put_part(part)
        stop = bool(tool_parts and policy.run_tools is not None and policy.run_tools(msg, tool_parts))

        reason = FINISH.get(step.finish or "", step.finish or "unknown")
        if tool_parts and reason != "tool-calls":
            reason = "tool-calls"  # some servers say "stop" after tool calls; the loop must go on
        tokens = normalize(usage) if usage is not None else estimate(request, step.output_chars)
        if usage is not None and policy.watch_truncation and policy.learn_window is not None:
            sent = estimate(request, 0).input
            prompt = tokens.input + tokens.cache.read + tokens.cache.write
            if truncated(prompt, sent):  # Ollama's OpenAI endpoint cuts past num_ctx, silently
                policy.learn_window(prompt, truncation_note(prompt, sent))
        cost = policy.cost(usage) if usage is not None else 0.0
        self.store.put_part(
            StepFinishPart(
                id=ids.ascending("prt"),
                session_id=sid,
                message_id=msg.id,
                reason=reason,
                tokens=tokens,
                cost=cost,
            )
        )
        msg.finish = reason
        msg.tokens = tokens
        msg.cost += cost
        msg.completed = now_ms()
        if self.abort.is_set():
            msg.error = MessageError(name="MessageAbortedError", message="aborted")
        self.store.put_message(msg)
        if tokens.count():
            self.store.update_session(sid, context_tokens=tokens.count(), context_estimated=tokens.estimated)
        if not msg.summary:  # the print the context figure is anchored on (request.figure)
            figure.record(self.store, sid, msg.model or "", request.messages, request.tools, tokens)
        self.bus.publish(events.StepFinished(sid, msg))
        if usage is not None:  # message.updated carries real usage only (OpenCode also sends zeros)
            self.bus.publish(events.MessageUpdated(sid, msg.model_copy()))
        if self.abort.is_set() or stop:
            return "stop"
        if not msg.summary and policy.is_overflow(tokens):
            return "compact"
        return "continue"

    # --- endings -----------------------------------------------------------------------------

    @staticmethod
    def _parse_input(part: ToolPart) -> ToolState:
        raw = part.state.raw.strip()
        try:
            parsed = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict):
            return part.state.model_copy(update={"input": parsed})
        return part.state  # bad JSON: the tool runner reports it to the model

    def _drop_calls(self, parts: list[ToolPart], writer: _Writer) -> None:
        for part in parts:
            part.state = interrupted_state(part.state, aborted=False)
            writer.touch(part)
        writer.flush()

    def _aborted(self, msg: AssistantMessage, parts: list[ToolPart]) -> Outcome:
        for part in parts:
            if part.state.status in ("pending", "running"):
                part.state = interrupted_state(part.state, aborted=True)
                self.store.put_part(part)
        msg.error = MessageError(name="MessageAbortedError", message="The turn was cancelled by the user")
        msg.completed = now_ms()
        self.store.put_message(msg)
        return "stop"

    def _fail(self, msg: AssistantMessage, err: LLMError) -> Outcome:
        msg.error = _message_error(err)
        msg.completed = now_ms()
        if msg.summary:
            msg.finish = "error"
        self.store.put_message(msg)
        self.bus.publish(events.ErrorOccurred(msg.session_id, err.message, err.kind))
        return "stop"


def _message_error(err: LLMError) -> MessageError:
    name = {"context_overflow": "ContextOverflowError", "auth": "ProviderAuthError"}.get(err.kind, "APIError")
    return MessageError(
        name=name,
        message=err.message,
        status=err.status,
        retryable=err.retryable,
        response_body=err.response_body,
    )


def interrupted_state(state: ToolState, *, aborted: bool, end: int | None = None) -> ToolState:
    """A call that never ran to the end: an error result, so no tool call is left dangling.
    ``aborted``: cancelled or killed while it ran (``interrupted``, as OpenCode marks it)."""
    update: dict[str, Any] = {
        "status": "error",
        "error": INTERRUPTED_TEXT,
        "time": state.time.model_copy(update={"end": end or now_ms()}),
    }
    if aborted:
        update["interrupted"] = True
    return state.model_copy(update=update)


class _Retry(Exception):
    def __init__(self, error: LLMError) -> None:
        super().__init__(error.message)
        self.error = error
