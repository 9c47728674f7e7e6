"""How long a stream may stay silent, and how much it may send, before the step is ended.

Two limits the request's own timeout (the provider's ``options.timeout``, 600 s by default, per read)
does not give:

- **Silence.** Before the first byte of the answer, ``first_byte_timeout`` (default 300 s): OpenAI's
  reasoning models on chat completions send nothing until their hidden reasoning is done, which at high
  effort takes minutes, so less would cut real answers; it is half the per-read timeout, and as a
  timeout is retried once, a silent provider holds a turn about 10 minutes instead of about 50 (four
  retries of 600 s). Between chunks, ``idle_timeout`` (default 120 s): a provider that has started
  streams tokens or keep-alive comments every few seconds; two minutes of nothing means it stalled.
  Keep-alive comments (OpenRouter's ``: OPENROUTER PROCESSING``) count as signs of life.
- **Length.** An answer is cut once its text, reasoning and tool arguments hold more than the request's
  ``max_tokens`` by half again (estimated at 4 characters a token; ``DEFAULT_OUTPUT_CAP`` when the
  request names none): a provider that ignores the limit and repeats itself forever would otherwise
  grow memory and the database without end.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from agentcli.llm.errors import LLMError
from agentcli.llm.events import ChatRequest, Event, ReasoningDelta, TextDelta, ToolCallDelta
from agentcli.llm.pump import Pump

FIRST_BYTE_TIMEOUT = 300.0
IDLE_TIMEOUT = 120.0
DEFAULT_OUTPUT_CAP = 128_000  # tokens, when the request names no max_tokens
OUTPUT_MARGIN = 1.5
CHARS_PER_TOKEN = 4
FIRST_BYTE_ENV = "AGENTCLI_FIRST_BYTE_TIMEOUT"
IDLE_ENV = "AGENTCLI_IDLE_TIMEOUT"


def _env_seconds(name: str) -> float | None:
    raw = os.environ.get(name, "").strip()
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if value > 0 else None


def where(req: ChatRequest) -> str:
    """The host a request goes to, for messages ("api.openai.com", "127.0.0.1:8080", "the anthropic API")."""
    if req.api_base:
        parts = urlsplit(req.api_base)
        if parts.hostname:
            return f"{parts.hostname}:{parts.port}" if parts.port else parts.hostname
    prefix = req.model.partition("/")[0] if "/" in req.model else ""
    return f"the {prefix} API" if prefix else "the provider"


@dataclass
class Watch:
    """Checked by the consumer between items: raises ``LLMError`` when a limit is passed."""

    pump: Pump
    first_byte: float
    idle: float
    max_chars: int
    host: str
    chars: int = 0

    @classmethod
    def of(cls, req: ChatRequest, pump: Pump) -> Watch:
        cap = req.max_tokens or DEFAULT_OUTPUT_CAP
        return cls(
            pump=pump,
            first_byte=req.first_byte_timeout or _env_seconds(FIRST_BYTE_ENV) or FIRST_BYTE_TIMEOUT,
            idle=req.idle_timeout or _env_seconds(IDLE_ENV) or IDLE_TIMEOUT,
            max_chars=int(cap * OUTPUT_MARGIN * CHARS_PER_TOKEN),
            host=where(req),
        )

    def silence(self) -> None:
        """Raise when the provider has been silent longer than it may be."""
        pump = self.pump
        quiet = time.monotonic() - pump.last_heard
        if not pump.heard_from and quiet > self.first_byte:
            raise LLMError(
                "provider_down",
                f"timed out: no answer from {self.host} in {self.first_byte:g} s",
                retryable=True,
                retries=1,
            )
        if pump.heard_from and quiet > self.idle:
            raise LLMError(
                "provider_down",
                f"stream timed out: no data from {self.host} for {self.idle:g} s",
                retryable=True,
                retries=1,
            )

    def count(self, event: Event) -> None:
        """Add an event's size; raise once the answer is far past the output limit."""
        kind = type(event)  # exact types: this runs for every chunk
        if kind is TextDelta or kind is ReasoningDelta:
            self.chars += len(event.text)  # type: ignore[union-attr]  # narrowed by the exact type test
        elif kind is ToolCallDelta:
            self.chars += len(event.arguments)  # type: ignore[union-attr]  # narrowed by the exact type test
        else:
            return
        if self.chars > self.max_chars:
            raise LLMError(
                "unknown",
                f"stream cut: the model kept writing past its output limit "
                f"(about {self.chars // CHARS_PER_TOKEN} tokens received)",
                retryable=False,
            )
