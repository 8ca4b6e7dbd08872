"""ContextMemory: thresholds, progressive strategies until it fits, valid tool pairs,
offload + reload (also across a restart), events, persistence, input shapes."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from precis import ConfigError, FormatError, Message, NotFoundError, load
from precis.memory.store import open_store
from precis.runtime import (
    RELOAD_TOOL_ANTHROPIC,
    RELOAD_TOOL_OPENAI,
    ContextConfig,
    ContextMemory,
    handle_tool_call,
)

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "compact"


def _rules() -> ModuleType:
    path = Path(__file__).resolve().parents[1] / "compact" / "_api_rules.py"
    spec = importlib.util.spec_from_file_location("_api_rules_runtime", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RULES = _rules()


def _agent_turns(n: int, payload: int = 3000) -> list[dict[str, object]]:
    """A synthetic agent session: each round a request, tool calls with large outputs, an
    answer; every round mentions its own file path (an exact fact)."""
    out: list[dict[str, object]] = [{"role": "system", "content": "You are a coding agent."}]
    for r in range(n):
        out.append({"role": "user", "content": f"Round {r}: check src/module_{r}.py please."})
        for c in range(3):
            cid = f"call_{r}_{c}"
            out.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": cid, "type": "function", "function": {
                    "name": "run",
                    "arguments": json.dumps({"command": f"cat src/module_{r}.py"})}}]})
            out.append({"role": "tool", "tool_call_id": cid,
                        "content": f"# module {r} part {c}\n" + ("x = 1\n" * (payload // 6))})
        out.append({"role": "assistant", "content": f"src/module_{r}.py looks fine; next."})
    return out


def test_config_defaults_follow_seed_004_and_are_checked() -> None:
    c = ContextConfig()
    assert (c.msg_threshold, c.max_tokens, c.token_ratio, c.last_keep, c.large_payload,
            c.preview_chars, c.min_consecutive_tool, c.current_round_ratio) == (
        100, 131072, 0.75, 50, 5120, 200, 6, 0.3)
    assert c.budget == 98304
    for bad in ({"token_ratio": 1.5}, {"token_ratio": float("nan")}, {"last_keep": 0},
                {"msg_threshold": True}, {"max_tokens": 50}):
        with pytest.raises(ConfigError):
            ContextConfig(**bad)  # type: ignore[arg-type]
    assert ContextMemory(max_tokens=8000).config.max_tokens == 8000


def test_a_long_session_never_exceeds_the_budget_and_stays_valid() -> None:
    memory = ContextMemory(config=ContextConfig(max_tokens=6000, msg_threshold=60,
                                                last_keep=10, large_payload=1500))
    kinds: set[str] = set()
    for item in _agent_turns(30):
        memory.add(item)
        if item["role"] == "tool" or item["role"] == "user":
            events = memory.compress_if_needed()
            kinds.update(e.strategy for e in events)
            assert memory.token_count() <= memory.config.budget
            assert len(memory.messages()) < memory.config.msg_threshold
    assert len(memory.original()) == 1 + 30 * 8  # the full history is never cut
    assert kinds  # something ran
    messages = memory.messages()
    assert messages[0].role == "system"
    assert RULES.openai_errors(memory.to_openai()) == []
    assert RULES.anthropic_errors(memory.to_anthropic()) == []
    # every event is recorded with before / after figures
    for e in memory.events():
        assert e.tokens_after <= e.tokens_before or e.strategy == "fit"
        assert e.messages_before >= 1 and e.elapsed_ms >= 0


def test_strategies_run_in_order_until_it_fits() -> None:
    memory = ContextMemory(config=ContextConfig(max_tokens=3000, msg_threshold=200,
                                                last_keep=4, large_payload=1000,
                                                min_consecutive_tool=4))
    for item in _agent_turns(6):
        memory.add(item)
    events = memory.compress_if_needed()
    order = [e.strategy for e in events]
    from precis.runtime import STRATEGIES

    assert order == sorted(order, key=STRATEGIES.index)  # lightest first, never back
    assert memory.token_count() <= memory.config.budget
    assert memory.compress_if_needed() == []  # fits now: nothing more to do


def test_offloaded_content_reloads_through_the_tool(new_store) -> None:  # type: ignore[no-untyped-def]
    location = new_store("m")
    store = open_store(location)
    memory = ContextMemory(config=ContextConfig(max_tokens=4000, last_keep=2,
                                                large_payload=1000), store=store, session="s1")
    for item in _agent_turns(4):
        memory.add(item)
    memory.compress_if_needed()
    offloads = memory.offloaded()
    assert offloads
    offload_id, originals = next(iter(offloads.items()))
    # the note with the id is in the working context
    assert any(offload_id in m.text or any(offload_id in getattr(p, "content", "")
                                           or offload_id in getattr(p, "arguments", "")
                                           for p in m.parts)
               for m in memory.messages())
    answer = handle_tool_call(memory, "context_reload", json.dumps({"offload_id": offload_id}))
    assert answer is not None and originals[0].parts
    # every original text, call and result is in the answer, in full
    pieces = [getattr(p, name) for m in originals for p in m.parts
              for name in ("text", "content", "arguments") if getattr(p, name, "")]
    assert pieces and all(piece in answer for piece in pieces)
    assert handle_tool_call(memory, "other_tool", "{}") is None
    assert "no offloaded context" in (handle_tool_call(memory, "context_reload",
                                                       {"offload_id": "ctx-nope"}) or "")
    assert RELOAD_TOOL_OPENAI["function"]["name"] == RELOAD_TOOL_ANTHROPIC["name"]
    # a fresh process (new object, same store) can still reload it
    again = ContextMemory(store=open_store(location), session="s1")
    assert [m.parts for m in again.reload(offload_id)] == [m.parts for m in originals]
    with pytest.raises(NotFoundError):
        again.reload("ctx-missing")


def test_save_and_load_resume_the_session(new_store) -> None:  # type: ignore[no-untyped-def]
    location = new_store("state")
    store = open_store(location)
    memory = ContextMemory(config=ContextConfig(max_tokens=4000, last_keep=2,
                                                large_payload=1000), store=store, session="a")
    for item in _agent_turns(4):
        memory.add(item)
    memory.compress_if_needed()
    memory.save()
    resumed = ContextMemory.load(open_store(location), "a")
    assert resumed.config == memory.config
    assert [m.parts for m in resumed.messages()] == [m.parts for m in memory.messages()]
    assert [m.parts for m in resumed.original()] == [m.parts for m in memory.original()]
    assert resumed.events() == memory.events()
    assert resumed.token_count() == memory.token_count()
    with pytest.raises(NotFoundError):
        ContextMemory.load(store, "nobody")
    with pytest.raises(ConfigError):
        ContextMemory().save()


def test_accepts_openai_anthropic_and_precis_messages() -> None:
    memory = ContextMemory(max_tokens=8000)
    memory.add({"role": "user", "content": "hello"})
    memory.add({"role": "assistant", "content": [
        {"type": "text", "text": "reading"},
        {"type": "tool_use", "id": "tu1", "name": "read", "input": {"path": "a.py"}}]})
    memory.add({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "tu1", "content": "print(1)"}]})
    memory.add(Message.of("assistant", "done"))
    roles = [m.role for m in memory.messages()]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert [m.role for m in memory.interaction_messages()] == ["user", "assistant", "assistant"]
    with pytest.raises(FormatError, match="message 4"):
        memory.add({"role": "robot", "content": "x"})
    with pytest.raises(FormatError):
        memory.add(42)
    removed = memory.delete(0)
    assert removed.text == "hello" and len(memory.messages()) == 3
    assert len(memory.original()) == 4
    with pytest.raises(NotFoundError):
        memory.delete(10)
    memory.clear()
    assert memory.messages() == [] and memory.original() == [] and memory.token_count() <= 3


def test_a_real_transcript_compacts_to_budget_with_the_fit_fallback() -> None:
    conv = load(FIX / "coding_zh.json")
    memory = ContextMemory(config=ContextConfig(max_tokens=700, msg_threshold=100))
    memory.extend(conv.messages)
    memory.compress_if_needed()
    assert memory.token_count() <= memory.config.budget
    assert memory.messages()[0].role == "system"
    assert RULES.openai_errors(memory.to_openai()) == []


def test_reload_can_pick_the_messages_that_hold_a_string() -> None:
    memory = ContextMemory(config=ContextConfig(max_tokens=3000, last_keep=2,
                                                large_payload=1000, min_consecutive_tool=3))
    for item in _agent_turns(5):
        memory.add(item)
    memory.compress_if_needed()
    # a summary of earlier rounds holds every message before it; "module_1.py" narrows it
    big = max(memory.offloaded().items(), key=lambda kv: len(kv[1]))
    whole = handle_tool_call(memory, "context_reload", {"offload_id": big[0]}) or ""
    some = handle_tool_call(memory, "context_reload",
                            {"offload_id": big[0], "contains": "MODULE_1.py"}) or ""
    assert "module_1.py" in some and len(some) < len(whole)
    assert "module_3.py" not in some
    assert "[result]" in some  # the results of the matching calls come along
    none = handle_tool_call(memory, "context_reload",
                            {"offload_id": big[0], "contains": "no such text"}) or ""
    assert none.startswith("no message of")


def test_replace_swaps_a_working_message_in_one_step() -> None:
    memory = ContextMemory(max_tokens=8000)
    memory.extend([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}])
    before = memory.token_count()
    old = memory.replace(-1, [{"role": "assistant", "content": "b1"},
                              {"role": "assistant", "content": "b2"}])
    assert old.text == "b"
    assert [m.text for m in memory.messages()] == ["a", "b1", "b2"]
    assert [m.text for m in memory.original()] == ["a", "b"]  # history untouched
    assert memory.token_count() > before
    memory.replace(1, [])
    assert [m.text for m in memory.messages()] == ["a", "b2"]
    with pytest.raises(NotFoundError):
        memory.replace(5, [])


def test_context_reload_answers_with_text_whatever_the_model_writes(new_store) -> None:  # type: ignore[no-untyped-def]
    """With a store attached, offloaded text and the tool's arguments may hold lone
    surrogates (a model writes them): the tool answers with a text, never raises."""
    store = open_store(new_store("m"))
    memory = ContextMemory(config=ContextConfig(max_tokens=4000, last_keep=2,
                                                large_payload=1000), store=store, session="s1")
    for item in _agent_turns(4):
        memory.add(item)
    memory.add(Message.of("user", "odd \ud800 text " * 400))  # a precis Message, uncleaned
    memory.add({"role": "assistant", "content": "seen \udc00 " * 400})
    memory.compress_if_needed()
    offload_id = next(iter(memory.offloaded()))
    for arguments in ('{"offload_id": "\\ud800"}', {"offload_id": "\ud800"},
                      {"offload_id": "ctx-\udfff", "contains": "x"},
                      {"offload_id": offload_id, "contains": "\ud800"},
                      {"offload_id": offload_id + "\ud800"}):
        answer = handle_tool_call(memory, "context_reload", arguments)
        assert isinstance(answer, str)
        answer.encode("utf-8")
    whole = handle_tool_call(memory, "context_reload", {"offload_id": offload_id})
    assert whole is not None and not whole.startswith("error")
    # a store that fails answers with an error text too
    store.close()
    fresh = ContextMemory(store=store, session="s1")
    answer = handle_tool_call(fresh, "context_reload", {"offload_id": offload_id})
    assert answer is not None and answer.startswith("error:")
