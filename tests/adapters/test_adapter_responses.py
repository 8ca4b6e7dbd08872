"""Responses API input items <-> precis messages (precis.adapters.responses): no framework
needed."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from _adapter_rules import api_rules, responses_errors

from precis.adapters.responses import (
    ITEMS_KEY,
    items_to_messages,
    message_to_items,
    messages_to_items,
)
from precis.errors import FormatError
from precis.formats.export import to_openai
from precis.model import Message, Text, Thinking, ToolCall, ToolResult
from precis.runtime import ContextConfig, ContextMemory

RULES = api_rules()

USER = {"role": "user", "content": "Why does the build fail?"}
REASONING = {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAA",
             "summary": [{"type": "summary_text", "text": "Look at the log."}]}
SAY = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
       "content": [{"type": "output_text", "text": "Reading the log.", "annotations": []}]}
CALL_1 = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read_file",
          "arguments": '{"path": "build.log"}', "status": "completed"}
CALL_2 = {"type": "function_call", "call_id": "call_2", "name": "run",
          "arguments": '{"cmd": "make"}'}
OUT_1 = {"type": "function_call_output", "call_id": "call_1", "output": "error: missing x"}
OUT_2 = {"type": "function_call_output", "call_id": "call_2",
         "output": [{"type": "input_text", "text": "make: *** [all] Error 1"}]}
SEARCH = {"type": "web_search_call", "id": "ws_1", "status": "completed",
          "action": {"type": "search", "query": "missing x"}}
ANSWER = {"role": "assistant", "content": "x is not installed."}
TURN = [USER, REASONING, SAY, CALL_1, CALL_2, OUT_1, OUT_2, SEARCH, ANSWER]


def test_a_turn_reads_as_grouped_messages() -> None:
    messages = items_to_messages(TURN)
    assert [m.role for m in messages] == ["user", "assistant", "tool", "tool", "assistant"]
    assert messages[0].parts == [Text("Why does the build fail?")]
    # reasoning, text and both parallel calls of one response sit in one message, in order
    assert messages[1].parts == [
        Thinking("Look at the log.", signature="gAAA"),
        Text("Reading the log."),
        ToolCall("call_1", "read_file", '{"path": "build.log"}'),
        ToolCall("call_2", "run", '{"cmd": "make"}'),
    ]
    assert messages[2].parts == [ToolResult("call_1", "error: missing x")]
    assert messages[3].parts == [ToolResult("call_2", "make: *** [all] Error 1")]
    # the unknown item joins the assistant side as its JSON, then the answer
    assert '"web_search_call"' in messages[4].parts[0].text
    assert messages[4].parts[1] == Text("x is not installed.")
    assert messages[4].metadata[ITEMS_KEY] == [SEARCH, ANSWER]


def test_round_trip_gives_the_items_back_unchanged() -> None:
    items = copy.deepcopy(TURN)
    assert messages_to_items(items_to_messages(items)) == TURN
    assert items == TURN  # the input is not mutated


def test_returned_items_are_copies() -> None:
    messages = items_to_messages([CALL_1, OUT_1])
    back = messages_to_items(messages)
    back[0]["name"] = "changed"
    assert messages_to_items(messages)[0]["name"] == "read_file"


def test_developer_and_system_and_images() -> None:
    items = [{"role": "developer", "content": "Be brief."},
             {"type": "message", "role": "system", "content": "You are a reviewer."},
             {"type": "message", "role": "user", "content": [
                 {"type": "input_text", "text": "What is this?"},
                 {"type": "input_image", "image_url": "https://example.com/a.png",
                  "detail": "auto"},
                 {"type": "input_file", "file_id": "file-1"}]}]
    messages = items_to_messages(items)
    assert [m.role for m in messages] == ["system", "system", "user"]
    assert messages[0].metadata["source_role"] == "developer"
    assert messages[2].parts[1].url == "https://example.com/a.png"  # type: ignore[union-attr]
    assert messages[2].parts[2] == Text("[input_file]")
    assert messages_to_items(messages) == items


def test_changed_parts_become_fresh_items_and_kept_ones_stay() -> None:
    [assistant] = items_to_messages([REASONING, SAY, CALL_1])
    # compaction shortened the text; the reasoning and the call are as they were
    assistant.parts[1] = Text("Reading.")
    assert message_to_items(assistant) == [
        REASONING,
        {"type": "message", "role": "assistant", "content": "Reading."},
        CALL_1,
    ]


def test_a_new_message_is_written_fresh() -> None:
    messages = [
        Message.of("system", "summary of earlier turns"),
        Message.of("user", "go on"),
        Message("assistant", [Thinking("no id: dropped"), Text("ok"),
                              ToolCall("c9", "ls", "{}")]),
        Message("tool", [ToolResult("c9", "a b c", is_error=True)]),
        Message("user", [Text("one"), Text("two")]),
    ]
    assert messages_to_items(messages) == [
        {"type": "message", "role": "system", "content": "summary of earlier turns"},
        {"type": "message", "role": "user", "content": "go on"},
        {"type": "message", "role": "assistant", "content": "ok"},
        {"type": "function_call", "call_id": "c9", "name": "ls", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c9", "output": "a b c"},
        {"type": "message", "role": "user", "content": "one\n\ntwo"},
    ]


def test_pydantic_items_are_read_through_model_dump() -> None:
    class Item:
        def model_dump(self, **_: Any) -> dict[str, Any]:
            return dict(CALL_2)

    [message] = items_to_messages([Item()])
    assert message.parts == [ToolCall("call_2", "run", '{"cmd": "make"}')]


@pytest.mark.parametrize(("item", "problem"), [
    ("hello", "item 0 is str"),
    ({"role": "robot", "content": "x"}, "unknown role 'robot'"),
    ({"type": "function_call", "name": "f", "arguments": "{}"}, "no string 'call_id'"),
    ({"type": "function_call_output", "call_id": "c", "output": 3}, "output is int"),
    ({"role": "user", "content": 5}, "content is int"),
    ({"role": "user", "content": ["x"]}, "part 0 is str"),
])
def test_bad_items_raise_format_errors(item: Any, problem: str) -> None:
    with pytest.raises(FormatError, match=problem) as caught:
        items_to_messages([item], where="session 's'")
    assert caught.value.where == "session 's'"


def _turn(n: int) -> list[dict[str, Any]]:
    """A request, two parallel calls with large outputs, and an answer."""
    big = "\n".join(f"line {i} of file {n}: value = {i * n}" for i in range(120))
    return [
        {"role": "user", "content": f"Check module {n}."},
        {"type": "function_call", "call_id": f"call_{n}a", "name": "read_file",
         "arguments": f'{{"path": "m{n}.py"}}'},
        {"type": "function_call", "call_id": f"call_{n}b", "name": "run",
         "arguments": f'{{"cmd": "pytest m{n}"}}'},
        {"type": "function_call_output", "call_id": f"call_{n}a", "output": big},
        {"type": "function_call_output", "call_id": f"call_{n}b", "output": big[:2000]},
        {"role": "assistant", "content": f"Module {n} is fine."},
    ]


def test_compaction_keeps_items_valid_for_every_api() -> None:
    memory = ContextMemory(config=ContextConfig(max_tokens=3000, last_keep=4,
                                                large_payload=1500))
    compacted = 0
    for n in range(12):
        memory.extend(items_to_messages(_turn(n)))
        compacted += len(memory.compress_if_needed())
        items = messages_to_items(memory.messages())
        assert responses_errors(items) == []
        assert memory.token_count() <= memory.config.budget
        again = items_to_messages(items)
        assert RULES.openai_errors(to_openai(again)) == []
    assert compacted > 0
    # the latest turn keeps its request, calls and answer verbatim; a large output may be
    # offloaded, and then its preview names an id that gives the original back
    last = messages_to_items(memory.messages())[-6:]
    turn = _turn(11)
    assert [last[i] for i in (0, 1, 2, 5)] == [turn[i] for i in (0, 1, 2, 5)]
    assert [i["call_id"] for i in last[3:5]] == ["call_11a", "call_11b"]
    for got, sent in zip(last[3:5], turn[3:5]):
        if got != sent:
            offload_id = got["output"].split("id=")[1].split(";")[0]
            [original] = memory.reload(offload_id)
            assert original.parts == [ToolResult(sent["call_id"], sent["output"])]
