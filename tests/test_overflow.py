"""The overflow check: O1–O11 and the extra cases of reference §10.1."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from agentcli.session.compaction.overflow import OUTPUT_TOKEN_MAX, is_overflow, max_output_tokens, usable
from agentcli.store.records import CacheTokens, Tokens


@dataclass(frozen=True)
class Limits:
    context: int
    output: int
    input: int = 0


def tokens(input: int, output: int, cache_read: int = 0, *, total: int = 0, cache_write: int = 0) -> Tokens:
    return Tokens(
        input=input, output=output, total=total, cache=CacheTokens(read=cache_read, write=cache_write)
    )


@pytest.mark.parametrize(
    ("case", "limits", "used", "expected"),
    [
        ("O1", Limits(100_000, 32_000), tokens(75_000, 5_000), True),
        ("O2", Limits(200_000, 32_000), tokens(100_000, 10_000), False),
        ("O3 cache.read counts", Limits(100_000, 32_000), tokens(60_000, 10_000, 10_000), True),
        ("O4", Limits(400_000, 128_000, input=272_000), tokens(271_000, 1_000, 2_000), True),
        ("O5", Limits(400_000, 128_000, input=272_000), tokens(200_000, 20_000, 10_000), False),
        ("O6", Limits(200_000, 10_000, input=120_000), tokens(50_000, 9_999), False),
        ("O7 headroom", Limits(200_000, 32_000, input=200_000), tokens(180_000, 15_000, 3_000), True),
        ("O8", Limits(200_000, 32_000), tokens(180_000, 15_000, 3_000), True),
        ("O9 A", Limits(200_000, 32_000, input=200_000), tokens(166_000, 10_000, 5_000), True),
        ("O9 B", Limits(200_000, 32_000), tokens(166_000, 10_000, 5_000), True),
        ("O10 unknown context", Limits(0, 32_000), tokens(100_000, 10_000), False),
    ],
)
def test_reference_cases(case: str, limits: Limits, used: Tokens, expected: bool) -> None:
    assert is_overflow(used, limits) is expected, case


def test_o11_auto_off_never_overflows() -> None:
    assert is_overflow(tokens(75_000, 5_000), Limits(100_000, 32_000), auto=False) is False


def test_usable_figures_behind_the_cases() -> None:
    assert usable(Limits(100_000, 32_000)) == 68_000
    assert usable(Limits(400_000, 128_000, input=272_000)) == 252_000  # 272k − min(20k, 32k)
    assert usable(Limits(200_000, 10_000, input=120_000)) == 110_000  # 120k − min(20k, 10k)
    assert usable(Limits(0, 32_000)) == 0


def test_reserved_counts_when_the_model_has_an_input_limit() -> None:
    limits = Limits(200_000, 32_000, input=150_000)
    assert usable(limits, reserved=50_000) == 100_000
    assert is_overflow(tokens(100_000, 0), limits, reserved=50_000)
    assert not is_overflow(tokens(100_000, 0), limits)


def test_reserved_is_ignored_without_an_input_limit() -> None:
    limits = Limits(200_000, 32_000)
    assert usable(limits, reserved=100_000) == 168_000
    assert not is_overflow(tokens(150_000, 0), limits, reserved=100_000)


def test_total_wins_over_the_sum() -> None:
    limits = Limits(100_000, 32_000)
    assert not is_overflow(tokens(75_000, 5_000, total=10_000), limits)
    assert is_overflow(tokens(1_000, 0, total=70_000), limits)


def test_cache_write_counts() -> None:
    assert is_overflow(tokens(60_000, 0, cache_write=8_000), Limits(100_000, 32_000))


def test_boundary_is_inclusive() -> None:
    limits = Limits(100_000, 32_000)
    assert is_overflow(tokens(68_000, 0), limits)
    assert not is_overflow(tokens(67_999, 0), limits)


def test_usable_never_negative() -> None:
    assert usable(Limits(10_000, 0, input=5_000), reserved=8_000) == 0
    assert usable(Limits(20_000, 64_000)) == 0


def test_max_output_tokens() -> None:
    assert max_output_tokens(Limits(100_000, 0)) == OUTPUT_TOKEN_MAX  # unknown output limit
    assert max_output_tokens(Limits(100_000, 8_000)) == 8_000
    assert max_output_tokens(Limits(100_000, 128_000)) == 32_000
    assert max_output_tokens(Limits(100_000, 128_000), output_token_max=64_000) == 64_000


def test_output_token_max_moves_the_budget() -> None:
    limits = Limits(200_000, 128_000)
    assert usable(limits, output_token_max=64_000) == 136_000
    assert is_overflow(tokens(140_000, 0), limits, output_token_max=64_000)
    assert not is_overflow(tokens(140_000, 0), limits)
