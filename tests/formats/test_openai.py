"""OpenAI Chat Completions reader: shapes, parts, tool linking, errors, detection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import precis
from precis.errors import FormatError
from precis.formats import read_document
from precis.formats.openai import OpenAIFormat, parse_openai_messages
from precis.model import Image, Text, ToolCall, ToolResult

FMT = OpenAIFormat()


def _parse(path: Path) -> list[precis.Conversation]:
    return FMT.parse(read_document(path))


# -- a list of messages ----------------------------------------------------------------


def test_tool_calls_fixture(fixtures: Path) -> None:
    doc = read_document(fixtures / "openai" / "tool_calls.json")
    assert FMT.sniff(doc) == pytest.approx(0.9)
    [conv] = FMT.parse(doc)
    assert [m.role for m in conv] == [
        "system", "system", "user", "assistant", "tool", "tool",
        "assistant", "user", "assistant", "assistant", "tool", "assistant",
    ]
    assert conv[1].metadata["source_role"] == "developer"
    assert conv[1].text == "Always confirm before booking."


def test_content_parts(fixtures: Path) -> None:
    [conv] = _parse(fixtures / "openai" / "tool_calls.json")
    user = conv[2]
    assert user.name == "mia"
    assert isinstance(user.parts[0], Text)
    assert user.parts[0].text.startswith("Book me the cheapest flight")
    image = user.parts[1]
    assert isinstance(image, Image)
    assert image.media_type == "image/png"
    assert image.data == "iVBORw0KGgo="
    assert image.url is None
    refusal = conv[8]
    assert refusal.text == "I can't help with that."
    assert refusal.metadata["refusal"] is True


def test_tool_calls_and_results(fixtures: Path) -> None:
    [conv] = _parse(fixtures / "openai" / "tool_calls.json")
    assistant = conv[3]
    assert assistant.parts == [
        ToolCall("call_a1", "search_flights", '{"origin":"JFK","destination":"SEA"}'),
        ToolCall("call_a2", "get_user", '{"user_id": "mia_li"}'),  # dict args -> JSON text
    ]
    assert conv[4].parts == [
        ToolResult("call_a1", '[{"flight": "HAT136", "price": 152}]', name="search_flights")
    ]
    assert conv[4].tool_call_id == "call_a1"
    assert conv[5].tool_results[0].content == '{"user_id": "mia_li"}'
    assert conv[5].tool_call_id == "call_a2"


def test_extra_keys_go_to_metadata(fixtures: Path) -> None:
    [conv] = _parse(fixtures / "openai" / "tool_calls.json")
    assert conv[6].metadata == {"audio": None, "annotations": []}
    assert conv[6].text == "HAT136 costs $152. Shall I book it?"


def test_legacy_function_call_pairs_with_function_result(fixtures: Path) -> None:
    conv = precis.load(fixtures / "openai" / "tool_calls.json")
    call = conv[9].tool_calls[0]
    result = conv[10].tool_results[0]
    assert call.name == "book"
    assert call.id == result.call_id == "fn_9"
    assert result.name == "book"
    assert result.content == '{"reservation": "HATHAT"}'
    assert conv[10].metadata["source_role"] == "function"
    assert conv.warnings == []


def test_tool_message_without_call_id_answers_pending_call() -> None:
    messages = parse_openai_messages(
        [
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "function": {"name": "a", "arguments": "{}"}},
                {"id": "c2", "function": {"name": "b", "arguments": "{}"}},
            ]},
            {"role": "tool", "content": "first"},
            {"role": "tool", "content": "second"},
        ],
        "x.json",
    )
    assert [m.tool_call_id for m in messages[1:]] == ["c1", "c2"]


def test_null_content_and_missing_call_id_are_fine() -> None:
    [msg] = parse_openai_messages(
        [{"role": "assistant", "content": None, "tool_calls": [
            {"type": "function", "function": {"name": "run", "arguments": None}}]}],
        "x.json",
    )
    assert msg.parts == [ToolCall("call_0_0", "run", "{}")]


def test_audio_and_file_parts_become_placeholders() -> None:
    audio = {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}
    file = {"type": "file", "file": {"filename": "report.pdf", "file_data": "JVBERi0="}}
    [msg] = parse_openai_messages([{"role": "user", "content": [audio, file]}], "x.json")
    assert [p.text for p in msg.parts] == ["[audio: wav]", "[file: report.pdf]"]
    assert msg.metadata["attachments"] == [audio, file]


def test_reasoning_content_becomes_thinking() -> None:
    [msg] = parse_openai_messages(
        [{"role": "assistant", "content": "42", "reasoning_content": "6 times 7"}], "x.json"
    )
    assert [p.kind for p in msg.parts] == ["thinking", "text"]
    assert msg.parts[0].text == "6 times 7"


# -- {"messages": ...} objects and JSON Lines -------------------------------------------


def test_request_object_keeps_other_keys(fixtures: Path) -> None:
    doc = read_document(fixtures / "openai" / "request.json")
    assert FMT.sniff(doc) == pytest.approx(0.9)
    [conv] = FMT.parse(doc)
    assert conv.metadata["model"] == "gpt-4o"
    assert conv.metadata["temperature"] == 0
    assert conv.metadata["tools"][0]["function"]["name"] == "get_weather"
    assert "messages" not in conv.metadata
    assert [m.role for m in conv] == ["user", "assistant", "tool", "assistant"]
    # An empty string next to tool calls adds no empty text part.
    assert conv[1].parts == [ToolCall("call_w", "get_weather", '{"city":"Paris"}')]
    assert conv[2].tool_results[0].content == "18°C, cloudy"


def test_jsonl_one_message_per_line(fixtures: Path) -> None:
    doc = read_document(fixtures / "openai" / "messages.jsonl")
    assert doc.kind == "jsonl"
    assert FMT.sniff(doc) == pytest.approx(0.6)
    [conv] = FMT.parse(doc)
    assert [m.text for m in conv] == ["You are terse.", "2+2?", "4"]
    assert conv[1].timestamp == "2024-05-01T10:00:00"
    assert conv[2].timestamp == "2024-05-01T10:00:01+00:00"  # Unix seconds, UTC
    assert conv[2].metadata["timestamp"] == 1714557601


def test_jsonl_collection(fixtures: Path) -> None:
    path = fixtures / "openai" / "collection.jsonl"
    doc = read_document(path)
    assert FMT.sniff(doc) == pytest.approx(0.85)
    convs = FMT.parse(doc)
    assert [c.id for c in convs] == ["conv-a", "conv-b", None]
    assert convs[0].metadata == {"model": "gpt-4o-mini"}
    assert convs[0][1].text == "你好！有什么可以帮你？"
    assert precis.load(path, pick="conv-b")[1].text == "Pong"
    assert len(precis.load_all(path)) == 3


def test_json_list_of_conversations() -> None:
    data = [
        {"id": 7, "messages": [{"role": "user", "content": "one"}]},
        {"id": 8, "messages": [{"role": "user", "content": "two"}]},
    ]
    coll = precis.load_all(data)
    assert coll.format == "openai"
    assert [c.id for c in coll.conversations] == ["7", "8"]


# -- errors ----------------------------------------------------------------------------


def test_unknown_role_names_message_index_and_role() -> None:
    with pytest.raises(FormatError) as err:
        parse_openai_messages(
            [{"role": "user", "content": "hi"}, {"role": "robot", "content": "beep"}], "x.json"
        )
    assert "message 1" in str(err.value)
    assert "'robot'" in str(err.value)
    assert err.value.where == "x.json"


def test_unknown_role_in_jsonl_names_the_line(fixtures: Path) -> None:
    path = fixtures / "openai" / "bad_role.jsonl"
    with pytest.raises(FormatError, match="message 1 has unknown role 'robot'") as err:
        FMT.parse(read_document(path))
    assert err.value.where == f"{path} line 2"


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        ([{"role": "user", "content": "hi"}, "just text"], "message 1 is a string"),
        ([["user", "hi"]], "message 0 is a list"),
        ([{"content": "hi"}], "message 0 has no role"),
        ([{"role": "assistant", "content": None, "tool_calls": {"id": "x"}}],
         "message 0: tool_calls is an object \\(expected a list\\)"),
        ([{"role": "assistant", "content": None, "tool_calls": ["x"]}],
         "message 0 tool call 0 is a string"),
        ([{"role": "assistant", "content": None, "tool_calls": [{"id": "x", "function": {}}]}],
         "message 0 tool call 0 has no function name"),
        ([{"role": "user", "content": 42}], "message 0 has content a number"),
        ([{"role": "user", "content": [{"type": "text"}]}], "message 0 part 0 \\(text\\)"),
        ([{"role": "tool", "tool_call_id": ["x"], "content": "r"}], "tool_call_id is a list"),
    ],
)
def test_bad_structure_errors(items: list[object], expected: str) -> None:
    with pytest.raises(FormatError, match=expected):
        parse_openai_messages(items, "x.json")


def test_collection_record_without_messages_list(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        json.dumps({"messages": [{"role": "user", "content": "a"}]}) + "\n"
        + json.dumps({"messages": "oops"}) + "\n",
        encoding="utf-8",
    )
    with pytest.raises(FormatError, match="record 1: 'messages' is a string") as err:
        FMT.parse(read_document(path))
    assert err.value.where == f"{path} line 2"


def test_text_input_is_a_format_error(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_text("User: hi\n", encoding="utf-8")
    with pytest.raises(FormatError, match="expected JSON"):
        FMT.parse(read_document(path))


# -- detection -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        # Anthropic request with a top-level system prompt.
        {"system": "Be brief.", "messages": [{"role": "user", "content": "hi"}]},
        # Anthropic blocks.
        [{"role": "user", "content": "x"},
         {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "n",
                                             "input": {}}]}],
        [{"role": "tool_result", "content": [{"type": "text", "text": "ok"}]}],
        # ShareGPT and LoCoMo.
        {"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "yo"}]},
        [{"conversation": {"speaker_a": "A", "session_1": [
            {"speaker": "A", "dia_id": "D1:1", "text": "hi"}]}, "qa": []}],
        # LangChain dumps.
        [{"type": "human", "data": {"content": "hi"}}],
        [{"type": "human", "content": "hi"}, {"type": "ai", "content": "yo"}],
    ],
)
def test_not_claimed(value: object) -> None:
    assert FMT.sniff(read_document(value)) == 0.0


def test_claude_code_log_not_claimed(tmp_path: Path) -> None:
    lines = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": "s",
         "message": {"role": "user", "content": "fix the bug"}},
        {"type": "assistant", "uuid": "u2", "parentUuid": "u1", "sessionId": "s",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}},
    ]
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    assert FMT.sniff(read_document(path)) == 0.0


def test_plain_messages_are_plausible_not_certain() -> None:
    doc = read_document([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}])
    assert FMT.sniff(doc) == pytest.approx(0.6)


def test_load_end_to_end(fixtures: Path) -> None:
    conv = precis.load(fixtures / "openai" / "tool_calls.json")
    assert conv.source_format == "openai"
    assert len(conv) == 12
    assert conv.warnings == []
