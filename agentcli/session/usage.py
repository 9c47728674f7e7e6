"""Provider usage → the Tokens we store (OpenCode's Session.getUsage rules).

litellm reports OpenAI-style usage: ``prompt_tokens`` already includes cached (and Anthropic
cache-creation) tokens and ``completion_tokens`` includes reasoning, so both are subtracted once
here — counted neither twice nor never. ``total`` is prompt + completion of the step: the figure the
overflow check compares (a disagreeing reported total is not trusted, as OpenCode 1.18 does).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agentcli.llm.events import ChatRequest
from agentcli.llm.tokens import estimate_request, tokens_for_length
from agentcli.store.records import AssistantMessage, CacheTokens, Tokens, WithParts


def _n(value: Any) -> int:
    try:
        number = int(value or 0)
    except (TypeError, ValueError):
        return 0
    return max(0, number)


def normalize(usage: Any) -> Tokens:
    """``usage`` is the LLM door's Usage event (prompt_tokens, completion_tokens, cache_read,
    cache_write, reasoning_tokens)."""
    prompt = _n(getattr(usage, "prompt_tokens", 0))
    completion = _n(getattr(usage, "completion_tokens", 0))
    cache_read = _n(getattr(usage, "cache_read", 0))
    cache_write = _n(getattr(usage, "cache_write", 0))
    reasoning = _n(getattr(usage, "reasoning_tokens", 0))
    return Tokens(
        total=prompt + completion,
        input=max(0, prompt - cache_read - cache_write),
        output=max(0, completion - reasoning),
        reasoning=reasoning,
        cache=CacheTokens(read=cache_read, write=cache_write),
    )


def step_cost(model: str, usage: Any) -> float:
    """Dollars for one step's ``usage`` on ``model``, from litellm's price map (loaded on first use)."""
    from agentcli.llm.limits import cost

    return cost(model, usage.prompt_tokens, usage.completion_tokens, usage.cache_read, usage.cache_write)


def last_request(newest_first: Iterable[WithParts]) -> Tokens | None:
    """The usage of the session's last request (an assistant message is one step), from its
    messages newest first (``Store.stream``); None before any."""
    for msg in newest_first:
        if isinstance(msg.info, AssistantMessage) and msg.info.tokens.count():
            return msg.info.tokens
    return None


def cache_saved(messages: Iterable[WithParts]) -> float:
    """Dollars prompt caching saved over ``messages`` (each step's reads and writes, priced for the
    model that answered it; see ``agentcli.llm.limits.cache_saved``)."""
    from agentcli.llm.limits import cache_saved as saved

    total = 0.0
    for msg in messages:
        info = msg.info
        if isinstance(info, AssistantMessage) and info.model:
            cached = info.tokens.cache
            total += saved(info.model, cached.read, cached.write) if cached.read or cached.write else 0.0
    return total


def estimate(request: ChatRequest, output_chars: int) -> Tokens:
    """A step whose stream carried no usage (some local servers and gateways send none): the request's
    size and the answer's, estimated, and marked so. The gauge says "estimated"; the overflow check
    still has a figure to compare, so automatic compaction keeps working on such a server."""
    prompt = estimate_request(request.messages, request.tools)
    output = tokens_for_length(output_chars)
    return Tokens(total=prompt + output, input=prompt, output=output, estimated=True)
