"""summarize(): the LLM's summary when it gives one, the rule engine's otherwise, with a
record of which and why. Against the real stub server; nothing of ours is mocked."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

pytest.importorskip("httpx")

from _openai_stub import OpenAIStub, closed_port_url
from precis.errors import ConfigError
from precis.llm import (
    ChatClient,
    Completion,
    PlanHint,
    Subtask,
    SummaryPrompts,
    build_summary_messages,
    summarize,
)

CONTENT = (
    "assistant called read_file(path='/srv/app/config.yaml') -> 'port: 8080\\nworkers: 4\\n"
    "db_url: postgres://db:5432/app'\n"
    "assistant called run(cmd='systemctl restart app') -> 'exit 0'\n"
    "assistant called http_get(url='http://localhost:8080/health') -> '200 OK {\"ok\": true}'\n"
)
RULES = "read_file /srv/app/config.yaml; restarted app; health 200"
PLAN = PlanHint("Restart the app safely", state="in_progress",
                subtasks=(Subtask("Check the config", "done"), Subtask("Restart", "in_progress")))


class Rules:
    """The rule engine's answer, counting how often it was asked."""

    def __init__(self, text: str = RULES) -> None:
        self.text = text
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        return self.text


def client(stub: OpenAIStub, **options: Any) -> ChatClient:
    options.setdefault("backoff", 0)
    options.setdefault("retries", 0)
    return ChatClient(stub.url, model="stub-model", **options)


def test_the_llm_summary_is_used(openai_stub: OpenAIStub) -> None:
    rules = Rules()
    out = summarize(client(openai_stub, api_key="sekret"), "tool_calls", CONTENT,
                    fallback=rules, plan_hint=PLAN, language="en")
    assert out.text == "Stub summary."
    assert out.used_llm and out.error is None
    assert out.llm_tokens == 127  # 120 prompt + 7 completion, as the stub reports
    assert 0 < out.elapsed_s < 5
    assert rules.calls == 0
    [request] = openai_stub.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["Authorization"] == "Bearer sekret"
    assert request.body["model"] == "stub-model"
    assert request.body["messages"] == build_summary_messages(
        "tool_calls", CONTENT, plan_hint=PLAN, language="en")
    last = request.body["messages"][-1]["content"]
    assert last.endswith("1. [done] Check the config\n2. [in progress] Restart")
    assert last.index(CONTENT) < last.index("Current plan: Restart the app safely")


def test_custom_prompts_and_chinese_defaults_reach_the_server(openai_stub: OpenAIStub) -> None:
    prompts = SummaryPrompts(previous_round="只保留订单号和状态变更。")
    summarize(client(openai_stub), "previous_round", "用户：查询订单 A-1001 的状态。" * 5,
              fallback=Rules(), prompts=prompts, language="zh")
    summarize(client(openai_stub), "large_message", "用户：查询订单 A-1001 的状态。" * 5,
              fallback=Rules(), prompts=prompts, language="auto")
    first, second = (r.body["messages"] for r in openai_stub.requests)
    assert first[0] == {"role": "system", "content": "只保留订单号和状态变更。"}
    assert second[0]["content"].startswith("你负责缩短智能体当前这一轮中的一条大型消息")


def test_max_chars_caps_the_answer_tokens(openai_stub: OpenAIStub) -> None:
    summarize(client(openai_stub), "current_round", CONTENT, fallback=Rules(),
              language="en", max_chars=100)
    summarize(client(openai_stub), "current_round", CONTENT, fallback=Rules(),
              language="en", max_chars=10)
    summarize(client(openai_stub), "current_round", CONTENT, fallback=Rules(),
              language="en", max_chars=100, max_tokens=50)
    assert [b["max_tokens"] for b in openai_stub.bodies] == [100, 64, 50]
    assert "Answer in at most 100 characters." in openai_stub.bodies[0]["messages"][1]["content"]


def test_no_client_means_the_rules(openai_stub: OpenAIStub) -> None:
    rules = Rules()
    out = summarize(None, "tool_calls", CONTENT, fallback=rules, language="en")
    assert (out.text, out.used_llm, out.error, out.llm_tokens) == (RULES, False, None, 0)
    assert rules.calls == 1


def test_retried_server_error_still_gives_the_llm_summary(openai_stub: OpenAIStub) -> None:
    openai_stub.queue = ["500"]
    out = summarize(client(openai_stub, retries=1), "tool_calls", CONTENT, fallback=Rules(),
                    language="en")
    assert out.used_llm and out.text == "Stub summary."
    assert len(openai_stub.requests) == 2


def check_fallback(out: Any, rules: Rules, *problems: str, tokens: int = 0) -> None:
    assert out.text == RULES
    assert out.used_llm is False
    assert rules.calls == 1
    assert out.llm_tokens == tokens
    assert isinstance(out.error, str)
    for problem in problems:
        assert problem in out.error


def test_endpoint_down_falls_back() -> None:
    rules = Rules()
    url = closed_port_url()
    out = summarize(ChatClient(url, model="m", retries=1, backoff=0), "tool_calls", CONTENT,
                    fallback=rules, language="en")
    check_fallback(out, rules, url + "/chat/completions", "connection failed",
                   "after 2 attempts")


def test_server_errors_fall_back(openai_stub: OpenAIStub) -> None:
    openai_stub.mode = "500"
    rules = Rules()
    out = summarize(client(openai_stub, retries=2), "previous_round", CONTENT, fallback=rules,
                    language="en")
    check_fallback(out, rules, "HTTP 500", "stub overloaded", "after 3 attempts")
    assert len(openai_stub.requests) == 3


def test_rate_limit_falls_back(openai_stub: OpenAIStub) -> None:
    openai_stub.mode = "429"
    rules = Rules()
    out = summarize(client(openai_stub, retries=1), "tool_calls", CONTENT, fallback=rules,
                    language="en")
    check_fallback(out, rules, "HTTP 429")


def test_timeout_falls_back_in_time(openai_stub: OpenAIStub) -> None:
    openai_stub.mode = "slow"
    openai_stub.delay = 1.5
    rules = Rules()
    start = time.perf_counter()
    out = summarize(client(openai_stub, timeout=0.2), "large_message", CONTENT,
                    fallback=rules, language="en")
    assert time.perf_counter() - start < 1.0
    check_fallback(out, rules, "no answer within 0.2 s")
    assert 0.2 <= out.elapsed_s < 1.0


@pytest.mark.parametrize(
    ("mode", "problem"),
    [
        ("not_json", "malformed JSON answer"),
        ("no_choices", "'choices' is empty"),
        ("wrong_types", "content is int, not text"),
        ("empty_content", "content is empty"),
        ((200, '{"choices": [{"message": {}}]}', {}), "has no content"),
    ],
)
def test_junk_answers_fall_back(openai_stub: OpenAIStub, mode: Any, problem: str) -> None:
    openai_stub.mode = mode
    rules = Rules()
    out = summarize(client(openai_stub), "current_round", CONTENT, fallback=rules,
                    language="en")
    check_fallback(out, rules, problem)


def test_an_answer_no_shorter_than_the_input_falls_back(openai_stub: OpenAIStub) -> None:
    openai_stub.reply = lambda body: "Summary: " + CONTENT
    rules = Rules()
    out = summarize(client(openai_stub), "tool_calls", CONTENT, fallback=rules, language="en")
    answer = ("Summary: " + CONTENT).strip()  # the client strips the answer
    assert len(answer) > len(CONTENT)
    check_fallback(out, rules, f"({len(answer)} chars) is not shorter than the input "
                   f"({len(CONTENT)} chars)", tokens=127)  # the tokens were spent


class Raising:
    """A caller's own model wrapper (not ours) that fails in its own way."""

    model = "theirs"

    def complete(self, messages: Sequence[Mapping[str, Any]], *,
                 max_tokens: int | None = None) -> Completion:
        raise RuntimeError("socket closed by peer")


class Wordless:
    model = "theirs"

    def complete(self, messages: Sequence[Mapping[str, Any]], *,
                 max_tokens: int | None = None) -> Any:
        return object()


def test_a_callers_model_that_fails_any_way_falls_back() -> None:
    rules = Rules()
    out = summarize(Raising(), "tool_calls", CONTENT, fallback=rules, language="en")
    check_fallback(out, rules, "RuntimeError: socket closed by peer")
    rules = Rules()
    out = summarize(Wordless(), "tool_calls", CONTENT, fallback=rules, language="en")
    check_fallback(out, rules, "the model gave no text")


def test_caller_errors_are_raised_not_hidden(openai_stub: OpenAIStub) -> None:
    rules = Rules()
    with pytest.raises(ConfigError, match="unknown summary slot"):
        summarize(client(openai_stub), "everything", CONTENT,  # type: ignore[arg-type]
                  fallback=rules)
    assert rules.calls == 0 and openai_stub.requests == []
