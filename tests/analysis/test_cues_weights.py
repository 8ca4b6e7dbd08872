"""The weight table and the other data of a cue table: validation, defaults, merging,
Chinese imperatives, the phrase index and the regex pre-check."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from precis.analysis.cues import CueTable
from precis.analysis.model import FRAGMENT_TYPES
from precis.errors import ConfigError

CUES_JSON = Path(__file__).resolve().parents[2] / "src" / "precis" / "analysis" / "cues.json"


def test_the_built_in_weights_are_data_with_a_row_for_every_speaker_and_cue_type() -> None:
    data = json.loads(CUES_JSON.read_text("utf-8"))
    weights = data["weights"]
    for role in ("user", "assistant", "system", "tool"):
        assert weights[f"role.{role}"], role
    for kind in FRAGMENT_TYPES:
        if kind != "code":  # code has no phrases, only structure
            assert weights[f"cue_sum.{kind}"][kind] > 0, kind
    for feature, row in weights.items():
        assert set(row) <= set(FRAGMENT_TYPES), feature
        assert all(math.isfinite(w) for w in row.values()), feature
    assert data["_weights_doc"]  # how they were made


def test_a_table_without_weights_uses_the_built_in_ones() -> None:
    plain = CueTable.from_dict({"types": {"goal": {"en": {"blorp": 2.0}}}})
    assert plain.weights == CueTable.default().weights
    assert "weights" not in plain.to_dict()


def test_a_table_with_weights_uses_only_its_own_and_round_trips() -> None:
    table = CueTable.from_dict({"weights": {"question.user": {"goal": 2.0, "fact": 0}}})
    assert dict(table.weights) == {"question.user": (("goal", 2.0),)}
    again = CueTable.from_dict(table.to_dict())
    assert again.to_dict() == table.to_dict()
    assert again.to_dict()["weights"] == {"question.user": {"goal": 2.0, "fact": 0.0}}


def test_extended_weights_replace_only_the_entries_they_name() -> None:
    base = CueTable.default()
    table = base.extended({"weights": {"question.user": {"goal": 9.0}, "my.feature": {"todo": 1}}})
    row = dict(table.weights["question.user"])
    assert row["goal"] == 9.0
    for kind, weight in base.weights["question.user"]:
        if kind != "goal":
            assert row[kind] == weight
    assert dict(table.weights["my.feature"]) == {"todo": 1.0}
    assert table.weights["role.user"] == base.weights["role.user"]
    assert base.weights["question.user"] != table.weights["question.user"]  # immutable


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ([1, 2], "expected a table feature"),
        ({"question.user": 2.0}, "expected a table type -> weight"),
        ({"question.user": {"wish": 1.0}}, "unknown fragment type 'wish'"),
        ({"question.user": {"goal": "high"}}, "must be a number"),
        ({"question.user": {"goal": math.inf}}, "finite"),
        ({"": {"goal": 1.0}}, "non-empty string"),
    ],
)
def test_bad_weights_are_config_errors_naming_the_entry(weights: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as err:
        CueTable.default().extended({"weights": weights})
    assert "weights" in (err.value.where or "")


def test_chinese_imperatives_are_prefixes_and_english_ones_words() -> None:
    table = CueTable.default()
    assert "使用" in table.imperative_prefixes
    assert "add" in table.imperative
    assert "add" not in table.imperative_prefixes
    extended = table.extended({"imperative": ["安排上"]})
    assert "安排上" in extended.imperative_prefixes
    assert "安排上" not in table.imperative_prefixes
    with pytest.raises(ConfigError, match="one plain word"):
        table.extended({"imperative": ["安排 上"]})


def test_chinese_phrases_made_only_of_common_characters_are_still_found() -> None:
    table = CueTable.from_dict({"types": {"background": {"zh": {"用的是": 1.5, "不超过": 2}}}})
    found = {cue.label for cue in table.scan("我们现在用的是 mysql 8.0")}
    assert found == {"用的是"}
    assert {cue.label for cue in table.scan("预算不超过五千")} == {"不超过"}


@pytest.mark.parametrize(
    ("pattern", "hit", "miss"),
    [
        (r"[45]\d\d error", "got a 503 error", "got a 200 error"),
        (r"[ab]x|yz", "only yz here", "nothing"),  # alternation: no pre-check
        (r"[45]?ok", "ok then", "nothing"),  # optional class: no pre-check
        (r"[ab]\(x|y", "just y", "nothing"),  # an escaped bracket does not hide the "|"
    ],
)
def test_regex_cues_with_a_leading_class_match_as_before(pattern: str, hit: str,
                                                          miss: str) -> None:
    table = CueTable.from_dict({"types": {"error": {"regex": {pattern: 2.0}}}})
    assert [c.target for c in table.scan(hit)] == ["error"]
    assert table.scan(miss) == []
