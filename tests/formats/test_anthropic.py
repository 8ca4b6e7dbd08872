"""Anthropic Messages: request objects, bare message lists, errors, detection."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from precis.errors import FormatError, PrecisError
from precis.formats import detect_format
from precis.formats._reader import read_document
from precis.formats.anthropic import AnthropicFormat, parse_anthropic_messages
from precis.formats.export import to_anthropic
from precis.model import Image, Message, Text, Thinking, ToolCall, ToolResult

FMT = AnthropicFormat()


def _parse(source: Any) -> list[Message]:
    doc = read_document(source)
    (conv,) = FMT.parse(doc)
    return conv.messages


# -- the hand-written request --------------------------------------------------------


def test_request_object_parts_in_order(fixtures: Path) -> None:
    doc = read_document(fixtures / "anthropic" / "request.json")
    (conv,) = FMT.parse(doc)
    m = conv.messages
    assert [x.role for x in m] == [
        "system", "user", "assistant", "tool", "user",
        "assistant", "tool", "assistant", "user", "assistant",
    ]  # fmt: skip
    assert m[0].parts == [
        Text("You are a careful travel assistant."),
        Text("Answer in English."),
    ]
    assert m[1].parts == [
        Text("What's the weather in Paris? Here is a photo."),
        Image(media_type="image/png", data="iVBORw0KGgo="),
    ]
    assert m[2].parts == [
        Thinking("The user wants the weather; call the tool.", signature="sig-abc"),
        Text("Let me check."),
        ToolCall("toolu_01", "get_weather", '{"city": "Paris", "unit": "°C"}'),
    ]
    # The mixed user message is split: tool results first, then the text, both marked.
    assert m[3].parts == [ToolResult("toolu_01", "18°C\ncloudy", name="get_weather")]
    assert m[4].parts == [Text("And in Berlin?")]
    assert m[3].metadata["split_from"] == 2
    assert m[4].metadata["split_from"] == 2
    assert m[5].parts == [
        Thinking("", signature="ENCRYPTED-BLOB", redacted=True),
        ToolCall("toolu_02", "get_weather", '{"city": "Berlin"}'),
    ]
    assert m[6].parts == [
        ToolResult("toolu_02", "service unavailable", is_error=True, name="get_weather")
    ]
    assert "split_from" not in m[6].metadata
    assert m[7].parts == [Text("Paris is 18°C and cloudy; the Berlin weather service is down.")]
    assert m[8].parts == [
        Text("[document: notes.txt]\nTrip on 3 May."),
        Image(url="https://example.com/map.png"),
        Text("Plan my trip."),
    ]
    assert conv.metadata["model"] == "claude-sonnet-4-5"
    assert conv.metadata["max_tokens"] == 1024
    assert conv.metadata["tools"][0]["name"] == "get_weather"
    assert "messages" not in conv.metadata and "system" not in conv.metadata


def test_role_tool_result_messages_become_tool_messages(fixtures: Path) -> None:
    m = _parse(fixtures / "anthropic" / "tool_result_role.json")
    assert [x.role for x in m] == ["user", "assistant", "tool", "assistant"]
    assert m[2].parts == [ToolResult("toolu_A", "3 /tmp/a.txt", is_error=False, name="bash")]
    assert m[2].metadata["source_role"] == "tool_result"
    assert m[1].tool_calls[0].arguments == '{"commands": "wc -l /tmp/a.txt"}'


def test_system_string_and_string_content() -> None:
    m = parse_anthropic_messages(
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
        "x.json",
        system="Be brief.",
    )
    assert m == [
        Message("system", [Text("Be brief.")]),
        Message("user", [Text("hi")]),
        Message("assistant", [Text("hello")]),
    ]


def test_non_ascii_tool_input_kept_readable() -> None:
    m = parse_anthropic_messages(
        [
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "t1", "name": "搜索", "input": {"q": "北京"}}
                ],
            }
        ],
        "x",
    )
    assert m[0].parts == [ToolCall("t1", "搜索", '{"q": "北京"}')]


def test_tool_result_text_then_result_keeps_order() -> None:
    m = parse_anthropic_messages(
        [
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f"}]},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "before"},
                    {"type": "tool_result", "tool_use_id": "t", "content": "r"},
                    {"type": "text", "text": "after"},
                ],
            },
        ],
        "x",
    )
    assert [(x.role, x.parts) for x in m[1:]] == [
        ("user", [Text("before")]),
        ("tool", [ToolResult("t", "r", name="f")]),
        ("user", [Text("after")]),
    ]
    assert m[0].parts == [ToolCall("t", "f", "{}")]  # no input -> empty object


def test_unknown_block_with_text_is_read_as_text() -> None:
    m = parse_anthropic_messages(
        [{"role": "user", "content": [{"type": "future_block", "text": "still readable"}]}], "x"
    )
    assert m[0].parts == [Text("still readable")]


def test_message_fields_go_to_metadata_and_message() -> None:
    m = parse_anthropic_messages(
        [
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-x",
                "content": [{"type": "text", "text": "ok"}],
                "stop_reason": "end_turn",
            }
        ],
        "x",
    )
    assert m[0].id == "msg_1"
    assert m[0].metadata == {"type": "message", "model": "claude-x", "stop_reason": "end_turn"}


# -- errors --------------------------------------------------------------------------


def _error(items: Any, system: Any = None) -> str:
    with pytest.raises(FormatError) as info:
        parse_anthropic_messages(items, "conv.json", system)
    assert info.value.where == "conv.json"
    return info.value.message


def test_unknown_role_names_its_index() -> None:
    message = _error([{"role": "user", "content": "a"}, {"role": "robot", "content": "b"}])
    assert "message 1" in message and "'robot'" in message


def test_missing_role_and_non_object_message() -> None:
    assert "message 0 has no role" in _error([{"content": "x"}])
    assert "message 0 is a string" in _error(["hello"])


@pytest.mark.parametrize("content", [5, None, 3.5, True])
def test_content_not_string_or_list(content: Any) -> None:
    message = _error([{"role": "user", "content": content}])
    assert message.startswith("message 0 has content")


def test_tool_use_without_id_names_message_and_block() -> None:
    message = _error(
        [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "calling"},
                    {"type": "tool_use", "name": "f", "input": {}},
                ],
            },
        ]
    )
    assert message.startswith("message 1 block 1")
    assert "'id'" in message


def test_unknown_block_type_without_text() -> None:
    message = _error([{"role": "user", "content": [{"type": "widget", "size": 3}]}])
    assert message.startswith("message 0 block 0 has unknown type 'widget'")


def test_tool_use_in_user_and_tool_result_in_assistant() -> None:
    assert "tool_use in a user message" in _error(
        [{"role": "user", "content": [{"type": "tool_use", "id": "t", "name": "f"}]}]
    )
    assert "tool_result in an assistant message" in _error(
        [{"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "t"}]}]
    )


def test_bad_tool_result_fields() -> None:
    assert "'tool_use_id'" in _error([{"role": "user", "content": [{"type": "tool_result"}]}])
    bad_error = [
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t", "is_error": "yes"}],
        }
    ]
    assert "is_error" in _error(bad_error)
    bad_content = [
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": 7}]}
    ]
    assert "tool_result content is a number" in _error(bad_content)


def test_bad_system_and_bad_messages_container() -> None:
    assert "'system' is a number" in _error([], system=3)
    assert "system block 0" in _error([], system=[{"type": "image"}])
    assert "messages is an object" in _error({"role": "user"})  # type: ignore[arg-type]


def test_tool_input_that_is_not_json_data() -> None:
    item = {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {1j}}],
    }
    assert "not JSON data" in _error([item])


def test_parse_rejects_wrong_top_level(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"messages": "nope"}))
    with pytest.raises(FormatError, match="'messages' is a string"):
        FMT.parse(read_document(path))


# -- property: nothing but PrecisError escapes ---------------------------------------

_scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
)
_json = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
_block_types = st.sampled_from(
    ["text", "image", "tool_use", "tool_result", "thinking", "redacted_thinking",
     "document", "search_result", "server_tool_use", "web_search_tool_result", "odd"]
)  # fmt: skip
_short = st.text(min_size=1, max_size=4)


def _mostly(good: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``good`` most of the time, any JSON value now and then."""
    return st.integers(0, 9).flatmap(lambda n: _json if n == 9 else good)


_source = st.fixed_dictionaries(
    {"type": st.sampled_from(["base64", "url", "file", "text", "content", "odd"])},
    optional={"data": _short | _json, "url": _short, "media_type": _short, "content": _json},
)
_result_content = st.lists(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["text", "image", "document", "odd"]) | _json},
        optional={"text": _short | _json, "title": _short | _json, "url": _short},
    )
    | _json,
    max_size=3,
)
# Blocks shaped like the real ones, with each field present, missing or of a wrong type.
_blocks = st.fixed_dictionaries(
    {"type": _mostly(_block_types)},
    optional={
        "text": _mostly(_short),
        "id": _mostly(_short),
        "name": _mostly(_short),
        "input": _mostly(st.dictionaries(_short, _json, max_size=2)),
        "tool_use_id": _mostly(_short),
        "content": _mostly(_short | _result_content),
        "is_error": _mostly(st.booleans()),
        "thinking": _mostly(_short),
        "signature": _mostly(_short),
        "data": _mostly(_short),
        "source": _mostly(_source),
        "title": _mostly(_short),
    },
)
_roles = st.sampled_from(["user", "assistant", "system", "tool_result", "tool"])
_messages = st.fixed_dictionaries(
    {"role": _mostly(_roles)},
    optional={"content": _mostly(st.lists(_blocks, max_size=4) | _short)},
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_mostly(_messages), max_size=5), st.none() | _short | _json)
def test_parse_never_raises_anything_but_precis_errors(items: list[Any], system: Any) -> None:
    try:
        result = parse_anthropic_messages(items, "prop", system)
    except PrecisError:
        return
    assert all(isinstance(m, Message) for m in result)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_mostly(_messages), max_size=6))
def test_whatever_parses_exports_with_alternating_roles(items: list[Any]) -> None:
    try:
        messages = parse_anthropic_messages(items, "prop")
    except PrecisError:
        return
    payload = to_anthropic(messages)
    roles = [turn["role"] for turn in payload["messages"]]
    assert all(a != b for a, b in pairwise(roles))
    assert all(turn["content"] for turn in payload["messages"])
    again = parse_anthropic_messages(payload["messages"], "again", payload.get("system"))
    calls = [c for m in messages for c in m.tool_calls]
    assert [c.id for m in again for c in m.tool_calls] == [c.id for c in calls]


# Well-formed agent turns: assistant text + tool_use, then the user's tool_result.
_tool_turns = st.lists(
    st.tuples(st.text("abcdef0123", min_size=1, max_size=6), _short, st.booleans()),
    min_size=1, max_size=4, unique_by=lambda t: t[0],
).map(lambda pairs: [
    turn
    for n, (cid, output, failed) in enumerate(pairs)
    for turn in (
        {"role": "assistant", "content": [
            {"type": "text", "text": f"step {n}"},
            {"type": "tool_use", "id": f"toolu_{cid}", "name": "run", "input": {"n": n}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{cid}", "content": output,
             **({"is_error": True} if failed else {})}]},
    )
])


@settings(max_examples=100)
@given(_tool_turns)
def test_tool_turns_round_trip(items: list[Any]) -> None:
    messages = parse_anthropic_messages(items, "prop")
    calls = [c for m in messages for c in m.tool_calls]
    results = [r for m in messages for r in m.tool_results]
    assert [c.id for c in calls] == [t["content"][1]["id"] for t in items[::2]]
    assert [r.call_id for r in results] == [c.id for c in calls]
    assert [r.is_error for r in results] == [
        t["content"][0].get("is_error", False) for t in items[1::2]
    ]
    payload = to_anthropic(messages)
    assert payload["messages"] == items
    again = parse_anthropic_messages(payload["messages"], "again")
    assert [c.id for m in again for c in m.tool_calls] == [c.id for c in calls]


@settings(max_examples=100)
@given(_json)
def test_arbitrary_top_level_value(value: Any) -> None:
    try:
        result = parse_anthropic_messages(value, "prop")
    except PrecisError:
        return
    assert isinstance(value, list)
    assert all(isinstance(m, Message) for m in result)


# -- detection -----------------------------------------------------------------------


def _sniff(value: Any) -> float:
    return FMT.sniff(read_document(value))


def test_sniff_anthropic_shapes(fixtures: Path) -> None:
    assert FMT.sniff(read_document(fixtures / "anthropic" / "request.json")) >= 0.9
    assert FMT.sniff(read_document(fixtures / "anthropic" / "tool_result_role.json")) >= 0.9
    assert _sniff({"system": "Be brief.", "messages": [{"role": "user", "content": "hi"}]}) >= 0.9


def test_sniff_leaves_openai_lists_to_openai() -> None:
    plain = [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]
    assert 0 < _sniff(plain) <= 0.3
    assert _sniff({"messages": plain, "model": "gpt-4o"}) <= 0.3
    with_calls = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f"}}],
        },
        {"role": "tool", "tool_call_id": "c", "content": "r"},
    ]
    assert _sniff(with_calls) <= 0.1


def test_sniff_not_messages() -> None:
    assert _sniff([1, 2, 3]) == 0
    assert _sniff({"results": []}) == 0
    assert _sniff([{"type": "user", "message": {"role": "user", "content": "x"}}]) == 0


# -- real data -----------------------------------------------------------------------


@pytest.mark.data
def test_real_messages_request(shared_data: Path) -> None:
    path = shared_data / "transcripts" / "anthropic" / "python-to-rust-port.messages.json"
    doc = read_document(path)
    assert FMT.sniff(doc) >= 0.9
    (conv,) = FMT.parse(doc)
    roles = [m.role for m in conv]
    # 78 source messages, none mixing tool results and text: 39 assistant, 37 tool-result
    # user messages (two holding two results each), 2 user text messages.
    assert len(conv) == 78
    assert roles.count("assistant") == 39 and roles.count("tool") == 37
    assert roles.count("user") == 2
    assert sum(len(m.tool_results) for m in conv) == 39
    assert conv[0].text.startswith("Port this Python project to Rust.")
    call = conv[1].tool_calls[0]
    assert (call.id, call.name) == ("toolu_01PKfvC84zTHnFnxjuoazGo5", "Task")
    result = conv[2].tool_results[0]
    assert result.call_id == call.id and result.name == "Task"
    assert result.content.startswith("Excellent! Now I have a complete picture.")
    assert conv.metadata["source_session"] == "c7d3d95c-57f0-4359-8f4b-926a9bef5a3f"


@pytest.mark.data
def test_real_bashkit_traces(shared_data: Path) -> None:
    path = shared_data / "transcripts" / "anthropic" / "bashkit-eval-claude-opus-4-7.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    tool_messages = 0
    for number, result in enumerate(data["results"]):
        messages = parse_anthropic_messages(result["trace"]["messages"], f"results[{number}]")
        tool_messages += sum(m.role == "tool" for m in messages)
        calls = {c.id for m in messages for c in m.tool_calls}
        assert all(r.call_id in calls for m in messages for r in m.tool_results)
    assert tool_messages == 175  # one per role "tool_result" message in the file
    first = parse_anthropic_messages(data["results"][0]["trace"]["messages"], "results[0]")
    assert [m.role for m in first] == ["user", "assistant", "tool", "assistant"]
    assert first[1].tool_calls[0].id == "toolu_01KtcaMxrVPwJaXnXdaSp8jK"
    (res,) = first[2].tool_results
    assert res.call_id == "toolu_01KtcaMxrVPwJaXnXdaSp8jK" and res.name == "bash"
    assert res.content.startswith("/home/eval/myproject:") and not res.is_error


def test_detected_among_all_formats(fixtures: Path) -> None:
    for name in ("request.json", "tool_result_role.json"):
        assert detect_format(read_document(fixtures / "anthropic" / name)).name == "anthropic"
    plain = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    assert detect_format(read_document(plain)).name == "openai"


@pytest.mark.data
def test_real_request_detected(shared_data: Path) -> None:
    path = shared_data / "transcripts" / "anthropic" / "python-to-rust-port.messages.json"
    assert detect_format(read_document(path)).name == "anthropic"


def test_a_tool_call_inside_a_system_message_survives_export() -> None:
    # found by the property test above: the system text went to "system" and the call was lost
    items = [{"role": "system", "content": [{"type": "text", "text": "Be brief."},
                                            {"type": "server_tool_use", "id": "t1",
                                             "name": "web_search"}]}]
    payload = to_anthropic(parse_anthropic_messages(items, "prop"))
    assert payload["system"] == "Be brief."
    again = parse_anthropic_messages(payload["messages"], "again", payload["system"])
    assert [c.id for m in again for c in m.tool_calls] == ["t1"]


def test_openai_tool_calls_in_an_anthropic_list_are_calls() -> None:
    """The fault campaign's find: `--format anthropic` on a list with OpenAI tool_calls
    left the calls in metadata (their results became orphans, the calls were lost)."""
    import precis

    doc = [{"role": "user", "content": "list the files"},
           {"role": "assistant", "content": "", "tool_calls": [
               {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
           {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
           {"role": "assistant", "content": "One file: a.py."}]
    conv = precis.load(doc, format="anthropic")
    assert [c.id for m in conv for c in m.tool_calls] == ["c1"]
    assert conv.warnings == [] and "tool_calls" not in conv[1].metadata
    with pytest.raises(precis.FormatError, match="function_call"):
        precis.load([{"role": "user", "content": "x"}, {"role": "assistant", "content": "",
                     "function_call": {"name": "f", "arguments": "{}"}}], format="anthropic")
