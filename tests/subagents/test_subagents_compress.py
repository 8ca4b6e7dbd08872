"""compress_by_importance: HIGH first, original order, whole items, budgets in characters."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from precis.errors import ConfigError, InputError
from precis.subagents import LEVELS, Mark, compress_by_importance
from precis.subagents._checks import level_rank
from precis.subagents._text import ELLIPSIS


def _m(text: str, level: str) -> Mark:
    return Mark(text, level)  # type: ignore[arg-type]


def test_high_first_then_medium_then_low_in_original_order() -> None:
    items = [_m("L" * 10, "LOW"), _m("M" * 10, "MEDIUM"), _m("H" * 10, "HIGH"),
             _m("h" * 10, "HIGH")]
    out = compress_by_importance(items, 30)
    # both HIGH (20) and the MEDIUM (10) fit; the LOW does not
    assert out.kept == (items[1], items[2], items[3])  # original order, not by level
    assert out.dropped == (items[0],)
    assert out.used == 30 and not out.truncated


def test_a_skipped_item_does_not_stop_smaller_ones() -> None:
    items = [_m("a" * 8, "HIGH"), _m("b" * 8, "HIGH"), _m("c" * 3, "HIGH")]
    out = compress_by_importance(items, 12)
    assert [m.text for m in out.kept] == ["a" * 8, "c" * 3]
    assert out.dropped == (items[1],)


def test_budget_in_characters_for_chinese() -> None:
    items = [_m("发现 SQL 注入风险", "HIGH"), _m("登录接口没有限流", "MEDIUM"),
             _m("辅助文件 helper.py", "LOW")]
    # 11 + 8 = 19 characters; the LOW item (15) does not fit in 25
    out = compress_by_importance(items, 25)
    assert [m.text for m in out.kept] == ["发现 SQL 注入风险", "登录接口没有限流"]
    assert sum(len(m.text) for m in out.kept) == out.used == 19


def test_oversized_high_item_is_cut_at_a_word_boundary_and_reported() -> None:
    long = "The login handler builds SQL by string concatenation " * 5
    items = [_m("keep me", "HIGH"), _m(long, "HIGH"), _m("a medium note", "MEDIUM")]
    out = compress_by_importance(items, 60)
    assert out.truncated == (items[1],)
    cut = out.kept[1].text
    assert cut.endswith(ELLIPSIS) and long.startswith(cut[:-1])
    assert not long[len(cut) - 1].isalnum()  # the next original character ends a word
    assert out.used <= 60 and sum(len(m.text) for m in out.kept) == out.used
    assert "cut 1 HIGH item" in out.note


def test_medium_and_low_items_are_never_cut() -> None:
    items = [_m("word " * 30, "MEDIUM"), _m("word " * 30, "LOW")]
    out = compress_by_importance(items, 50)
    assert out.kept == () and out.dropped == tuple(items)
    assert out.note == "dropped 2 items (1 MEDIUM, 1 LOW)"


def test_high_item_that_fits_alone_is_dropped_not_cut() -> None:
    items = [_m("x" * 30, "HIGH"), _m("y" * 30, "HIGH")]
    out = compress_by_importance(items, 40)
    assert [m.text for m in out.kept] == ["x" * 30] and not out.truncated


def test_zero_budget_drops_everything() -> None:
    items = [_m("a", "HIGH")]
    out = compress_by_importance(items, 0)
    assert out.kept == () and out.dropped == tuple(items)


def test_custom_cost_counts_line_overhead() -> None:
    items = [_m("aaaa", "HIGH"), _m("bbbb", "HIGH")]
    out = compress_by_importance(items, 10, cost=lambda m: len(m.text) + 3)
    assert len(out.kept) == 1 and out.used == 7


@pytest.mark.parametrize("bad", [-1, 1.5, True, "500", None])
def test_bad_budget_is_a_config_error(bad: object) -> None:
    with pytest.raises(ConfigError) as err:
        compress_by_importance([], bad)  # type: ignore[arg-type]
    assert err.value.where == "max_chars"


def test_non_marks_are_rejected_by_position() -> None:
    with pytest.raises(InputError) as err:
        compress_by_importance([Mark("a"), "b"], 10)  # type: ignore[list-item]
    assert err.value.where == "items[1]"


_TEXT = st.text(alphabet="ab 数据库, .\n", min_size=0, max_size=60)
_MARK = st.builds(Mark, _TEXT, st.sampled_from(LEVELS))


@settings(max_examples=300, deadline=None)
@given(st.lists(_MARK, max_size=12), st.integers(min_value=0, max_value=200))
def test_greedy_invariants(items: list[Mark], budget: int) -> None:
    out = compress_by_importance(items, budget)
    assert out.used == sum(len(m.text) for m in out.kept) <= budget
    assert len(out.kept) + len(out.dropped) == len(items)
    truncated_ids = {id(m) for m in out.truncated}
    position = {id(m): i for i, m in enumerate(items)}
    # whole kept items and dropped items are the caller's objects, in the original order
    whole = [position[id(m)] for m in out.kept if id(m) in position]
    assert whole == sorted(whole) and len(whole) + len(out.truncated) == len(out.kept)
    dropped = [position[id(m)] for m in out.dropped]
    assert dropped == sorted(dropped)
    for m in out.truncated:
        assert m.level == "HIGH" and len(m.text) > budget
    for d in out.dropped:
        if id(d) in truncated_ids:
            continue
        # a dropped item did not fit beside the items of its level or above that were kept
        above = sum(len(k.text) for k in out.kept if level_rank(k.level) <= level_rank(d.level))
        assert len(d.text) + above > budget
