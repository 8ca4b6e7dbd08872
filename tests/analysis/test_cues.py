"""Cue tables: loading, matching rules, user extension and validation."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from precis.analysis.cues import CueTable, words
from precis.analysis.model import FRAGMENT_TYPES
from precis.errors import ConfigError

CUES_JSON = Path(__file__).resolve().parents[2] / "src" / "precis" / "analysis" / "cues.json"


def labels(table: CueTable, text: str, lead: int = 0) -> set[str]:
    return {cue.label for cue in table.scan(text.lower(), None, lead)}


def small(**types: dict[str, object]) -> CueTable:
    return CueTable.from_dict({"types": types})


# -- the built-in table ---------------------------------------------------------------------


def test_default_table_is_loaded_once_and_covers_every_type() -> None:
    table = CueTable.default()
    assert CueTable.default() is table
    data = table.to_dict()
    assert set(data["types"]) == set(FRAGMENT_TYPES)
    for name in FRAGMENT_TYPES:
        if name == "code":  # code is recognised by structure, not by phrases
            continue
        sections = data["types"][name]
        assert sections.get("en") and sections.get("zh"), name


def test_default_table_file_is_valid_json_next_to_the_module() -> None:
    raw = json.loads(CUES_JSON.read_text("utf-8"))
    assert raw["version"] == 1
    assert "must" in raw["types"]["constraint"]["en"]
    assert "必须" in raw["types"]["constraint"]["zh"]


def test_pyproject_ships_the_cue_table_as_package_data() -> None:
    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text("utf-8")
    assert '"analysis/*.json"' in pyproject


def test_bilingual_seed_cues_are_present() -> None:
    table = CueTable.default()
    assert {"我的需求", "请帮我"} <= labels(table, "我的需求是请帮我实现一个接口")
    assert "we decided" in labels(table, "We decided to keep it")
    assert "最终选择" in labels(table, "最终选择方案二")
    assert {"todo", "记得"} <= labels(table, "TODO 记得写测试")
    assert {"报错", "traceback"} <= labels(table, "报错了，traceback 在下面")


# -- matching rules -------------------------------------------------------------------------


def test_english_phrases_match_whole_words_only() -> None:
    table = small(chitchat={"en": {"ok": 1.0}}, decision={"en": {"let's go with": 2.0}})
    assert labels(table, "ok, thanks") == {"ok"}
    assert labels(table, "the token is broken") == set()
    assert labels(table, "Let's go with Redis.") == {"let's go with"}
    assert labels(table, "let's   go, with it") == {"let's go with"}  # spacing and punctuation
    assert labels(table, "let's go without it") == set()


def test_chinese_phrases_match_as_substrings() -> None:
    table = small(constraint={"zh": {"必须": 2.0}})
    assert labels(table, "密码必须用 bcrypt 校验") == {"必须"}
    assert labels(table, "密码要用 bcrypt 校验") == set()


def test_each_phrase_counts_once_and_nested_phrases_both_count() -> None:
    table = small(constraint={"zh": {"不能": 2.0, "能不能": -2.0}})
    found = [cue.label for cue in table.scan("能不能快点，能不能", None, 0)]
    assert sorted(found) == ["不能", "能不能"]


def test_start_cues_count_only_at_the_start() -> None:
    table = small(goal={"start": {"please": 2.0}})
    assert labels(table, "please add a flag") == {"please"}
    assert labels(table, "add a flag, please") == set()
    assert labels(table, "pleased to meet you") == set()
    # after a list marker: the caller passes where the first word starts
    assert labels(table, "- please add a flag", lead=2) == {"please"}


def test_regex_cues_are_searched_in_the_lowered_text() -> None:
    table = small(error={"regex": {r"exit code [1-9]\d*": {"weight": 2.0, "label": "exit"}}})
    assert labels(table, "It died with EXIT CODE 137") == {"exit"}
    assert labels(table, "exit code 0") == set()


def test_regex_cues_may_use_groups_and_back_references() -> None:
    table = small(chitchat={"regex": {r"\b(ha)\1+\b": {"weight": 2.0, "label": "haha"}}})
    assert labels(table, "hahaha that's annoying") == {"haha"}
    assert labels(table, "ha") == set()


def test_regex_cues_opening_with_a_class_or_chinese_fire_in_table_order() -> None:
    table = small(
        error={"regex": {r"[45]\d\d\b": {"weight": 1.0, "label": "status"},
                         r"报错": {"weight": 1.0, "label": "zh"},
                         r"got \d+": {"weight": 1.0, "label": "got"}}},
    )
    found = [cue.label for cue in table.scan("got 503 after retry", None, 0)]
    assert found == ["status", "got"]
    assert [cue.label for cue in table.scan("got 303", None, 0)] == ["got"]
    # a regex opening with a Chinese character comes before the ASCII-led ones
    found = [cue.label for cue in table.scan("报错 got 404", None, 0)]
    assert found == ["zh", "status", "got"]


def test_role_limited_cues_carry_their_roles() -> None:
    table = small(goal={"en": {"i need": {"weight": 2.0, "roles": ["user"]}}})
    (cue,) = table.scan("i need a script", None, 0)
    assert cue.roles == frozenset({"user"})
    assert cue.applies("user") and not cue.applies("assistant")


def test_words_keep_inner_apostrophes_and_hyphens_and_drop_quotes() -> None:
    assert words("don't use the follow-up 'ok' flag") == [
        "don't", "use", "the", "follow-up", "ok", "flag",
    ]
    assert words("密码 bcrypt 校验") == ["bcrypt"]
    assert words("") == []


# -- user extension -------------------------------------------------------------------------


def test_extended_adds_overrides_and_switches_off_cues() -> None:
    base = small(goal={"en": {"ship it": 1.0, "please": 1.0}})
    extended = base.extended(
        {"types": {"goal": {"en": {"ship it": 3.0, "please": 0}}, "todo": {"en": {"later": 2}}}}
    )
    assert labels(base, "please ship it later") == {"ship it", "please"}
    assert labels(extended, "please ship it later") == {"ship it", "later"}
    weights = {cue.label: cue.weight for cue in extended.scan("ship it", None, 0)}
    assert weights == {"ship it": 3.0}
    assert labels(base, "later") == set()  # the base table is unchanged


def test_extended_accepts_the_type_name_shorthand_lists_and_imperatives() -> None:
    table = CueTable.default().extended({"goal": {"en": ["blorp"]}, "imperative": ["blorp"]})
    (cue,) = [c for c in table.scan("blorp the widgets", None, 0) if c.label == "blorp"]
    assert (cue.target, cue.weight) == ("goal", 1.0)
    assert "blorp" in table.imperative
    assert "blorp" not in CueTable.default().imperative


def test_extended_with_nothing_returns_the_same_table() -> None:
    table = CueTable.default()
    assert table.extended({}) is table


def test_to_dict_round_trips() -> None:
    table = small(
        goal={"en": {"i need": {"weight": 2.0, "roles": ["user"], "label": "need"}}},
        error={"regex": {r"exit code [1-9]": 1.5}},
    )
    again = CueTable.from_dict(table.to_dict())
    assert again.to_dict() == table.to_dict()
    found = {c.label for c in again.scan("i need exit code 3", None, 0)}
    assert found == {"need", r"exit code [1-9]"}


# -- validation -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("additions", "names"),
    [
        ({"types": {"goals": {"en": {"x": 1}}}}, "goals"),
        ({"goalz": {"en": {"x": 1}}}, "goalz"),
        ({"types": {"goal": {"english": {"x": 1}}}}, "english"),
        ({"types": {"goal": {"regex": {"(unclosed": 1}}}}, "(unclosed"),
        ({"types": {"goal": {"regex": {"x*": 1}}}}, "x*"),
        ({"types": {"goal": {"en": {"x": "high"}}}}, "'x'"),
        ({"types": {"goal": {"en": {"x": True}}}}, "'x'"),
        ({"types": {"goal": {"en": {"x": float("nan")}}}}, "'x'"),
        ({"types": {"goal": {"en": {"x": 1e9}}}}, "'x'"),
        ({"types": {"goal": {"en": {"x": {"weight": 1, "roles": ["robot"]}}}}}, "robot"),
        ({"types": {"goal": {"en": {"x": {"weight": 1, "colour": "red"}}}}}, "colour"),
        ({"types": {"goal": {"en": {"x": {"roles": ["user"]}}}}}, "weight"),
        ({"types": {"goal": {"en": {"": 1}}}}, "non-empty"),
        ({"types": {"goal": ["x"]}}, "types.goal"),
        ({"types": ["goal"]}, "types"),
        ({"imperative": "ship"}, "imperative"),
        ({"imperative": ["ship it"]}, "ship it"),
    ],
)
def test_invalid_user_cues_raise_config_error_naming_the_entry(
    additions: dict[str, object], names: str
) -> None:
    with pytest.raises(ConfigError) as err:
        CueTable.default().extended(additions)
    assert names in str(err.value)


def test_a_cue_table_must_be_a_mapping() -> None:
    with pytest.raises(ConfigError, match="mapping"):
        CueTable.from_dict(["goal"])  # type: ignore[arg-type]


# -- files ----------------------------------------------------------------------------------


def test_load_json_file(tmp_path: Path) -> None:
    path = tmp_path / "cues.json"
    path.write_text(json.dumps({"types": {"todo": {"zh": {"回头": 2}}}}), "utf-8")
    assert labels(CueTable.load(path), "回头再说") == {"回头"}


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is Python 3.11+")
def test_load_toml_file(tmp_path: Path) -> None:
    path = tmp_path / "cues.toml"
    path.write_text('[types.todo.en]\n"someday" = 2.0\n[types.todo.zh]\n"回头" = 1\n', "utf-8")
    assert labels(CueTable.load(path), "someday, 回头") == {"someday", "回头"}


def test_load_reports_missing_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        CueTable.load(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"types": {', "utf-8")
    with pytest.raises(ConfigError, match="line 1") as err:
        CueTable.load(bad)
    assert err.value.where == str(bad)
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00\x81")
    with pytest.raises(ConfigError, match="UTF-8"):
        CueTable.load(binary)
    invalid = tmp_path / "invalid.json"
    invalid.write_text('{"types": {"goal": {"regex": {"[": 1}}}}', "utf-8")
    with pytest.raises(ConfigError, match=r"bad regular expression '\['"):
        CueTable.load(invalid)
