"""ContextMemory with an LLM: summaries come from a real OpenAI-wire stub server on
127.0.0.1, and every failure of it falls back to the rule engine, recorded in the event."""

from __future__ import annotations

import json

import pytest

from _openai_stub import OpenAIStub, closed_port_url
from precis.llm import ChatClient
from precis.runtime import ContextConfig, ContextMemory


def _session(memory: ContextMemory, rounds: int = 4) -> None:
    memory.add({"role": "system", "content": "You are a coding agent."})
    for r in range(rounds):
        memory.add({"role": "user", "content": f"Round {r}: inspect src/m{r}.py"})
        for c in range(4):
            cid = f"c{r}_{c}"
            memory.add({"role": "assistant", "content": None, "tool_calls": [{
                "id": cid, "type": "function",
                "function": {"name": "run",
                             "arguments": json.dumps({"command": f"cat src/m{r}.py"})},
            }]})
            memory.add({"role": "tool", "tool_call_id": cid, "content": "x = 1\n" * 300})
        memory.add({"role": "assistant", "content": f"src/m{r}.py is fine."})


def _config() -> ContextConfig:
    return ContextConfig(max_tokens=2500, last_keep=2, large_payload=100_000,
                         min_consecutive_tool=4)


def test_strategies_use_the_llm_summary(openai_stub: OpenAIStub) -> None:
    openai_stub.reply = "LLM: ran cat on the module four times; it sets x = 1."
    client = ChatClient(openai_stub.url, api_key="k", model="stub", retries=0)
    memory = ContextMemory(config=_config(), llm=client,
                           plan=lambda: "Plan: review modules (2 of 4 done)")
    _session(memory)
    events = memory.compress_if_needed()
    used = [e for e in events if e.used_llm]
    assert used and all(e.llm_tokens > 0 for e in used)
    assert any("LLM: ran cat" in m.text for m in memory.messages())
    assert memory.token_count() <= memory.config.budget
    # the plan hint went to the model, last in the prompt
    last = openai_stub.bodies[0]["messages"][-1]["content"]
    assert "Plan: review modules (2 of 4 done)" in last
    assert last.rstrip().endswith("Plan: review modules (2 of 4 done)") or \
        last.rfind("Plan: review") > last.rfind("x = 1")


@pytest.mark.parametrize("mode", ["500", "not_json", "empty_content", "slow"])
def test_a_failing_llm_falls_back_to_rules(openai_stub: OpenAIStub, mode: str) -> None:
    openai_stub.mode = mode
    openai_stub.delay = 1.0
    client = ChatClient(openai_stub.url, model="stub", retries=0, timeout=0.3)
    memory = ContextMemory(config=_config(), llm=client)
    _session(memory)
    events = memory.compress_if_needed()
    assert events and not any(e.used_llm for e in events)
    assert any(e.llm_error for e in events)
    assert memory.token_count() <= memory.config.budget
    assert any("cat src/m" in m.text for m in memory.messages())  # the rule digest


def test_an_unreachable_llm_never_breaks_compaction() -> None:
    memory = ContextMemory(config=_config(),
                           llm=ChatClient(closed_port_url(), model="x", retries=0, timeout=0.5))
    _session(memory)
    memory.compress_if_needed()
    assert memory.token_count() <= memory.config.budget
    assert all(not e.used_llm for e in memory.events())


def test_background_compaction_does_not_block_and_keeps_new_messages(
        openai_stub: OpenAIStub) -> None:
    import time

    openai_stub.mode = "slow"  # every answer takes a second, then times out: rules are used
    openai_stub.delay = 1.0
    client = ChatClient(openai_stub.url, model="stub", retries=0, timeout=0.6)
    config = ContextConfig(max_tokens=40_000, token_ratio=0.25, last_keep=2,
                           large_payload=100_000, min_consecutive_tool=4)
    memory = ContextMemory(config=config, llm=client)
    _session(memory)
    assert memory.over() and memory.token_count() <= config.max_tokens
    started = time.perf_counter()
    assert memory.compress_if_needed(background=True) == []
    assert time.perf_counter() - started < 0.5  # returned before the slow LLM answered
    memory.add({"role": "user", "content": "one more thing: check src/extra.py"})
    assert memory.wait(timeout=60)
    assert memory.fits() or memory.token_count() <= config.budget + 200
    assert memory.events() and any(e.llm_error for e in memory.events())
    assert memory.messages()[-1].text == "one more thing: check src/extra.py"


def test_background_compaction_is_immediate_over_the_whole_window() -> None:
    config = ContextConfig(max_tokens=1_000, last_keep=2, large_payload=100_000,
                           min_consecutive_tool=4)
    memory = ContextMemory(config=config)
    _session(memory)
    assert memory.token_count() > config.max_tokens
    events = memory.compress_if_needed(background=True)
    assert events and memory.token_count() <= config.budget
