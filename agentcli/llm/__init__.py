"""The one door to models: streaming into plain events (the lean httpx path for OpenAI-compatible
providers, litellm for the rest), error classification, model limits and prices (litellm's bundled
JSON map, read without importing it) and token estimates. Imports nothing else of agentcli; never
imports litellm at import time (see ``lazy``)."""

from agentcli.llm.assembly import Assembled, assemble
from agentcli.llm.errors import LLMError, classify, is_overflow_message, retry_delay
from agentcli.llm.lazy import get_litellm, is_loaded
from agentcli.llm.limits import ModelLimits, cost, list_models, lookup_limits
from agentcli.llm.stream import (
    ChatRequest,
    Event,
    Finish,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    Usage,
    stream_chat,
)
from agentcli.llm.tokens import estimate, estimate_json, estimate_request

__all__ = [
    "Assembled",
    "ChatRequest",
    "Event",
    "Finish",
    "LLMError",
    "ModelLimits",
    "ReasoningDelta",
    "TextDelta",
    "ToolCallDelta",
    "Usage",
    "assemble",
    "classify",
    "cost",
    "estimate",
    "estimate_json",
    "estimate_request",
    "get_litellm",
    "is_loaded",
    "is_overflow_message",
    "list_models",
    "lookup_limits",
    "retry_delay",
    "stream_chat",
]
