"""Word-safe truncation and natural ordering (helpers every budget relies on)."""

from __future__ import annotations

import pytest

from precis.subagents._text import natural_key, one_line, truncate


def test_text_that_fits_is_unchanged() -> None:
    assert truncate("short text", 10) == "short text"


def test_cut_falls_between_words_and_counts_the_ellipsis() -> None:
    # room for 10 characters + "…": "the quick " would end mid-"brown" at 11 -> back off
    out = truncate("the quick brown fox", 12)
    assert out == "the quick…"
    assert len(out) <= 12


def test_chinese_is_cut_between_characters() -> None:
    assert truncate("数据库连接池由运维统一管理", 6) == "数据库连接…"


def test_one_long_token_is_cut_inside_rather_than_lost() -> None:
    # backing off to the space would give back 25 of 29 characters: cut inside instead
    out = truncate("see " + "a" * 60, 30)
    assert out == "see " + "a" * 25 + "…"


def test_punctuation_inside_a_token_is_a_boundary() -> None:
    out = truncate("see https://example.com/" + "a" * 50, 30)
    assert out == "see https://example.com/…"


@pytest.mark.parametrize("limit", [0, 1])
def test_tiny_limits(limit: int) -> None:
    assert len(truncate("hello world", limit)) == limit


def test_one_line_collapses_white_space() -> None:
    assert one_line("a\n\n  b\tc ") == "a b c"


def test_natural_order_compares_numbers_as_numbers() -> None:
    ids = ["task-10", "task-2", "task-1", "alpha"]
    assert sorted(ids, key=natural_key) == ["alpha", "task-1", "task-2", "task-10"]
