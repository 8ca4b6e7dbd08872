"""Lexical features of the type classifier: ``word.<unit>`` rows of the weight table."""

from __future__ import annotations

import pytest

from precis.analysis.classify import classify, features_in_context
from precis.analysis.cues import LEXICAL_HAN_CHARS, CueTable, lexical_units, words
from precis.errors import ConfigError
from precis.segment import Fragment, Provenance


def frag(text: str, role: str = "user", kind: str = "sentence") -> Fragment:
    return Fragment("S1", kind, text, role, "en",  # type: ignore[arg-type]
                    Provenance(0, 0, 0, 0, len(text)))


def with_rows(rows: dict[str, dict[str, float]]) -> CueTable:
    return CueTable.default().extended({"weights": rows})


def test_units_are_the_words_and_the_pairs_of_chinese_characters() -> None:
    low = "we'll keep redis"
    assert lexical_units(low, words(low)) == ["we'll", "keep", "redis"]
    low = "那就用redis吧，方案b"
    # words: "redis", "b"; Chinese runs of two or more: 那就用 (two pairs) and 方案 (one)
    assert lexical_units(low, words(low)) == ["redis", "b", "那就", "就用", "方案"]
    low = "吧 好"  # single characters make no pair
    assert lexical_units(low, words(low)) == []


@pytest.mark.parametrize(("text", "expected"), [
    ("use the runbook at https://wiki.example.com/atlas/runbook for every step",
     ["use", "the", "runbook", "at", "for", "every", "step"]),
    ("edit app/db.py and `foo_bar()` now, e.g. today", ["edit", "and", "now", "today"]),
    ("mail bob@corp.io or c:\\temp\\x", ["mail", "or"]),
    ("it is 3.14 or so. next", ["it", "is", "or", "so", "next"]),  # "so." ends a sentence
    ("请访问https://x.com/a然后重启", ["请访", "访问", "然后", "后重", "重启"]),
])
def test_urls_paths_and_code_are_not_words(text: str, expected: list[str]) -> None:
    assert lexical_units(text, words(text)) == expected


def test_pairs_come_from_the_opening_chinese_characters_only() -> None:
    head = "甲乙" * (LEXICAL_HAN_CHARS // 2)  # exactly the characters that count
    low = head + "。丙丁"
    units = lexical_units(low, words(low))
    assert len(units) == LEXICAL_HAN_CHARS - 1  # the pairs inside the first run
    assert set(units) == {"甲乙", "乙甲"}
    low = "甲乙丙，" + "丁" * LEXICAL_HAN_CHARS
    units = lexical_units(low, words(low))
    assert units[:2] == ["甲乙", "乙丙"]
    assert len(units) == 2 + (LEXICAL_HAN_CHARS - 3) - 1  # the second run fills the rest


def test_the_lexicon_is_every_word_row_even_an_empty_one() -> None:
    table = with_rows({"word.redis": {"decision": 2.0}, "word.方案": {},
                       "question.user": {"goal": 1.0}})
    assert {"redis", "方案"} <= table.lexicon
    assert "question.user" not in table.lexicon


def test_a_word_row_votes_and_is_named_in_the_evidence() -> None:
    text = "The cache layer sits on redis in front of the orders service."
    plain = classify(frag(text, "assistant"))
    assert plain.type != "todo"
    table = with_rows({"word.redis": {"todo": 30.0}})
    voted = classify(frag(text, "assistant"), table)
    assert voted.type == "todo"
    assert "word:redis" in voted.evidence
    assert "word:redis" not in plain.evidence


def test_a_chinese_pair_votes() -> None:
    text = "这个服务目前跑在三台机器上。"
    assert classify(frag(text)).type != "todo"
    assert classify(frag(text, "user"), with_rows({"word.三台": {"todo": 30.0}})).type == "todo"


def test_an_empty_row_is_a_feature_without_votes() -> None:
    text = "The zebrafish tank sits next to the quokka enclosure."
    table = with_rows({"word.zebrafish": {}})
    assert classify(frag(text, "assistant"), table) == classify(frag(text, "assistant"))
    (features,) = features_in_context([frag(text, "assistant")], table)
    assert features.values["word.zebrafish"] == 1.0
    assert "word.quokka" not in features.values  # no row, no feature


def test_words_inside_a_code_block_are_not_lexical_features() -> None:
    block = "```python\nredis = connect()\n```"
    table = with_rows({"word.redis": {"todo": 30.0}})
    assert classify(frag(block, "assistant", "code"), table).type == "code"
    (features,) = features_in_context([frag(block, "assistant", "code")], table)
    assert "word.redis" not in features.values


@pytest.mark.parametrize("feature", ["word.Redis", "word.", "word.go with", "word.example.com",
                                     "word.方案一", "word.方"])
def test_a_word_row_the_classifier_could_never_find_is_a_config_error(feature: str) -> None:
    with pytest.raises(ConfigError, match="names no unit"):
        with_rows({feature: {"todo": 1.0}})


def test_word_rows_for_a_word_and_a_chinese_pair_are_accepted() -> None:
    assert {"don't", "v2", "方案"} <= with_rows(
        {"word.don't": {"todo": 1.0}, "word.v2": {}, "word.方案": {"decision": 1.0}}).lexicon
