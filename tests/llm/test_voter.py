"""LLMTypeVoter as the model layer of classify_all, against the real stub server."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

pytest.importorskip("httpx")

import precis
from _openai_stub import OpenAIStub
from precis.analysis import FRAGMENT_TYPES, TypeVoter, classify_all
from precis.errors import ConfigError
from precis.llm import ChatClient, LLMTypeVoter

CONVERSATION = [
    {"role": "user", "content": "Hi there! I need the nightly export to finish before 6am. "
                                "It must not touch the prod replica."},
    {"role": "assistant", "content": "Okay. The export currently takes 3 hours. I think we "
                                     "should split it by region. Next I will rewrite the job."},
    {"role": "user", "content": "嗯，好的，谢谢"},
]
FRAGMENTS = precis.segment(precis.load(CONVERSATION)).fragments
RULES = classify_all(FRAGMENTS)
UNSURE = [i for i, r in enumerate(RULES) if r.confidence < 0.5]


def voter(stub: OpenAIStub, **options: Any) -> LLMTypeVoter:
    return LLMTypeVoter(ChatClient(stub.url, model="stub-model", retries=0, backoff=0),
                        **options)


def test_the_fixture_has_two_unsure_fragments() -> None:
    # the test data, checked by hand: two assistant sentences the rules are unsure about
    assert [FRAGMENTS[i].text for i in UNSURE] == [
        "The export currently takes 3 hours.", "I think we should split it by region."]


def test_votes_replace_the_unsure_rule_answers(openai_stub: OpenAIStub) -> None:
    openai_stub.reply = json.dumps({"1": "fact", "2": "decision"})
    v = voter(openai_stub)
    assert isinstance(v, TypeVoter) and v.name == "llm:stub-model"
    results = classify_all(FRAGMENTS, voter=v, threshold=0.5)
    first, second = (results[i] for i in UNSURE)
    assert (first.type, second.type) == ("fact", "decision")
    assert first.source == "llm:stub-model" and first.confidence == 0.7
    assert first.evidence == ("model:vote", f"rules:{RULES[UNSURE[0]].type}")
    assert [r for i, r in enumerate(results) if i not in UNSURE] == [
        r for i, r in enumerate(RULES) if i not in UNSURE]
    [request] = openai_stub.requests
    system, user = request.body["messages"]
    for name in FRAGMENT_TYPES:
        assert f"\n- {name}: " in system["content"]
    assert user["content"] == (
        "[1] (assistant, sentence) The export currently takes 3 hours.\n"
        "[2] (assistant, sentence) I think we should split it by region."
    )
    assert request.body["max_tokens"] == 16 + 8 * 2


@pytest.mark.parametrize(
    "reply",
    [
        "I cannot classify these.",
        "{not json}",
        json.dumps({"1": "banana", "2": "opinion"}),
        json.dumps({"1": 5, "2": ["fact"]}),
        json.dumps(["fact", "decision"]),
        json.dumps({"3": "fact", "０": "fact"}),
    ],
)
def test_junk_abstains_and_the_rules_stand(openai_stub: OpenAIStub, reply: str) -> None:
    openai_stub.reply = reply
    assert classify_all(FRAGMENTS, voter=voter(openai_stub), threshold=0.5) == RULES
    assert len(openai_stub.requests) == 1


def test_a_partly_valid_answer_is_used_where_valid(openai_stub: OpenAIStub) -> None:
    openai_stub.reply = json.dumps({"1": "banana", "2": "Decision"})
    results = classify_all(FRAGMENTS, voter=voter(openai_stub), threshold=0.5)
    assert results[UNSURE[0]] == RULES[UNSURE[0]]
    assert results[UNSURE[1]].type == "decision"


@pytest.mark.parametrize(
    "reply",
    [
        '```json\n{"1": "fact", "2": "decision"}\n```',
        'Here you go: {"[1]": "fact", "2": " decision "}. Hope it helps.',
        "1: fact\n2) decision",
        "[1] Fact\n[2] decision\n",
    ],
)
def test_common_answer_shapes_are_read(openai_stub: OpenAIStub, reply: str) -> None:
    openai_stub.reply = reply
    results = classify_all(FRAGMENTS, voter=voter(openai_stub), threshold=0.5)
    assert [results[i].type for i in UNSURE] == ["fact", "decision"]


def test_only_the_candidates_count(openai_stub: OpenAIStub) -> None:
    openai_stub.reply = json.dumps({"1": "decision", "2": "goal"})
    pairs = [(FRAGMENTS[i], RULES[i]) for i in UNSURE]
    votes = voter(openai_stub).vote(pairs, ("fact", "goal"))
    assert votes[0] is None
    assert votes[1] is not None and votes[1].type == "goal"
    system = openai_stub.requests[0].body["messages"][0]["content"]
    assert "- fact: " in system and "- goal: " in system and "- decision: " not in system


def test_a_failing_endpoint_leaves_the_rules_marked(openai_stub: OpenAIStub) -> None:
    openai_stub.mode = "500"
    results = classify_all(FRAGMENTS, voter=voter(openai_stub), threshold=0.5)
    assert [r.type for r in results] == [r.type for r in RULES]
    marked = [i for i, r in enumerate(results) if "voter_failed" in r.evidence]
    assert marked == UNSURE


def test_batches_number_their_fragments_from_one(openai_stub: OpenAIStub) -> None:
    def answer(body: dict[str, Any]) -> str:
        lines = body["messages"][1]["content"].splitlines()
        return json.dumps({str(n): "todo" for n in range(1, len(lines) + 1)})

    openai_stub.reply = answer
    unsure = [i for i, r in enumerate(RULES) if r.confidence < 0.95]
    assert len(unsure) >= 3
    results = classify_all(FRAGMENTS, voter=voter(openai_stub, batch_size=2), threshold=0.95)
    assert all(results[i].type == "todo" for i in unsure)
    assert len(openai_stub.requests) == math.ceil(len(unsure) / 2)
    for request in openai_stub.requests:
        assert request.body["messages"][1]["content"].startswith("[1] ")


def test_long_fragments_are_cut(openai_stub: OpenAIStub) -> None:
    openai_stub.reply = "{}"
    pairs = [(FRAGMENTS[i], RULES[i]) for i in UNSURE]
    assert voter(openai_stub, max_chars=10).vote(pairs, FRAGMENT_TYPES) == [None, None]
    assert openai_stub.requests[0].body["messages"][1]["content"].splitlines() == [
        "[1] (assistant, sentence) The export ...",
        "[2] (assistant, sentence) I think we ...",
    ]


@pytest.mark.parametrize(
    ("options", "problem"),
    [({"batch_size": 0}, "batch_size"), ({"max_chars": -1}, "max_chars"),
     ({"confidence": 1.5}, "confidence"), ({"confidence": True}, "confidence")],
)
def test_bad_settings(openai_stub: OpenAIStub, options: dict[str, Any], problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        voter(openai_stub, **options)
