"""When the context is full: OpenCode's usable-budget and overflow formulas (reference §2.1, §2.2)."""

from __future__ import annotations

from typing import Protocol

from agentcli.store.records import Tokens

OUTPUT_TOKEN_MAX = 32_000
COMPACTION_BUFFER = 20_000


class LimitsLike(Protocol):
    """A model's token limits; 0 means unknown. ``agentcli.llm.limits.ModelLimits`` is one."""

    @property
    def context(self) -> int: ...

    @property
    def input(self) -> int: ...

    @property
    def output(self) -> int: ...


def max_output_tokens(limits: LimitsLike, output_token_max: int = OUTPUT_TOKEN_MAX) -> int:
    """The completion budget requested: the model's output limit, capped; the cap when unknown. A small
    window cannot give half of itself to the answer (a 24k window reserving 32k would leave nothing):
    there the reserve is a quarter of the window (when the model's output limit is not known)."""
    reserve = min(limits.output, output_token_max) or output_token_max
    if not limits.output and limits.context and reserve > limits.context // 2:
        return limits.context // 4
    return reserve


def usable(limits: LimitsLike, reserved: int | None = None, output_token_max: int = OUTPUT_TOKEN_MAX) -> int:
    """Prompt tokens a request may use before the session must compact; 0 when the context is unknown.

    ``reserved`` (config ``compaction.reserved``) counts only for models with an input limit, as in
    OpenCode (issues #13980, #38835)."""
    if not limits.context:
        return 0
    max_output = max_output_tokens(limits, output_token_max)
    if limits.input:
        headroom = reserved if reserved is not None else min(COMPACTION_BUFFER, max_output)
        return max(0, limits.input - headroom)
    return max(0, limits.context - max_output)


def is_overflow(
    tokens: Tokens,
    limits: LimitsLike,
    *,
    auto: bool = True,
    reserved: int | None = None,
    output_token_max: int = OUTPUT_TOKEN_MAX,
) -> bool:
    """Did a step's usage reach the usable budget? Never when auto compaction is off or the context
    limit is unknown."""
    if not auto or not limits.context:
        return False
    return tokens.count() >= usable(limits, reserved, output_token_max)


def preflight(request_tokens: int, limits: LimitsLike, *, auto: bool = True) -> bool:
    """Is a request of ``request_tokens`` (estimated) certain to be rejected as too long? Then the
    session compacts before sending it instead of spending a failed call. Never when auto compaction
    is off or no limit is known."""
    hard = limits.input or limits.context
    if not auto or not hard:
        return False
    return request_tokens >= hard
