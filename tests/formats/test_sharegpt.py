"""ShareGPT reader: collections, roles, glaive-style function calls, errors, detection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import precis
from precis.errors import FormatError
from precis.formats import read_document
from precis.formats.sharegpt import ShareGPTFormat
from precis.model import Text, ToolCall, ToolResult

FMT = ShareGPTFormat()


def _parse(source: object) -> list[precis.Conversation]:
    return FMT.parse(read_document(source))


def test_jsonl_collection(fixtures: Path) -> None:
    doc = read_document(fixtures / "sharegpt" / "chats.jsonl")
    assert FMT.sniff(doc) == pytest.approx(0.95)
    first, second = FMT.parse(doc)
    assert first.id == "c1"
    assert [m.role for m in first] == ["user", "assistant"]
    assert first[0].text == "什么是二分查找？"
    assert first[1].text == "二分查找在有序数组中每次把区间减半。\n\n时间复杂度是 O(log n)。"
    assert first[0].metadata["source_role"] == "human"
    assert first[1].metadata["source_role"] == "gpt"
    assert second.id is None
    assert [m.role for m in second] == ["system", "user", "assistant"]
    assert "source_role" not in second[0].metadata  # "system" is already a precis role
    assert second.metadata == {"source": "hand-written"}


def test_function_calls_and_observations(fixtures: Path) -> None:
    [conv] = _parse(fixtures / "sharegpt" / "glaive.json")
    assert conv.id == "7"  # numeric ids become strings
    assert [m.role for m in conv] == [
        "system", "user", "assistant", "tool", "tool", "assistant",
        "user", "assistant", "tool", "assistant",
    ]
    assert conv[0].text == "You can call get_weather."
    assert conv.metadata["tools"].startswith('[{"name": "get_weather"')
    # parallel calls: ids from the turn index (turn 1) and the call's position
    assert conv[2].parts == [
        ToolCall("call_1_0", "get_weather", '{"city": "Paris"}'),
        ToolCall("call_1_1", "get_weather", '{"city": "Rome"}'),
    ]
    assert conv[2].metadata["source_role"] == "function_call"
    # observations answer the open calls in order
    assert conv[3].parts == [ToolResult("call_1_0", '{"temp_c": 18}', name="get_weather")]
    assert conv[4].parts == [ToolResult("call_1_1", '{"temp_c": 24}', name="get_weather")]
    # a single call; arguments already JSON text are kept as written
    assert conv[7].parts == [ToolCall("call_6", "get_weather", '{"city": "Oslo"}')]
    assert conv[8].tool_call_id == "call_6"
    assert conv[9].text == "Oslo 9 °C."


def test_load_checks_pairs_without_warnings(fixtures: Path) -> None:
    conv = precis.load(fixtures / "sharegpt" / "glaive.json")
    assert conv.source_format == "sharegpt"
    assert conv.warnings == []


def test_observation_without_call_is_kept_with_a_warning() -> None:
    data = {"conversations": [{"from": "observation", "value": "42"}]}
    conv = precis.load(data)
    assert conv[0].role == "tool"
    assert conv[0].tool_results == [ToolResult("result_0", "42")]
    assert len(conv.warnings) == 1
    assert "result_0" in conv.warnings[0]


def test_bare_turn_list_is_one_conversation() -> None:
    data = [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}]
    doc = read_document(data)
    assert FMT.sniff(doc) == pytest.approx(0.8)
    [conv] = FMT.parse(doc)
    assert [(m.role, m.text) for m in conv] == [("user", "hi"), ("assistant", "hello")]


def test_role_content_turns_and_case() -> None:
    data = {
        "conversations": [
            {"role": "Human", "content": "hi"},
            {"role": "GPT", "content": "hello", "weight": 0},
        ]
    }
    [conv] = _parse(data)
    assert [(m.role, m.text) for m in conv] == [("user", "hi"), ("assistant", "hello")]
    assert conv[1].metadata == {"weight": 0, "source_role": "GPT"}


def test_unknown_from_names_line_and_turn(fixtures: Path) -> None:
    path = fixtures / "sharegpt" / "bad_from.jsonl"
    with pytest.raises(FormatError) as info:
        _parse(path)
    assert info.value.where == f"{path} line 2"
    assert "record 1, turn 1" in info.value.message
    assert "'robot'" in info.value.message
    assert "expected human, gpt" in info.value.message


def test_conversations_not_a_list(fixtures: Path) -> None:
    path = fixtures / "sharegpt" / "bad_conversations.json"
    doc = read_document(path)
    assert FMT.sniff(doc) == pytest.approx(0.5)  # claimed, so the error is specific
    with pytest.raises(FormatError, match="'conversations' is an object") as info:
        FMT.parse(doc)
    assert info.value.where == str(path)
    # and through load(), detection picks sharegpt and reports the same problem
    with pytest.raises(FormatError, match="expected a list of turns"):
        precis.load(path)


@pytest.mark.parametrize(
    ("turn", "expected"),
    [
        ({"value": "x"}, "turn 0 has no 'from'"),
        ({"from": 3, "value": "x"}, "turn 0 has 'from' a number"),
        ({"from": "gpt"}, r"turn 0 \(gpt\) has no 'value'"),
        ({"from": "gpt", "value": ["a"]}, "turn 0 has 'value' a list"),
        ({"from": "function_call", "value": "get_weather(Paris)"}, "value is not JSON"),
        ({"from": "function_call", "value": '{"arguments": {}}'}, "without a 'name'"),
        ({"from": "function_call", "value": "[]"}, "empty list of calls"),
    ],
)
def test_bad_turns(turn: dict[str, object], expected: str) -> None:
    with pytest.raises(FormatError, match=expected):
        _parse([{"conversations": [turn]}])


def test_record_not_an_object() -> None:
    data = [{"conversations": [{"from": "human", "value": "hi"}]}, "oops"]
    with pytest.raises(FormatError, match="record 1 is a string") as info:
        _parse(data)
    assert info.value.where == "<data> item 1"


def test_sniff_leaves_other_shapes_alone() -> None:
    openai = read_document([{"messages": [{"role": "user", "content": "hi"}]}])
    assert FMT.sniff(openai) == 0.0
    plain = read_document([{"role": "user", "content": "hi"}])
    assert FMT.sniff(plain) == 0.0
    text = read_document(b"User: hi\nAssistant: hello\n")
    assert FMT.sniff(text) == 0.0
    mixed = read_document(
        [{"conversations": [{"from": "human", "value": "hi"}]}, {"messages": []}]
    )
    assert FMT.sniff(mixed) == 0.0


def test_non_string_observation_is_serialised() -> None:
    data = {
        "conversations": [
            {"from": "function_call", "value": {"name": "f", "arguments": {"a": 1}}},
            {"from": "observation", "value": {"ok": True, "msg": "完成"}},
        ]
    }
    [conv] = _parse(data)
    assert conv[0].parts == [ToolCall("call_0", "f", '{"a": 1}')]
    assert conv[1].parts == [ToolResult("call_0", '{"ok": true, "msg": "完成"}', name="f")]


# -- the real file ---------------------------------------------------------------------


@pytest.mark.data
def test_real_chinese_sharegpt(shared_data: Path) -> None:
    path = shared_data / "transcripts" / "zh" / "sharegpt-zh-first500.jsonl"
    collection = precis.load_all(path)
    assert collection.format == "sharegpt"
    assert len(collection) == 500
    first = collection.pick(0)
    assert first[0].role == "user"
    assert first[0].parts == [Text('"свинья" 和 "свинец" 这两个词有什么联系？')]
    assert first[1].role == "assistant"
    assert first[1].text.startswith("俄语中的单词“свинья”意为“猪”")
    assert len(first) == 6
    # every turn kept: the message count equals the turn count of each line
    lines = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]
    assert [len(c) for c in collection.conversations] == [
        len(r["conversations"]) for r in lines
    ]
    assert {m.role for c in collection.conversations for m in c} == {"user", "assistant"}
    conv = precis.load(path, pick=499)
    assert conv[0].text == lines[499]["conversations"][0]["value"]
