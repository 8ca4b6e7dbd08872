"""PrecisChatMessageHistory and before_model: LangChain messages over a ContextMemory."""

from __future__ import annotations

import importlib
import json
import sys
from typing import Any

import pytest
from _adapter_rules import api_rules

from precis.errors import ConfigError, FormatError, MissingDependencyError
from precis.model import Message, Text, Thinking, ToolCall, ToolResult
from precis.runtime import CompressionEvent, ContextConfig, ContextMemory

pytest.importorskip("langchain_core")

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)

from precis.adapters.langchain import (
    PrecisChatMessageHistory,
    before_model,
    from_langchain,
    to_langchain,
)

RULES = api_rules()


def conversation() -> list[BaseMessage]:
    return [
        SystemMessage("You review code."),
        HumanMessage("Show a.py and b.py.", id="h1"),
        AIMessage(content="Reading both.", id="ai1", response_metadata={"model": "m"},
                  tool_calls=[{"name": "read", "args": {"path": "a.py"}, "id": "c1"},
                              {"name": "read", "args": {"path": "b.py"}, "id": "c2"}]),
        ToolMessage("print('a')", tool_call_id="c1", name="read"),
        ToolMessage("no such file", tool_call_id="c2", status="error"),
        AIMessage("a.py prints a letter; b.py is missing."),
    ]


def test_messages_read_as_precis_parts() -> None:
    messages = from_langchain(conversation())
    assert [m.role for m in messages] == ["system", "user", "assistant", "tool", "tool",
                                          "assistant"]
    assert messages[1].id == "h1"
    assert messages[2].parts == [Text("Reading both."),
                                 ToolCall("c1", "read", '{"path": "a.py"}'),
                                 ToolCall("c2", "read", '{"path": "b.py"}')]
    assert messages[3].parts == [ToolResult("c1", "print('a')", name="read")]
    assert messages[4].parts == [ToolResult("c2", "no such file", is_error=True)]


def test_round_trip_gives_equal_messages() -> None:
    original = conversation()
    back = to_langchain(from_langchain(original))
    assert back == original
    assert [type(m) for m in back] == [type(m) for m in original]


def test_changed_and_new_messages_are_built_from_parts() -> None:
    messages = [
        Message.of("system", "summary"),
        Message("assistant", [Thinking("hidden"), Text("calling"),
                              ToolCall("k1", "grep", '{"q": "x"}'),
                              ToolCall("k2", "raw", "not json")], id="m7"),
        Message("tool", [ToolResult("k1", "3 hits", is_error=True, name="grep")]),
        Message("tool", [ToolResult("k2", "ok")]),
        Message.of("user", "thanks"),
    ]
    assert to_langchain(messages) == [
        SystemMessage("summary"),
        AIMessage(content="calling", id="m7", tool_calls=[
            {"name": "grep", "args": {"q": "x"}, "id": "k1"},
            {"name": "raw", "args": {"input": "not json"}, "id": "k2"}]),
        ToolMessage("3 hits", tool_call_id="k1", name="grep", status="error"),
        ToolMessage("ok", tool_call_id="k2"),
        HumanMessage("thanks"),
    ]
    [kept] = from_langchain([HumanMessage("long words", id="x")])
    kept.parts = [Text("short")]  # what compaction does to a message it cuts
    assert to_langchain([kept]) == [HumanMessage("short", id="x")]


def test_non_messages_raise_format_errors() -> None:
    with pytest.raises(FormatError, match="message 1 is dict"):
        from_langchain([HumanMessage("hi"), {"role": "user"}])


def test_the_history_is_a_langchain_history() -> None:
    history = PrecisChatMessageHistory(max_tokens=10_000)
    assert isinstance(history, BaseChatMessageHistory)
    history.add_user_message("hello")
    history.add_ai_message("hi there")
    history.add_messages(conversation()[1:])
    assert history.messages == [HumanMessage("hello"), AIMessage("hi there"),
                                *conversation()[1:]]
    history.clear()
    assert history.messages == []
    assert history.memory.original() == []
    with pytest.raises(ConfigError):
        PrecisChatMessageHistory(ContextMemory(1000), max_tokens=1000)


def _round(n: int) -> list[BaseMessage]:
    big = "\n".join(f"row {i} of table {n}: total = {i * 7 + n}" for i in range(150))
    return [
        HumanMessage(f"Sum table {n}."),
        AIMessage(content="", tool_calls=[
            {"name": "query", "args": {"table": n}, "id": f"q{n}a"},
            {"name": "query", "args": {"table": n, "page": 2}, "id": f"q{n}b"}]),
        ToolMessage(big, tool_call_id=f"q{n}a"),
        ToolMessage(big[:3000], tool_call_id=f"q{n}b"),
        AIMessage(f"Table {n} sums to {n * 1000}."),
    ]


def _openai(messages: list[BaseMessage]) -> list[dict[str, Any]]:
    """LangChain messages as OpenAI chat messages (written here, not by precis)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if isinstance(m, ToolMessage):
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
        elif isinstance(m, AIMessage):
            item: dict[str, Any] = {"role": "assistant", "content": m.content or None}
            if m.tool_calls:
                item["tool_calls"] = [{"id": c["id"], "type": "function", "function": {
                    "name": c["name"], "arguments": json.dumps(c["args"])}}
                    for c in m.tool_calls]
            out.append(item)
        else:
            role = {"system": "system", "human": "user"}[m.type]
            out.append({"role": role, "content": m.content})
    return out


def test_compaction_through_the_history_keeps_tool_pairs_valid() -> None:
    events: list[CompressionEvent] = []
    memory = ContextMemory(config=ContextConfig(max_tokens=4000, last_keep=4,
                                                large_payload=2000))
    history = PrecisChatMessageHistory(memory, on_compress=events.extend)
    history.add_message(SystemMessage("You sum tables."))
    for n in range(10):
        history.add_messages(_round(n))
        sent = history.messages
        assert RULES.openai_errors(_openai(sent)) == []
        assert memory.token_count() <= memory.config.budget
        assert isinstance(sent[0], SystemMessage)
    assert events
    assert sent[-1] == _round(9)[-1]  # the latest reply is never touched
    assert len(memory.original()) == 1 + 10 * 5


def test_before_model_adds_only_new_messages_and_compacts() -> None:
    memory = ContextMemory(config=ContextConfig(max_tokens=4000, last_keep=4,
                                                large_payload=2000))
    state: list[BaseMessage] = [SystemMessage("You sum tables.")]
    for n in range(10):
        state.extend(_round(n))
        sent = before_model(state, memory)
        assert len(memory.original()) == len(state)  # each message added once
        assert RULES.openai_errors(_openai(sent)) == []
        assert memory.token_count() <= memory.config.budget
    assert memory.events()
    assert len(sent) < len(state)
    # a list that got shorter (messages removed by the loop) adds nothing
    before_model(state[:3], memory)
    assert len(memory.original()) == len(state)


def test_remove_markers_are_skipped() -> None:
    messages = from_langchain([HumanMessage("hi"), RemoveMessage(id="x"), AIMessage("yo")])
    assert [m.role for m in messages] == ["user", "assistant"]


def test_without_langchain_the_import_names_the_extra(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langchain_core", None)
    monkeypatch.delitem(sys.modules, "precis.adapters.langchain")
    with pytest.raises(MissingDependencyError) as caught:
        importlib.import_module("precis.adapters.langchain")
    assert "pip install 'precis[langchain]'" in str(caught.value)
