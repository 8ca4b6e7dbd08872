"""The model-layer benchmark's stand-in: an OpenAI-compatible endpoint on 127.0.0.1 that
answers precis's own type voter from a table of labels."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("httpx")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from analysis_voter import CountingVoter, answer, second_annotator_labels, stand_in
from precis.analysis import AnalysisConfig, analyze
from precis.llm import ChatClient, LLMTypeVoter
from precis.llm._voter import prompt_text
from precis.model import Conversation, Message, Text


def test_the_stand_in_answers_the_fragments_it_knows() -> None:
    prompt = ("[1] (user, sentence) Move the cron job to 02:00.\n"
              "[2] (assistant, sentence) Something it never saw.\n"
              "[3] (user, sentence) ok")
    labels = {"Move the cron job to 02:00.": "decision", "ok": "chitchat"}
    assert answer(prompt, labels) == {"1": "decision", "3": "chitchat"}


def test_a_long_fragment_is_known_by_its_cut_text() -> None:
    text = "word " * 200
    assert prompt_text(text).endswith(" ...") and len(prompt_text(text)) == 604
    assert prompt_text("a\n  b") == "a b"


def test_the_labels_come_from_the_second_annotator() -> None:
    labels = second_annotator_labels()
    assert len(labels) > 800  # nearly all of the 975 fragments (repeated texts differ)
    assert set(labels.values()) <= {
        "goal", "background", "fact", "reasoning", "decision", "constraint", "plan", "code",
        "error", "todo", "chitchat"}


def test_the_voter_takes_the_stand_ins_answer_through_real_http() -> None:
    text = "The staging cluster runs three replicas behind one load balancer."
    conv = Conversation(messages=[Message(role="user", parts=[Text(text)])])
    rules = analyze(conv).items()
    only = next(iter(rules))
    wanted = "todo" if only.type != "todo" else "plan"  # a label the rules did not give
    with stand_in({text: wanted}) as url, ChatClient(url, model="stand-in") as client:
        voted = analyze(conv, AnalysisConfig(vote_below=1.0), voter=LLMTypeVoter(client))
    item = next(iter(voted.items()))
    assert item.type == wanted
    assert item.classification.source == "llm:stand-in"
    assert f"rules:{only.type}" in item.classification.evidence


def test_a_failing_model_is_counted_not_taken_for_one_that_agrees() -> None:
    from _openai_stub import closed_port_url

    text = "The staging cluster runs three replicas behind one load balancer."
    conv = Conversation(messages=[Message(role="user", parts=[Text(text)])])
    rules = next(iter(analyze(conv).items()))
    with ChatClient(closed_port_url(), model="nobody", retries=0) as client:
        counting = CountingVoter(LLMTypeVoter(client))
        voted = analyze(conv, AnalysisConfig(vote_below=1.0), voter=counting)
    item = next(iter(voted.items()))
    assert item.type == rules.type  # the rule answer stands
    assert counting.asked == counting.failed == 1 and counting.answered == 0
    assert counting.error is not None
