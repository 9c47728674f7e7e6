"""Redaction costs time linear in its input, for inputs built to be hostile (tests/hostile_text.py):
a tool's output is anyone's text (a file in an untrusted repository, a web page), and a regex that
retries a scan to the line's end at each of many places would stall a turn for as long as it pleased
(100 KB of ``$1$`` took 40 s). Each construction is timed at 25 KB and 100 KB, each of the thousands of
keyword inputs at 8 KB and 32 KB (a quarter of the time: the same ratio tells a quadratic cost): four
times the text may cost at most ``RATIO`` times as much (a quadratic cost is 16 times), and 100 KB at
most ``LIMIT`` seconds (32 KB its share).
CPU time of this process, so other processes on the machine count little; a unit over either bound is
measured twice more (the best run counts) before it fails, since one run can still be slowed."""

from __future__ import annotations

import pytest

from tests.hostile_text import (
    CONSTRUCTIONS,
    KEYWORD_SIZES,
    keyword_units,
    own_keywords,
    separated_units,
    superlinear,
    vendor_keywords,
)

# Each list in parts, for the workers of ``-n`` to share.
PARTS = 4


def test_each_construction_the_patterns_take_apart_costs_linear_time() -> None:
    """Crypt prefixes (``$1$`` …), ``key=`` and PEM headers, base64 and token runs, URL user info."""
    assert superlinear(list(CONSTRUCTIONS)) == []


@pytest.mark.parametrize("part", range(PARTS))
def test_each_own_rules_keyword_repeated_costs_linear_time(part: int) -> None:
    """agentcli's own patterns, key and public-material scans: each keyword as one long word, as words
    and as keys."""
    assert superlinear(keyword_units(own_keywords())[part::PARTS], KEYWORD_SIZES) == []


@pytest.mark.parametrize("part", range(PARTS))
def test_each_own_rules_keyword_after_each_separator_costs_linear_time(part: int) -> None:
    assert superlinear(separated_units(own_keywords())[part::PARTS], KEYWORD_SIZES) == []


@pytest.mark.parametrize("part", range(PARTS))
def test_each_vendor_rules_keyword_repeated_costs_linear_time(part: int) -> None:
    """gitleaks' and kingfisher's rules, which run near their keywords: each keyword as one long word,
    as words and as keys."""
    assert superlinear(keyword_units(vendor_keywords())[part::PARTS], KEYWORD_SIZES) == []
