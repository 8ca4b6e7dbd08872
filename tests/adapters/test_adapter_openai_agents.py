"""PrecisSession: the OpenAI Agents SDK Session protocol over a ContextMemory."""

from __future__ import annotations

import asyncio
import copy
import importlib
import sys
from typing import Any

import pytest
from _adapter_rules import api_rules, responses_errors

from precis.adapters.responses import items_to_messages
from precis.errors import ConfigError, MissingDependencyError
from precis.formats.export import to_openai
from precis.runtime import CompressionEvent, ContextConfig, ContextMemory

agents = pytest.importorskip("agents")

from precis.adapters.openai_agents import PrecisSession  # noqa: E402

RULES = api_rules()

CALL = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read_file",
        "arguments": '{"path": "a.py"}', "status": "completed"}
CALL_B = {"type": "function_call", "call_id": "call_2", "name": "read_file",
          "arguments": '{"path": "b.py"}'}
OUT = {"type": "function_call_output", "call_id": "call_1", "output": "print('a')"}
OUT_B = {"type": "function_call_output", "call_id": "call_2", "output": "print('b')"}
TURN: list[dict[str, Any]] = [
    {"role": "user", "content": "Show a.py and b.py."},
    CALL, CALL_B, OUT, OUT_B,
    {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "Both print a letter.", "annotations": []}]},
]


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def test_it_is_a_session_of_the_sdk() -> None:
    session = PrecisSession(session_id="s1")
    assert isinstance(session, agents.memory.Session)
    assert session.session_id == "s1"
    assert session.memory.session == "s1"


def test_items_come_back_as_they_were_added() -> None:
    session = PrecisSession(max_tokens=10_000)
    run(session.add_items(copy.deepcopy(TURN[:3])))
    run(session.add_items(copy.deepcopy(TURN[3:])))
    assert run(session.get_items()) == TURN
    assert len(session.memory.original()) == 5  # user, calls, two results, answer


def test_limit_keeps_the_latest_items_without_orphan_results() -> None:
    session = PrecisSession(max_tokens=10_000)
    run(session.add_items(copy.deepcopy(TURN)))
    assert run(session.get_items(limit=2)) == TURN[-2:][1:]  # OUT_B lost its call
    assert run(session.get_items(limit=4)) == [CALL_B, OUT_B, TURN[-1]]  # OUT: call_1 cut
    assert run(session.get_items(limit=5)) == TURN[-5:]
    assert run(session.get_items(limit=0)) == []
    limited = PrecisSession(max_tokens=10_000,
                            session_settings=agents.memory.SessionSettings(limit=1))
    run(limited.add_items(copy.deepcopy(TURN)))
    assert run(limited.get_items()) == TURN[-1:]


def test_pop_item_removes_the_latest_item_only() -> None:
    session = PrecisSession(max_tokens=10_000)
    run(session.add_items(copy.deepcopy(TURN)))
    assert run(session.pop_item()) == TURN[-1]
    assert run(session.pop_item()) == OUT_B
    assert run(session.pop_item()) == OUT
    # the next item sits in a message with another one: that one stays
    assert run(session.pop_item()) == CALL_B
    assert session.memory.messages()[-1].tool_calls[0].id == "call_1"
    # get_items never hands out an unanswered call: a stub answers it
    items = run(session.get_items())
    assert responses_errors(items) == []
    assert items[:2] == TURN[:2]
    assert items[2]["call_id"] == "call_1"
    assert session.memory.messages()[-1].tool_calls  # the stub is not stored
    assert run(session.pop_item()) == CALL
    assert run(session.pop_item()) == TURN[0]
    assert run(session.pop_item()) is None


def test_clear_session_forgets_everything() -> None:
    session = PrecisSession(max_tokens=10_000)
    run(session.add_items(copy.deepcopy(TURN)))
    run(session.clear_session())
    assert run(session.get_items()) == []
    assert session.memory.original() == []


def test_memory_and_max_tokens_are_exclusive() -> None:
    with pytest.raises(ConfigError):
        PrecisSession(ContextMemory(1000), max_tokens=1000)


def _turn(n: int) -> list[dict[str, Any]]:
    big = "\n".join(f"row {i} of table {n}: total = {i * 7 + n}" for i in range(150))
    return [
        {"role": "user", "content": f"Sum table {n}."},
        {"type": "reasoning", "id": f"rs_{n}", "summary": []},
        {"type": "function_call", "call_id": f"c{n}a", "name": "query",
         "arguments": f'{{"table": {n}}}'},
        {"type": "function_call", "call_id": f"c{n}b", "name": "query",
         "arguments": f'{{"table": {n}, "page": 2}}'},
        {"type": "function_call_output", "call_id": f"c{n}a", "output": big},
        {"type": "function_call_output", "call_id": f"c{n}b", "output": big[:3000]},
        {"type": "web_search_call", "id": f"ws_{n}", "status": "completed"},
        {"role": "assistant", "content": f"Table {n} sums to {n * 1000}."},
    ]


def test_compaction_through_the_session_keeps_pairs_valid() -> None:
    events: list[CompressionEvent] = []
    memory = ContextMemory(config=ContextConfig(max_tokens=4000, last_keep=4,
                                                large_payload=2000))
    session = PrecisSession(memory, on_compress=events.extend)
    for n in range(10):
        items = run(session.get_items())  # what the SDK sends before the new turn
        assert responses_errors(items) == []
        assert RULES.openai_errors(to_openai(items_to_messages(items))) == [] or not items
        assert memory.token_count() <= memory.config.budget
        run(session.add_items(_turn(n)))
    items = run(session.get_items())
    assert responses_errors(items) == []
    assert events and session.last_events == events[-len(session.last_events):]
    assert len(memory.original()) == 10 * 5  # user, calls, 2 results, answer
    # the unknown item of the latest turn is passed back unchanged
    assert {"type": "web_search_call", "id": "ws_9", "status": "completed"} in items


def test_without_the_sdk_the_import_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "agents", None)  # "import agents" now fails
    monkeypatch.delitem(sys.modules, "precis.adapters.openai_agents")
    with pytest.raises(MissingDependencyError) as caught:
        importlib.import_module("precis.adapters.openai_agents")
    assert "pip install 'precis[openai-agents]'" in str(caught.value)
    assert caught.value.package == "openai-agents"
