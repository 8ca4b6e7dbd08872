"""Marks: validation and precis' rule-based level and category."""

from __future__ import annotations

import dataclasses

import pytest

from precis.errors import InputError
from precis.subagents import Mark, mark


def test_explicit_level_and_category_are_kept() -> None:
    m = mark("src/utils/helper.py", "low", "file", "eye")
    assert (m.text, m.level, m.category, m.source) == ("src/utils/helper.py", "LOW", "file", "eye")


@pytest.mark.parametrize(
    ("text", "category", "level"),
    [
        ("We decided to use JWT for authentication.", "decision", "HIGH"),
        ("决定使用 JWT 认证", "decision", "HIGH"),
        ("必须支持 HTTPS", "constraint", "HIGH"),
        ("ok", "chitchat", "LOW"),
    ],
)
def test_level_and_category_inferred_by_precis(text: str, category: str, level: str) -> None:
    m = mark(text, source="nose")
    assert (m.category, m.level) == (category, level)


def test_inferred_level_does_not_depend_on_other_marks() -> None:
    # a lone text has no position: the same text marks the same before and after others
    first = mark("The test suite passes: 42 passed in 3.1s")
    mark("We decided to use JWT for authentication.")
    assert mark("The test suite passes: 42 passed in 3.1s") == first


def test_given_category_with_inferred_level() -> None:
    m = mark("必须支持 HTTPS", category="security")
    assert (m.category, m.level) == ("security", "HIGH")


@pytest.mark.parametrize("bad", ["URGENT", "", 3, None])
def test_unknown_level_is_an_input_error(bad: object) -> None:
    with pytest.raises(InputError) as err:
        Mark("x", bad)  # type: ignore[arg-type]
    assert "unknown level" in str(err.value) and err.value.where == "mark.level"


def test_unknown_level_in_mark_names_the_argument() -> None:
    with pytest.raises(InputError) as err:
        mark("x", "critical")
    assert err.value.where == "level" and "'critical'" in str(err.value)


def test_text_must_be_text() -> None:
    with pytest.raises(InputError):
        mark(42)  # type: ignore[arg-type]


def test_unknown_role() -> None:
    with pytest.raises(InputError) as err:
        mark("x", role="robot")  # type: ignore[arg-type]
    assert err.value.where == "role"


def test_marks_are_immutable() -> None:
    m = Mark("x", "HIGH")
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.level = "LOW"  # type: ignore[misc]
