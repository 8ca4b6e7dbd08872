"""LangChain message dumps: messages_to_dict, flat model_dump, dumpd; tool calls; errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import precis
from precis.errors import FormatError
from precis.formats import read_document
from precis.formats.langchain import LangChainFormat, parse_langchain_messages
from precis.formats.openai import OpenAIFormat
from precis.model import Image, Thinking, ToolCall, ToolResult

FMT = LangChainFormat()


def test_messages_to_dict_shape(fixtures: Path) -> None:
    doc = read_document(fixtures / "langchain" / "messages_to_dict.json")
    assert FMT.sniff(doc) == pytest.approx(0.9)
    assert OpenAIFormat().sniff(doc) == 0.0
    [conv] = FMT.parse(doc)
    assert [m.role for m in conv] == [
        "system", "user", "assistant", "tool", "assistant", "tool", "assistant", "user"
    ]
    assert conv[0].text == "You are a SQL helper."
    assert conv[1].id == "msg-1"
    assert conv[1].metadata == {}  # empty kwargs, example=False and nulls are not kept
    assert conv[7].text == "Thanks!"
    assert conv[7].metadata["source_role"] == "user"


def test_tool_use_block_and_tool_calls_give_one_call(fixtures: Path) -> None:
    [conv] = FMT.parse(read_document(fixtures / "langchain" / "messages_to_dict.json"))
    ai = conv[2]
    assert ai.text == "Let me count them."
    assert ai.tool_calls == [
        ToolCall("toolu_01", "run_sql", '{"query": "SELECT count(*) FROM orders WHERE month = 5"}')
    ]
    assert ai.metadata["usage_metadata"]["total_tokens"] == 150
    assert ai.metadata["response_metadata"]["stop_reason"] == "tool_use"
    assert conv[3].parts == [ToolResult("toolu_01", "[[1284]]", name="run_sql")]
    assert conv[3].name == "run_sql"


def test_additional_kwargs_tool_calls_deduplicated(fixtures: Path) -> None:
    [conv] = FMT.parse(read_document(fixtures / "langchain" / "messages_to_dict.json"))
    ai = conv[4]
    assert ai.parts == [ToolCall("call_x", "run_sql", '{"query": "SELECT 1"}')]
    assert "additional_kwargs" not in ai.metadata
    error = conv[5].tool_results[0]
    assert error.call_id == "call_x"
    assert error.is_error is True
    assert error.content == 'relation "x" does not exist'


def test_flat_shape_in_messages_object(fixtures: Path) -> None:
    doc = read_document(fixtures / "langchain" / "flat.json")
    assert FMT.sniff(doc) > 0.7
    assert OpenAIFormat().sniff(doc) == 0.0
    [conv] = FMT.parse(doc)
    assert conv.metadata == {"thread_id": "t-9"}
    assert [m.role for m in conv] == ["user", "assistant", "user", "assistant", "tool"]
    assert conv[1].parts[0] == Thinking("The Makefile has a deploy target.")
    assert conv[1].text == "Run `make deploy ENV=prod`."
    assert conv[2].parts[1] == Image(url="https://example.com/s.png")


def test_legacy_function_call_pairs(fixtures: Path) -> None:
    [conv] = FMT.parse(read_document(fixtures / "langchain" / "flat.json"))
    call = conv[3].tool_calls[0]
    result = conv[4].tool_results[0]
    assert (call.name, call.arguments) == ("lookup", '{"id": 3}')
    assert result.call_id == call.id
    assert result.name == "lookup"
    assert result.content == "build 3: failed"


def test_dumpd_shape() -> None:
    items = [
        {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "HumanMessage"],
         "kwargs": {"content": "hi", "type": "human"}},
        {"lc": 1, "type": "constructor",
         "id": ["langchain_core", "messages", "ai", "AIMessage"],
         "kwargs": {"content": "", "tool_calls": [
             {"name": "search", "args": {"q": "x"}, "id": "c1", "type": "tool_call"}]}},
        {"lc": 1, "type": "constructor", "id": ["langchain_core", "messages", "ToolMessage"],
         "kwargs": {"content": "found", "tool_call_id": "c1"}},
    ]
    doc = read_document(items)
    assert FMT.sniff(doc) == pytest.approx(0.9)
    [conv] = FMT.parse(doc)
    assert [m.role for m in conv] == ["user", "assistant", "tool"]
    assert conv[1].tool_calls == [ToolCall("c1", "search", '{"q": "x"}')]
    assert conv[2].tool_call_id == "c1"


def test_jsonl_one_message_per_line(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    lines = [{"type": "human", "content": "你好"}, {"type": "ai", "content": "你好！"}]
    path.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines), "utf-8")
    doc = read_document(path)
    assert FMT.sniff(doc) == pytest.approx(0.8)
    [conv] = FMT.parse(doc)
    assert [m.text for m in conv] == ["你好", "你好！"]


def test_missing_tool_call_id_gets_deterministic_id() -> None:
    messages = parse_langchain_messages(
        [{"type": "ai", "content": "", "tool_calls": [{"name": "f", "args": {}}]},
         {"type": "tool", "content": "r"}],
        "x.json",
    )
    assert messages[0].tool_calls[0].id == "call_0_0"
    assert messages[1].tool_call_id == "call_0_0"


# -- errors ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        ([{"type": "human", "content": "a"}, {"type": "robot", "content": "b"}],
         "message 1 has unknown type 'robot'"),
        ([{"type": "human", "content": "a"}, "b"], "message 1 is a string"),
        ([{"content": "a"}], "message 0 has no 'type'"),
        ([{"type": "chat", "data": {"content": "a", "role": "narrator"}}],
         "message 0 \\(chat\\) has unknown role 'narrator'"),
        ([{"type": "ai", "data": {"content": "", "tool_calls": "x"}}],
         "message 0: tool_calls is a string \\(expected a list\\)"),
        ([{"type": "ai", "data": {"content": "", "tool_calls": [{"args": {}}]}}],
         "message 0 tool call 0 has no 'name'"),
        ([{"type": "human", "content": 3}], "message 0 has content a number"),
    ],
)
def test_bad_structure_errors(items: list[object], expected: str) -> None:
    with pytest.raises(FormatError, match=expected):
        parse_langchain_messages(items, "x.json")


# -- detection -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        [{"role": "user", "content": "hi"}],
        {"system": "s", "messages": [{"role": "user", "content": "hi"}]},
        {"conversations": [{"from": "human", "value": "hi"}]},
        # Claude Code log lines also carry a "type".
        [{"type": "user", "uuid": "u", "message": {"role": "user", "content": "x"}}],
        [{"type": "system", "content": "Conversation compacted", "uuid": "u2",
          "sessionId": "s"}],
    ],
)
def test_not_claimed(value: object) -> None:
    assert FMT.sniff(read_document(value)) == 0.0


def test_load_end_to_end(fixtures: Path) -> None:
    conv = precis.load(fixtures / "langchain" / "messages_to_dict.json")
    assert conv.source_format == "langchain"
    assert conv.warnings == []
