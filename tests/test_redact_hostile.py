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

from tests.hostile_families import (
    LONG_FLOOR,
    LONG_SIZES,
    candidate_units,
    code_regexes,
    cut_short,
    long_line_units,
    mixed_units,
    nested_units,
    short_line_units,
    sprinkled_units,
    unicode_units,
    vendor_regexes,
    vendor_separated_units,
)
from tests.hostile_text import (
    CONSTRUCTIONS,
    KEYWORD_SIZES,
    keyword_units,
    over_limit,
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


# The untested space of the tests above (tests/hostile_families.py): each family at 8 KB and 32 KB.
@pytest.mark.parametrize("part", range(PARTS))
def test_each_vendor_rules_keyword_beside_each_separator_costs_linear_time(part: int) -> None:
    """A sample of gitleaks' and kingfisher's keywords before and after ``= : " ' ( [ , / \\ % $ {``,
    a space and a tab."""
    assert superlinear(vendor_separated_units()[part::PARTS], KEYWORD_SIZES) == []


@pytest.mark.parametrize("part", range(PARTS))
def test_each_regex_of_the_redactor_cut_short_costs_linear_time(part: int) -> None:
    """Every regex agentcli/redact/ holds (its modules' and its own rules'), a text it matches cut
    short, repeated and followed by a run that never ends."""
    assert superlinear(cut_short(code_regexes(), "own")[part::PARTS], KEYWORD_SIZES) == []


@pytest.mark.parametrize("part", range(PARTS))
def test_each_vendor_regex_cut_short_costs_linear_time(part: int) -> None:
    """A sample of gitleaks' and kingfisher's regexes, a text each matches cut short."""
    assert superlinear(cut_short(vendor_regexes(), "vendor")[part::PARTS], KEYWORD_SIZES) == []


def test_lines_mixing_keywords_and_constructions_cost_linear_time() -> None:
    """Keywords of every source in turn with separators and values between; base64, hex and one-case
    runs with a keyword every k characters; brackets and quotes nested deep."""
    units = [*mixed_units(), *sprinkled_units(), *nested_units()]
    assert superlinear(units, KEYWORD_SIZES) == []


def test_every_vendor_regex_cut_short_costs_its_share_at_8_kb() -> None:
    """Each of gitleaks' and kingfisher's ~900 regexes (not a sample) cut short, 8 KB of it: a regex
    whose one try backtracks exponentially costs seconds at any size (kingfisher's gradle rule, whose
    comments ``(?:\\s*//.*)*`` split a line of ``//`` 2^n ways, took 1.7 s for 300 characters)."""
    units = cut_short(vendor_regexes(sampled=False), "vendor-all")
    assert over_limit(units, KEYWORD_SIZES[0]) == []


def test_unicode_whitespace_digits_and_letters_after_each_construction_cost_linear_time() -> None:
    """What ``\\s``, ``\\w`` and ``\\d`` take outside ASCII (a no-break space, a line separator, an
    Arabic-Indic digit, ``İ``) after each construction and beside keywords."""
    assert superlinear(unicode_units(), KEYWORD_SIZES) == []


def test_a_key_followed_by_many_candidate_values_costs_linear_time() -> None:
    """A secret-named key, then many values; its quote left open, then a run."""
    assert superlinear(candidate_units(), KEYWORD_SIZES) == []


def test_very_long_lines_cost_linear_time() -> None:
    """2 MB against 512 KB of one line: a per-line scan from each place back to the line's start."""
    assert superlinear(long_line_units(), LONG_SIZES, LONG_FLOOR) == []


def test_many_short_lines_cost_linear_time() -> None:
    """The per-line scans (a quote's line, a value alone on its line) on many short lines, each a unit
    of the other families."""
    pool = [*CONSTRUCTIONS, *separated_units(own_keywords()), *vendor_separated_units(), *nested_units()]
    assert superlinear(short_line_units(pool), KEYWORD_SIZES) == []
