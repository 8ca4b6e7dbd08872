"""More fast paths of analysis, each checked against the plain rule it stands for.

Regexes that start with a cheap test of the character they must begin with, a prefix
lookup by first character, shingle parts gathered in another order for a set, a hint that
rules texts out before the change-cue search and one clause count instead of four: each
test states the plain rule (as the code read before) and checks the fast path against it on
generated texts that hold the characters the shortcuts must survive. Importance records
shared between fragments with the same factors are checked against each fragment's own
type, folding and thresholds.
"""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import precis
from precis.analysis import AnalysisConfig, ImportanceWeights, classify_all, consolidate
from precis.analysis import importance as importance_module
from precis.analysis._entities import _ATOM, entities, numbers
from precis.analysis._phrases import CHANGE_CUE, CHANGE_HINT, matching
from precis.analysis._shingles import Shingler, normalize
from precis.analysis.classify import _CLAUSE_MARK
from precis.analysis.cues import CueTable
from precis.analysis.importance import _identifiers_of, score_importance
from precis.model import Message, Role
from precis.segment import segment

_PIECES = [
    "foo", "Bar", "fooBar", "aB", "Ab", "AB", "user_id", "app/db.py", "a.py", "x.JSON", ".md",
    "-", "-1", "--flag", "/", "`", "_", ".", ",", ", ", ";", "; ", "，", "；", "1", "3.10",
    "٣", "１", "²", "x٣y", "PAY-1287", "https://x.io/a", " ", "\n", "\t", "\x00", "\xa0",
    "中文", "我们需要", "使用", "列出所有", "用的是", "不用了", "改成", "改一下", "其实",
    "还是用吧", "actually", "switch to", "switched the db to", "replace it with", "not 5",
    "go with", "make it", "changes", "changing", "Σ", "é", "e\u0301", "İ", "ſ", "😀", "？", "：",
    "的",
]
texts = st.lists(st.sampled_from(_PIECES), max_size=14).map("".join)
text_lists = st.lists(texts, min_size=1, max_size=10)
_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- regexes that test their first character first ---------------------------------------------

_A = r"[0-9A-Za-z_./:~@#%+-]"
_ATOM_REFERENCE = re.compile(rf"(?<!{_A}){_A}*(?:\d|[/_]|[A-Za-z]\.[A-Za-z]){_A}*")


@_SETTINGS
@given(texts)
def test_atom_pattern_finds_what_the_plain_pattern_finds(text: str) -> None:
    # (a digit outside 0-9, such as "٣", may start a match: the first-character test allows it)
    assert _ATOM.findall(text) == _ATOM_REFERENCE.findall(text)


def test_atoms_by_hand() -> None:
    assert _ATOM.findall("版本 3.10 和 app/db.py") == ["3.10", "app/db.py"]
    assert _ATOM.findall("x٣ ٣") == ["x٣", "٣"]
    assert numbers("限额 31 天") == {"31"}
    assert entities("用 MySQL 8.0").names == {"mysql"}


_IDENT_HINT_REFERENCE = re.compile(
    r"[`/_]|-\d|[a-z][A-Z]|\.(?:py|js|ts|tsx|jsx|json|md|sql|ya?ml|toml|go|rs|java|csv|txt|sh"
    r"|ini|cfg|lock|html|css)"
)


@_SETTINGS
@given(text_lists)
def test_identifier_hint_finds_the_texts_the_plain_hint_finds(items: list[str]) -> None:
    assert matching(importance_module._IDENT_HINT, items) == matching(_IDENT_HINT_REFERENCE, items)


def test_identifier_hint_by_hand() -> None:
    found = _identifiers_of(["see fooBar", "a-1", "x.py", "nothing", "Foo", "x`y`", "改 a/b"])
    assert sorted(found) == [0, 2, 6]  # "a-1" and "`y`" hint but hold no identifier


# -- cue table lookups -------------------------------------------------------------------------


def test_imperative_prefixes_by_first_character_equal_startswith() -> None:
    tables = [CueTable.default(),
              CueTable.default().extended({"imperative": ["列", "列一下", "修", "ça"]})]
    rnd = random.Random(3)
    samples = [" ", "列出所有表", "列", "修复", "使用 redis", "ça va", "", "我们"]
    for table in tables:
        samples += list(table.imperative_prefixes)
        for _ in range(2000):
            low = "".join(rnd.choice(samples) for _ in range(rnd.randint(0, 3)))
            start = rnd.randint(0, len(low) + 1)
            assert table.opens_with_prefix(low, start) == low.startswith(
                table.imperative_prefixes, start)


@_SETTINGS
@given(texts)
def test_key_character_pattern_finds_the_key_characters(text: str) -> None:
    table = CueTable.default()
    table.scan("x")  # builds the index
    index = table._index
    assert index is not None and index.key_char_pattern is not None
    low = text.lower()
    assert set(index.key_char_pattern.findall(low)) == index.key_chars.intersection(low)


def test_a_table_without_chinese_phrases_scans_chinese_text() -> None:
    table = CueTable.from_dict({"types": {"goal": {"en": {"ship it": 2.0}}}})
    assert [c.label for c in table.scan("我们 ship it 吧")] == ["ship it"]
    assert table.scan("我们吧") == []


# -- shingles ----------------------------------------------------------------------------------


@pytest.mark.parametrize("cjk_ngram", [1, 2, 3])
def test_parts_for_a_set_are_the_parts_in_another_order(cjk_ngram: int) -> None:
    rnd = random.Random(cjk_ngram)
    shingler = Shingler(cjk_ngram=cjk_ngram)
    for _ in range(800):
        norm = normalize("".join(rnd.choice(_PIECES) for _ in range(rnd.randint(0, 16))))
        assert sorted(shingler._parts(norm, ordered=False)) == sorted(shingler._parts(norm))


def test_parts_by_hand() -> None:
    # pairs from the first character, then from the second
    assert Shingler()._parts("数据库迁移 ok 表", ordered=False) == [
        "数据", "库迁", "据库", "迁移", "ok", "表"]
    assert Shingler()._parts("数据库迁移 ok 表") == ["数据", "据库", "库迁", "迁移", "ok", "表"]


# -- change cues, clause marks ---------------------------------------------------------------


@_SETTINGS
@given(texts)
def test_change_hint_holds_every_change_cue(text: str) -> None:
    norm = normalize(text)
    if CHANGE_CUE.search(norm):
        assert CHANGE_HINT.search(norm)


def test_change_hint_by_hand() -> None:
    cues = ["actually use x", "we switched the db to postgres", "replaces it with y", "not 5",
            "going with redis", "数据库改成 postgres", "不用 mysql 了", "还是先这样吧", "其实不对",
            "scratch that", "on second thought no", "make it 10", "预算降到 3 万"]
    for text in cues:
        assert CHANGE_CUE.search(text), text
        assert CHANGE_HINT.search(text), text
    assert matching(CHANGE_HINT, ["数据库用 mysql", "改成 pg", "keep it"]) == [1]


@_SETTINGS
@given(texts)
def test_clause_marks_counted_at_once(text: str) -> None:
    low = text.lower()
    expected = low.count(", ") + low.count("; ") + low.count("，") + low.count("；")
    assert len(_CLAUSE_MARK.findall(low)) == expected


# -- importance records shared between fragments with the same factors --------------------------


def _conversation() -> precis.Conversation:
    rnd = random.Random(17)
    lines = ["We must keep Python 3.9.", "ok", "Use MySQL for the orders table.",
             "Actually, switch the orders database to Postgres.", "See app/db.py and fooBar.",
             "As I said, keep Python 3.9.", "好的", "数据库用 MySQL。", "数据库改成 Postgres 16。",
             "Let's go with Redis for the cache.", "The limit is 31 days.", "那个 SQL 再跑一次",
             "SELECT id FROM orders WHERE total > 100;", "thanks!", "a b " * 150]
    messages = []
    roles: tuple[Role, Role] = ("user", "assistant")
    for k in range(120):
        role = roles[k % 2]
        messages.append(Message.of(role, " ".join(rnd.choice(lines) for _ in range(3))))
    return precis.Conversation(messages)


@pytest.mark.parametrize("weights", [
    {},
    {"speaker_weights": {"user": 0.1, "assistant": -0.05}, "recency": 0.2, "recent_rounds": 5},
    {"latest_request": 0.0, "last_decision": 0.0, "confirmation": 0.0, "superseded": 0.0},
])
def test_shared_importance_records_hold_their_fragments_own_factors(
        weights: dict[str, object]) -> None:
    cfg = AnalysisConfig(weights=ImportanceWeights(**weights))  # type: ignore[arg-type]
    frags = segment(_conversation()).fragments
    classes = classify_all(frags)
    cons = consolidate(frags, [c.type for c in classes])
    assert cons.duplicates and cons.folded  # the sample holds what the factors look at
    found = score_importance(frags, classes, cons, cfg)
    assert len({id(r) for r in found}) < len(found)  # records are shared
    folded = set(cons.folded)
    for frag, cls, record in zip(frags, classes, found):
        # each record is its own fragment's: the type's weight, a fold only where folded
        assert record.factors["type"] == cfg.weights.type_weights.get(cls.type, 0.0)
        assert ("confirmation" in record.factors) == (
            frag.id in folded and bool(cfg.weights.confirmation))
        assert record.score == round(sum(record.factors.values()), 4)
        assert record.level == ("HIGH" if record.score >= cfg.high else
                                "MEDIUM" if record.score >= cfg.medium else "LOW")
