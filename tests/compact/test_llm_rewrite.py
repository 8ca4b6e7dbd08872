"""``compress(..., llm=client)``: the handover rewritten into prose by a model, checked by
rules (what it lost put back, the budget kept), or the rule handover when anything fails.
Against a real HTTP server on 127.0.0.1 that speaks the OpenAI wire format."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("httpx")

from tests.events._sessions import coding_session

import precis
from _openai_stub import OpenAIStub
from _rewrites import handover_of, prose
from precis.compact import CompressionResult, compress, result_schema
from precis.compact._rewrite import restore
from precis.compact.summary import Summary, SummaryItem, SummarySection
from precis.llm import ChatClient
from precis.model import Conversation
from precis.tokens import get_counter

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "compact"


@pytest.fixture
def session(tmp_path: Path) -> tuple[Conversation, int]:
    """A Claude Code session and a budget that summarizes all but its last message."""
    conv = precis.load(coding_session().write(tmp_path / "s.jsonl"))
    return conv, int(get_counter("estimate").count_messages(conv.messages) * 0.8)


def client(stub: OpenAIStub, **options: Any) -> ChatClient:
    options.setdefault("retries", 0)
    options.setdefault("backoff", 0)
    return ChatClient(stub.url, model="stub-model", **options)


def edited(*changes: tuple[str, str]) -> Callable[[dict[str, Any]], str]:
    """:func:`prose` with each (pattern, replacement) substituted (a test checks what the
    reply lacks on the request it got: an assertion here would only break the stub)."""

    def reply(body: dict[str, Any]) -> str:
        text = prose(body)
        for pattern, new in changes:
            text = re.sub(pattern, new, text)
        return text

    return reply


def summary_text(result: CompressionResult) -> str:
    return next(m.text for m, o in zip(result.messages, result.origin)
                if m.metadata.get("precis") == "summary" and o is None)


def fits(result: CompressionResult, budget: int) -> None:
    counter = get_counter("estimate")
    assert counter.count_messages(result.messages) <= budget
    assert result.compressed_tokens <= budget
    assert counter.count(result.text()) <= budget


def test_a_faithful_rewrite_is_used(openai_stub: OpenAIStub,
                                    session: tuple[Conversation, int]) -> None:
    conv, budget = session
    rules = compress(conv, budget=budget, keep_last=1)
    openai_stub.reply = prose
    result = compress(conv, budget=budget, keep_last=1, llm=client(openai_stub))
    assert result.llm is not None
    assert result.llm.used_llm and result.llm.error is None
    assert result.llm.restored == () and result.llm.attempts == 1
    assert result.llm.unverified == ()  # the prose says no value the handover does not
    assert result.llm.llm_tokens == 127 and result.llm.model == "stub-model"
    # the summary message is the model's prose under precis's header
    assert rules.summary is not None and result.summary is not None
    body = prose(openai_stub.bodies[0])
    assert summary_text(result) == f"{rules.summary.header()}\n{body}"
    assert "## " not in summary_text(result)
    # the sections are the rule handover it was written from; the prompt held them cited
    assert result.summary.sections == rules.summary.sections
    sent = handover_of(openai_stub.bodies[0])
    assert sent == rules.summary.render().partition("\n")[2].strip()
    assert "[S1, S2]" in sent and "Work on bead shop-abc" in sent
    assert f"at most {result.llm.target_tokens} tokens" in openai_stub.bodies[0]["messages"][1][
        "content"]
    # the recent messages are the rule output's; the budget holds by the same counter
    assert result.messages[1:] == rules.messages[1:]
    fits(result, budget)
    data = json.loads(result.to_json())
    assert data["llm"]["used_llm"] is True
    assert data["summary"]["detailed"] == summary_text(result)
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(data, result_schema())
    assert "- llm rewrite: prose by stub-model; nothing was missing" in result.to_markdown()


def test_what_the_rewrite_drops_is_put_back_with_its_citations(
        openai_stub: OpenAIStub, session: tuple[Conversation, int]) -> None:
    conv, budget = session
    reply = edited(
        (r"`lib/shop/order\.ex`", "the order module"),  # a path ...
        (r"3f2a9c1", "a commit"),  # ... a commit id ...
        (r"order_test\.exs:12:", "order_test.exs:"),  # ... a number (a line number)
        # ... and a request: its words and its message number, wherever they are
        (r'User \(msg 22\): "also make the discount show on the receipt"[^\[]*',
         "The user added a wish "),
        (r" ?\(msg 22\)", ""),
        (r'"also make the discount show on the receipt"', "the wish"),
        # (and shorter, as a model writes within its target)
        (r"(?m)^(?:Problem Solving|Key Technical Concepts|Pending Tasks): .*\n\n", ""),
        (r' The assistant\'s last words: "[^"]*" \[S\d+\]', ""),
    )
    openai_stub.reply = reply
    result = compress(conv, budget=budget, keep_last=1, llm=client(openai_stub))
    answer = reply(openai_stub.bodies[0])
    for gone in ("lib/shop/order.ex", "3f2a9c1", "order_test.exs:12", "msg 22",
                 "also make the discount show"):
        assert gone not in answer
    assert result.llm is not None and result.llm.used_llm, result.llm
    restored = "\n".join(result.llm.restored)
    text = summary_text(result)
    head, _, back = text.partition("\nAlso, as the handover's rules wrote it:\n")
    assert back, text
    assert "the order module" in head and "3f2a9c1" not in head
    for value in ("lib/shop/order.ex", "3f2a9c1", "msg 22",
                  "also make the discount show on the receipt", "order_test.exs:12:"):
        assert value in restored and value in back
    assert "test/shop/order_test.exs:12: undefined function build_order/1" in back
    # each line put back whole, with its citations, as the rule handover has it
    assert result.summary is not None
    lines = {item.render() for item in result.summary.items}
    assert set(result.llm.restored) <= lines
    assert all(f"- {line}" in back for line in result.llm.restored)
    # a line whose values the prose kept is not put back; a value the rule handover says
    # on several lines comes back once
    assert not any("lib/shop/receipt.ex" in line for line in result.llm.restored)
    assert sum("3f2a9c1" in item.text for item in result.summary.items) == 3
    assert sum("3f2a9c1" in line for line in result.llm.restored) == 1
    fits(result, budget)
    assert f"{len(result.llm.restored)} rule lines put back" in result.to_markdown()


def test_values_the_prose_invents_are_reported(
        openai_stub: OpenAIStub, session: tuple[Conversation, int]) -> None:
    conv, budget = session
    reply = edited(("Committed 3f2a9c1:", "Committed 3f2a9c1 (PR 4821, `lib/shop/invoice.ex`):"))
    openai_stub.reply = reply
    result = compress(conv, budget=budget, keep_last=1, llm=client(openai_stub))
    assert "(PR 4821, `lib/shop/invoice.ex`)" in reply(openai_stub.bodies[0])
    assert result.llm is not None and result.llm.used_llm
    assert result.llm.unverified == ("4821", "lib/shop/invoice.ex")
    assert ("2 values not in the rule summary: 4821, lib/shop/invoice.ex"
            in result.to_markdown())


def test_a_rewrite_over_budget_is_asked_again_shorter(
        openai_stub: OpenAIStub, session: tuple[Conversation, int]) -> None:
    conv, budget = session
    answers = iter([lambda body: prose(body) + "\n\n" + "Filler words that say nothing. " * 200,
                    prose])
    openai_stub.reply = lambda body: next(answers)(body)
    result = compress(conv, budget=budget, keep_last=1, llm=client(openai_stub))
    assert result.llm is not None and result.llm.used_llm
    assert result.llm.attempts == 2 and result.llm.llm_tokens == 2 * 127
    second = openai_stub.bodies[1]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert second[2]["content"].endswith("Filler words that say nothing.")
    assert "tokens; the limit is" in second[3]["content"]
    first_target = int(re.search(r"at most (\d+) tokens", second[1]["content"])[1])  # type: ignore[index]
    assert result.llm.target_tokens < first_target
    assert "Filler" not in result.text()
    fits(result, budget)


def test_a_rewrite_that_stays_over_budget_leaves_the_rule_handover(
        openai_stub: OpenAIStub, session: tuple[Conversation, int]) -> None:
    conv, budget = session
    rules = compress(conv, budget=budget, keep_last=1)
    openai_stub.reply = lambda body: prose(body) + " More words." * 300
    result = compress(conv, budget=budget, keep_last=1, llm=client(openai_stub))
    assert result.llm is not None and not result.llm.used_llm
    assert result.llm.attempts == 2
    assert result.llm.error is not None
    assert f"over the limit of {budget}" in result.llm.error
    assert result.messages == rules.messages and result.summary == rules.summary
    assert "the rule summary stands" in result.to_markdown()


def test_without_a_budget_the_prose_takes_no_more_than_the_levels_room(
        openai_stub: OpenAIStub, session: tuple[Conversation, int]) -> None:
    conv, _ = session
    rules = compress(conv, keep_last=1)
    assert rules.summary is not None
    counter = get_counter("estimate")
    older = counter.count_messages(conv.messages[:-1])  # what the summary covers
    openai_stub.reply = lambda body: prose(body) + " Also true." * 400
    result = compress(conv, keep_last=1, llm=client(openai_stub))
    assert result.llm is not None and not result.llm.used_llm
    assert "over the limit of" in str(result.llm.error)
    limit = int(re.search(r"over the limit of (\d+)", str(result.llm.error))[1])  # type: ignore[index]
    assert counter.count(rules.summary.render()) <= limit < older
    assert result.messages == rules.messages
    openai_stub.reply = prose
    result = compress(conv, keep_last=1, llm=client(openai_stub))
    assert result.llm is not None and result.llm.used_llm
    assert counter.count(summary_text(result)) <= limit
    assert result.compressed_tokens < result.original_tokens


def rule_dict(result: CompressionResult) -> dict[str, Any]:
    data = result.to_dict(timings=False)
    data.pop("llm", None)
    return data


@pytest.mark.parametrize("mode", ["500", "not_json", "empty_content", "no_choices",
                                  "wrong_types", "timeout"])
def test_a_failing_model_leaves_the_rule_handover_and_says_why(
        openai_stub: OpenAIStub, session: tuple[Conversation, int], mode: str) -> None:
    conv, budget = session
    rules = compress(conv, budget=budget, keep_last=1)
    # (timeouts with room for a loaded machine: only the timeout mode waits them out)
    openai_stub.mode = ("sleep", 3.0) if mode == "timeout" else mode
    result = compress(conv, budget=budget, keep_last=1,
                      llm=client(openai_stub, timeout=1.5 if mode == "timeout" else 10.0))
    assert result.llm is not None and not result.llm.used_llm
    expected = {"500": "HTTP 500", "not_json": "malformed JSON answer",
                "empty_content": "content is empty", "no_choices": "'choices' is empty",
                "wrong_types": "content is int", "timeout": "no answer within 1.5 s"}[mode]
    assert expected in str(result.llm.error)
    assert result.llm.attempts == 1 and result.llm.restored == ()
    # everything but the report is the rule output, byte for byte
    assert rule_dict(result) == rules.to_dict(timings=False)
    data = json.loads(result.to_json())
    assert data["llm"]["error"] == result.llm.error
    assert f"- llm rewrite: not used ({result.llm.error})" in result.to_markdown()


def test_a_rewrite_that_keeps_too_little_is_not_used(
        openai_stub: OpenAIStub, session: tuple[Conversation, int]) -> None:
    conv, budget = session
    openai_stub.reply = "The agent worked on the shop and should continue."
    result = compress(conv, budget=budget, keep_last=1, llm=client(openai_stub))
    assert result.llm is not None and not result.llm.used_llm
    assert result.llm.attempts == 2
    assert "the rewrite left out what" in str(result.llm.error)
    assert "It left out these exact values" in openai_stub.bodies[1]["messages"][3]["content"]
    assert "lib/shop/receipt.ex" in openai_stub.bodies[1]["messages"][3]["content"]


def test_no_summary_means_no_request(openai_stub: OpenAIStub,
                                     session: tuple[Conversation, int]) -> None:
    conv, _ = session
    short = Conversation(messages=conv.messages[:2])
    result = compress(short, budget=100_000, llm=client(openai_stub))
    assert result.summary is None
    assert result.llm is not None and not result.llm.used_llm
    assert result.llm.error == "nothing was summarized" and result.llm.attempts == 0
    assert openai_stub.requests == []


def test_without_a_model_the_json_has_no_llm_report(session: tuple[Conversation, int]) -> None:
    conv, budget = session
    result = compress(conv, budget=budget, keep_last=1)
    assert result.llm is None
    assert "llm" not in result.to_dict()
    assert "llm rewrite" not in result.to_markdown()


def test_a_chinese_handover_gets_the_chinese_prompt(openai_stub: OpenAIStub) -> None:
    conv = precis.load(FIXTURES / "coding_zh.json")
    openai_stub.reply = prose
    result = compress(conv, level="heavy", llm=client(openai_stub))
    assert result.summary is not None and result.summary.language == "zh"
    system = openai_stub.bodies[0]["messages"][0]["content"]
    assert "改写" in system
    assert result.llm is not None and result.llm.used_llm, result.llm


def _summary(*items: SummaryItem) -> Summary:
    return Summary(language="en", template="claude", short=(),
                   sections=(SummarySection("request", "Requests", items),),
                   covers=(0, 30), fragments=("S1", "S90"))


def test_a_value_counts_only_as_a_whole_token() -> None:
    summary = _summary(SummaryItem("`pytest -q`: 18 tests, 0 failures", ("S4",)))
    _, back, missing, checked = restore("In 2018 `pytest -q` ran 180 tests.", summary)
    assert checked == 1 and missing == ["18"]
    assert back == ("`pytest -q`: 18 tests, 0 failures [S4]",)
    assert restore("`pytest -q` ran 18 tests.", summary)[1] == ()
    timed = _summary(SummaryItem("`pytest -q` (2 passed in 0.40s)", ("S5",)))
    assert restore("`pytest -q`: 2 passed in 0.40s.", timed)[1] == ()
    assert restore("`pytest -q`: 2 passed in 0.401s.", timed)[2] == ["0.40"]


def test_a_request_is_there_by_its_words_or_its_message_number() -> None:
    summary = _summary(SummaryItem('User (msg 12): "Port the parser to Rust"', ("S7",),
                                   type="request"))
    assert restore("The user asked to port the parser to Rust.", summary)[1] == ()
    assert restore("In message 12 the user asked for a port.", summary)[1] == ()
    _, back, missing, _ = restore("The user asked for a port (msg 120).", summary)
    assert missing == ["msg 12"] and back == ('User (msg 12): "Port the parser to Rust" [S7]',)
