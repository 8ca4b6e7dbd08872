"""Export to OpenAI / Anthropic message lists, and round trips through the parsers."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from precis.formats._reader import read_document
from precis.formats.anthropic import AnthropicFormat, parse_anthropic_messages
from precis.formats.export import to_anthropic, to_openai, tool_input
from precis.model import (
    Conversation,
    Image,
    Message,
    Text,
    Thinking,
    ToolCall,
    ToolResult,
)


def _openai_parse(items: list[dict[str, Any]]) -> list[Message]:
    from precis.formats.openai import parse_openai_messages

    return parse_openai_messages(items, "test")


def assert_valid_anthropic(payload: dict[str, Any]) -> None:
    """Roles alternate, no empty turn, every tool_use answered in the next user turn
    (results first), every tool_result answers a tool_use of the turn before."""
    assert set(payload) <= {"system", "messages"}
    if "system" in payload:
        assert isinstance(payload["system"], str) and payload["system"]
    turns = payload["messages"]
    for index, turn in enumerate(turns):
        assert turn["role"] in ("user", "assistant")
        assert turn["content"], f"turn {index} is empty"
        if index:
            assert turn["role"] != turns[index - 1]["role"], f"turn {index} repeats a role"
        kinds = [b["type"] for b in turn["content"]]
        for block in turn["content"]:
            if block["type"] == "text":
                assert block["text"]
            if block["type"] == "tool_use":
                assert isinstance(block["input"], dict)
        if turn["role"] == "user":
            results = kinds.count("tool_result")
            assert kinds[:results] == ["tool_result"] * results
            before = turns[index - 1]["content"] if index else []
            asked = {b["id"] for b in before if b["type"] == "tool_use"}
            answered = {b["tool_use_id"] for b in turn["content"] if b["type"] == "tool_result"}
            assert answered <= asked
            assert asked <= answered, f"turn {index} leaves tool calls unanswered"


# -- to_openai -----------------------------------------------------------------------


def test_to_openai_shapes() -> None:
    messages = [
        Message("system", [Text("Be brief.")], metadata={"source_role": "developer"}),
        Message("user", [Text("Weather?"), Image(url="https://x/y.png")]),
        Message(
            "assistant",
            [
                Thinking("hmm", signature="sig"),
                Text("Checking."),
                ToolCall("c1", "weather", '{"city": "Oslo"}'),
                ToolCall("c2", "time", "{}"),
            ],
        ),
        Message(
            "tool",
            [ToolResult("c1", "5°C", name="weather"), ToolResult("c2", "noon", is_error=True)],
        ),
        Message("assistant", [Text("5°C at noon.")], name="bot"),
        Message("user", [Image(media_type="image/jpeg", data="QUJD")]),
    ]
    assert to_openai(messages) == [
        {"role": "developer", "content": "Be brief."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Weather?"},
                {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
            ],
        },
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city": "Oslo"}'},
                },
                {"id": "c2", "type": "function", "function": {"name": "time", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "5°C", "name": "weather"},
        {"role": "tool", "tool_call_id": "c2", "content": "noon"},
        {"role": "assistant", "content": "5°C at noon.", "name": "bot"},
        {
            "role": "user",
            "content": [{"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,QUJD"}}],
        },
    ]


def test_to_openai_tool_calls_only_and_mixed_tool_message() -> None:
    messages = [
        Message("assistant", [ToolCall("c", "f", "{}")]),
        Message("tool", [ToolResult("c", "r"), Text("and a note")]),
        Message("assistant", []),
    ]
    assert to_openai(messages) == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c", "content": "r"},
        {"role": "user", "content": "and a note"},
        {"role": "assistant", "content": None},
    ]


def test_to_openai_drops_thinking_only() -> None:
    out = to_openai([Message("assistant", [Thinking("secret"), Text("a"), Text("b")])])
    assert out == [
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        }
    ]


# -- to_anthropic --------------------------------------------------------------------


def test_to_anthropic_shapes() -> None:
    messages = [
        Message("system", [Text("Rule one.")]),
        Message("system", [Text("Rule two.")]),
        Message("user", [Text("Hi"), Image(url="data:image/png;base64,AAAA")]),
        Message("assistant", [Text("")]),  # empty text is left out: nothing to send
        Message(
            "assistant",
            [
                Thinking("plan", signature="s1"),
                Thinking("", signature="BLOB", redacted=True),
                ToolCall("t1", "f", '{"a": 1}'),
                ToolCall("t2", "g", "not json"),
            ],
        ),
        Message("tool", [ToolResult("t1", "one")]),
        Message("tool", [ToolResult("t2", "two", is_error=True)]),
        Message("user", [Text("thanks")]),
        Message("assistant", [Text("ok")]),
    ]
    assert to_anthropic(messages) == {
        "system": "Rule one.\n\nRule two.",
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Hi"},
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"},
                    },
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "plan", "signature": "s1"},
                    {"type": "redacted_thinking", "data": "BLOB"},
                    {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}},
                    {"type": "tool_use", "id": "t2", "name": "g", "input": {"_raw": "not json"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "one"},
                    {
                        "type": "tool_result",
                        "tool_use_id": "t2",
                        "content": "two",
                        "is_error": True,
                    },
                    {"type": "text", "text": "thanks"},
                ],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        ],
    }


def test_to_anthropic_without_system_omits_key_and_puts_results_first() -> None:
    out = to_anthropic(
        [
            Message("assistant", [ToolCall("t", "f", "{}")]),
            Message("user", [Text("wait, one more thing")]),
            Message("tool", [ToolResult("t", "done")]),
        ]
    )
    assert "system" not in out
    assert out["messages"][1]["content"] == [
        {"type": "tool_result", "tool_use_id": "t", "content": "done"},
        {"type": "text", "text": "wait, one more thing"},
    ]


def test_tool_input() -> None:
    assert tool_input('{"x": [1, 2]}') == {"x": [1, 2]}
    assert tool_input("") == {} and tool_input("  ") == {}
    assert tool_input("[1, 2]") == {"_raw": "[1, 2]"}
    assert tool_input('{"x": ') == {"_raw": '{"x": '}


def test_conversation_methods_delegate() -> None:
    conv = Conversation([Message.of("system", "S"), Message.of("user", "U")])
    assert conv.to_openai() == [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "U"},
    ]
    assert conv.to_anthropic() == {
        "system": "S",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "U"}]}],
    }


# -- round trips ---------------------------------------------------------------------

ANTHROPIC_REQUEST: dict[str, Any] = {
    "system": "You are helpful.",
    "messages": [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Look at this"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"},
                },
                {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Two calls.", "signature": "sig"},
                {"type": "text", "text": "Checking both."},
                {"type": "tool_use", "id": "t1", "name": "read", "input": {"path": "a.txt"}},
                {
                    "type": "tool_use",
                    "id": "t2",
                    "name": "read",
                    "input": {"path": "b.txt", "n": [1, 2]},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "alpha"},
                {
                    "type": "tool_result",
                    "tool_use_id": "t2",
                    "content": "missing",
                    "is_error": True,
                },
                {"type": "text", "text": "Why is b missing?"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "redacted_thinking", "data": "XYZ"},
                {"type": "text", "text": "It was deleted."},
            ],
        },
    ],
}


def test_anthropic_round_trip() -> None:
    request = copy.deepcopy(ANTHROPIC_REQUEST)
    (conv,) = AnthropicFormat().parse(read_document(request))
    exported = to_anthropic(conv.messages)
    assert exported == ANTHROPIC_REQUEST
    again = parse_anthropic_messages(exported["messages"], "again", exported["system"])
    assert again == conv.messages
    assert_valid_anthropic(exported)


@pytest.mark.data
def test_anthropic_round_trip_of_real_request(shared_data: Path) -> None:
    path = shared_data / "transcripts" / "anthropic" / "python-to-rust-port.messages.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    conv = parse_anthropic_messages(data["messages"], str(path))
    exported = to_anthropic(conv)
    assert_valid_anthropic(exported)
    assert parse_anthropic_messages(exported["messages"], "again") == conv
    assert len(exported["messages"]) == len(data["messages"])


OPENAI_MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You book flights."},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "Book this route"},
            {"type": "image_url", "image_url": {"url": "https://example.com/route.png"}},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        ],
    },
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "search", "arguments": '{"from": "JFK"}'},
            },
            {"id": "call_2", "type": "function", "function": {"name": "price", "arguments": "{}"}},
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "UA 12"},
    {"role": "tool", "tool_call_id": "call_2", "content": "$300", "name": "price"},
    {"role": "user", "content": "Cheaper?"},
    {"role": "assistant", "content": "No, $300 is the lowest fare."},
]


def test_openai_round_trip() -> None:
    conv = _openai_parse(copy.deepcopy(OPENAI_MESSAGES))
    exported = to_openai(conv)
    assert exported == OPENAI_MESSAGES
    assert _openai_parse(exported) == conv


def test_openai_to_anthropic_alternates() -> None:
    conv = _openai_parse(copy.deepcopy(OPENAI_MESSAGES))
    payload = to_anthropic(conv)
    assert_valid_anthropic(payload)
    assert payload["system"] == "You book flights."
    assert [t["role"] for t in payload["messages"]] == ["user", "assistant", "user", "assistant"]
    # The two tool messages and the next user text became one user turn, results first.
    assert [b["type"] for b in payload["messages"][2]["content"]] == [
        "tool_result",
        "tool_result",
        "text",
    ]
    back = parse_anthropic_messages(payload["messages"], "back", payload["system"])
    assert [p for m in back for p in m.tool_calls] == [p for m in conv for p in m.tool_calls]


@pytest.mark.data
def test_tau_bench_to_anthropic_alternates(shared_data: Path) -> None:
    path = shared_data / "transcripts" / "openai" / "tau-bench-gpt-4o-airline-first100.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    for number, item in enumerate(data):
        conv = _openai_parse(item["traj"])
        payload = to_anthropic(conv)
        assert_valid_anthropic(payload)
        calls = sum(len(m.tool_calls) for m in conv)
        uses = sum(b["type"] == "tool_use" for t in payload["messages"] for b in t["content"])
        assert uses == calls, f"trajectory {number}"
        # OpenAI -> precis -> OpenAI gives the same messages back.
        assert _openai_parse(to_openai(conv)) == conv, f"trajectory {number}"


def test_anthropic_export_leaves_out_what_the_api_rejects() -> None:
    """Unsigned thinking (from other providers), blank text, and trailing white space on a
    final assistant turn (a prefill) are all rejected by the Messages API."""
    from precis.model import Message, Text, Thinking

    payload = to_anthropic([
        Message.of("user", "q"),
        Message(role="assistant", parts=[Thinking("hmm"), Text("  "), Text("answer\n")]),
    ])
    assert payload["messages"][1] == {
        "role": "assistant", "content": [{"type": "text", "text": "answer"}]
    }
    signed = to_anthropic([
        Message.of("user", "q"),
        Message(role="assistant", parts=[Thinking("", signature="sig", redacted=True),
                                         Text("a")]),
    ])
    assert signed["messages"][1]["content"][0] == {"type": "redacted_thinking", "data": "sig"}


def test_openai_export_cleans_message_names() -> None:
    from precis.model import Message

    out = to_openai([Message.of("user", "hi", name="Alice Smith")])
    assert out == [{"role": "user", "content": "hi", "name": "Alice_Smith"}]
