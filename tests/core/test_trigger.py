"""Seed 002's explicit trigger (issue 18, item 8): compaction is due by rounds, by tokens, or
when the user asks for it; ``precis.should_compact`` answers the three, ``ContextMemory``
compacts when asked. The cues are data (Chinese and English) and can be extended."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import precis
from precis import ConfigError, TriggerCues, should_compact
from precis.runtime import ContextMemory

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "coding_session.json"

REQUESTS = [
    "这阶段总结一下", "帮我整理一下刚才的内容", "summarize what we have so far", "let's recap",
    "Let's do a quick recap before we go on.", "Can you give me a summary of our conversation?",
    "把我们刚才讨论的内容总结一下", "总结一下。", "到目前为止的进展帮我归纳一下",
    "Please sum up the discussion so far.", "/compact",
]
NOT_REQUESTS = [
    "how do I summarize a table?", "帮我把这篇文章总结一下", "Summarize this article: rain falls.",
    "如何总结一个表格？", "Write a function that summarizes a list of numbers.",
    "The summary statistics look wrong.", "总结报告在 docs/summary.md 里", "recap_test.py failed",
]


@pytest.mark.parametrize("text", REQUESTS)
def test_a_request_to_summarize_the_conversation_is_a_trigger(text: str) -> None:
    decision = should_compact([{"role": "user", "content": text}])
    assert decision and decision.reasons == ("request",) and decision.request


@pytest.mark.parametrize("text", NOT_REQUESTS)
def test_a_question_about_summaries_is_no_trigger(text: str) -> None:
    assert not should_compact([{"role": "user", "content": text}])


def test_rounds_and_tokens_and_only_the_latest_request() -> None:
    conv = precis.load(EXAMPLE)
    decision = should_compact(conv, max_rounds=3)
    assert decision.reasons == ("rounds",) and decision.rounds == 4  # user requests
    assert not should_compact(conv, max_rounds=4)
    tokens = precis.get_counter("estimate").count_messages(conv.messages)
    assert should_compact(conv, max_rounds=None, max_tokens=tokens - 1).reasons == ("tokens",)
    assert not should_compact(conv, max_rounds=None, max_tokens=tokens)
    asked = [*conv.messages, precis.Message.of("user", "好，这阶段总结一下")]
    both = should_compact(asked, max_rounds=3, max_tokens=100)
    assert both.reasons == ("rounds", "tokens", "request")
    # a request already answered (a later user message) is no trigger any more
    later = [*asked, precis.Message.of("assistant", "..."), precis.Message.of("user", "继续")]
    assert "request" not in should_compact(later).reasons


def test_cues_are_data_and_extendable(tmp_path: Path) -> None:
    data = json.loads((Path(precis.__file__).parent / "data" / "trigger_cues.json")
                      .read_text(encoding="utf-8"))
    assert data["zh"]["patterns"] and data["en"]["patterns"]
    mine = TriggerCues.default().extended(phrases=["打个总结"], patterns=[r"\bTL;?DR\b"])
    assert should_compact([{"role": "user", "content": "现在打个总结吧"}], cues=mine)
    assert should_compact([{"role": "user", "content": "tldr please"}], cues=mine)
    assert not should_compact([{"role": "user", "content": "现在打个总结吧"}])
    assert not should_compact([{"role": "user", "content": "let's recap"}],
                              cues=TriggerCues.none())
    with pytest.raises(ConfigError, match="not a regular expression"):
        TriggerCues(patterns=("(unclosed",))
    with pytest.raises(ConfigError, match="max_rounds"):
        should_compact([], max_rounds=0)


def test_context_memory_compacts_when_the_user_asks() -> None:
    memory = ContextMemory(max_tokens=100_000)  # far under every threshold
    memory.add({"role": "system", "content": "You help with the export service."})
    for n in range(4):
        memory.add({"role": "user", "content": f"Step {n}: raise the export limit to "
                                               f"{30 + n} days and update docs/api/export.md."})
        memory.add({"role": "assistant", "content": f"Done: the limit is {30 + n} days."})
    assert memory.compress_if_needed() == []  # nobody asked, nothing is over
    memory.add({"role": "user", "content": "这阶段总结一下"})
    assert memory.requested and not memory.over()
    events = memory.compress_if_needed()
    assert [e.strategy for e in events] == ["summarize_rounds"]
    assert events[0].trigger.startswith("request: ") and "总结" in events[0].trigger
    roles = [m.role for m in memory.messages()]
    assert roles == ["system", "user", "assistant", "user"]  # summary, last reply, request
    assert memory.messages()[-1].text == "这阶段总结一下"
    assert "33 days" in memory.messages()[1].text
    assert memory.requested is None and memory.compress_if_needed() == []
    assert events[0].to_dict()["trigger"] == events[0].trigger


def test_threshold_events_say_why() -> None:
    from precis.runtime import ContextConfig

    memory = ContextMemory(config=ContextConfig(msg_threshold=6))
    for n in range(4):
        memory.add({"role": "user", "content": f"question {n} about the invoices"})
        memory.add({"role": "assistant", "content": f"answer {n}"})
    events = memory.compress_if_needed()
    assert events and events[0].trigger == "messages 8 >= 6"
