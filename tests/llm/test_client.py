"""ChatClient against the real stub server on 127.0.0.1 (tests/_openai_stub.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from typing import Any

import pytest

httpx = pytest.importorskip("httpx")

from _openai_stub import OpenAIStub, closed_port_url  # noqa: E402
from precis.errors import ConfigError, FormatError, LLMError, MissingDependencyError  # noqa: E402
from precis.llm import ChatClient, ChatModel, Completion  # noqa: E402

ASK = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello?"}]


def make(stub: OpenAIStub, **options: Any) -> ChatClient:
    options.setdefault("model", "stub-model")
    options.setdefault("backoff", 0)
    return ChatClient(stub.url, **options)


def test_complete_sends_the_wire_format_and_reads_the_answer(openai_stub: OpenAIStub) -> None:
    client = make(openai_stub, api_key="sekret")
    out = client.complete(ASK)
    assert out.text == "Stub summary."
    assert (out.prompt_tokens, out.completion_tokens, out.tokens) == (120, 7, 127)
    assert out.model == "stub-model"
    assert 0 < out.elapsed_s < 5
    [request] = openai_stub.requests
    assert request.path == "/v1/chat/completions"
    assert request.body == {"model": "stub-model", "messages": ASK, "temperature": 0.0,
                            "stream": False}
    assert request.headers["Authorization"] == "Bearer sekret"
    assert request.headers["Content-Type"] == "application/json"
    assert isinstance(client, ChatModel)
    assert client.name == "llm:stub-model"


def test_answer_text_is_stripped_and_unicode_survives(openai_stub: OpenAIStub) -> None:
    openai_stub.reply = "  摘要：部署到 staging 成功。\n"
    out = make(openai_stub).complete([{"role": "user", "content": "总结一下：部署日志……"}])
    assert out.text == "摘要：部署到 staging 成功。"
    assert openai_stub.requests[0].body["messages"][0]["content"] == "总结一下：部署日志……"


def test_max_tokens_default_and_per_call(openai_stub: OpenAIStub) -> None:
    client = make(openai_stub, max_tokens=300, temperature=0.5)
    client.complete(ASK)
    client.complete(ASK, max_tokens=20)
    first, second = openai_stub.bodies
    assert (first["max_tokens"], first["temperature"]) == (300, 0.5)
    assert second["max_tokens"] == 20
    make(openai_stub).complete(ASK)
    assert "max_tokens" not in openai_stub.bodies[2]


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        (None, (0, 0)),
        ({"prompt_tokens": 9}, (9, 0)),
        ({"prompt_tokens": "9", "completion_tokens": -1}, (0, 0)),
        ({"prompt_tokens": True, "completion_tokens": 2.5}, (0, 0)),
        ("lots", (0, 0)),
    ],
)
def test_usage_is_read_when_usable(openai_stub: OpenAIStub, usage: Any,
                                   expected: tuple[int, int]) -> None:
    openai_stub.usage = usage
    out = make(openai_stub).complete(ASK)
    assert (out.prompt_tokens, out.completion_tokens) == expected
    assert out.text == "Stub summary."


def test_no_key_sends_no_authorization(openai_stub: OpenAIStub) -> None:
    make(openai_stub).complete(ASK)
    make(openai_stub, api_key="").complete(ASK)
    assert all("Authorization" not in r.headers for r in openai_stub.requests)


def test_environment_gives_url_key_and_model(openai_stub: OpenAIStub,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRECIS_LLM_URL", openai_stub.url + "/")
    monkeypatch.setenv("PRECIS_LLM_KEY", "from-env")
    monkeypatch.setenv("PRECIS_LLM_MODEL", "env-model")
    client = ChatClient()
    assert client.complete(ASK).model == "env-model"
    request = openai_stub.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["Authorization"] == "Bearer from-env"
    assert request.body["model"] == "env-model"
    # arguments win over the environment
    ChatClient(openai_stub.url, "arg-key", "arg-model").complete(ASK)
    assert openai_stub.requests[1].headers["Authorization"] == "Bearer arg-key"
    assert openai_stub.requests[1].body["model"] == "arg-model"


def test_a_full_endpoint_url_is_used_as_is(openai_stub: OpenAIStub) -> None:
    client = ChatClient(openai_stub.url + "/chat/completions", model="m")
    assert client.url == openai_stub.url + "/chat/completions"
    client.complete(ASK)
    assert openai_stub.requests[0].path == "/v1/chat/completions"


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"base_url": "http://x/v1"}, "PRECIS_LLM_MODEL"),
        ({"base_url": "http://x/v1", "model": "  "}, "PRECIS_LLM_MODEL"),
        ({"model": "m"}, "PRECIS_LLM_URL must be an http(s) URL"),
        ({"base_url": "localhost:8000/v1", "model": "m"}, "base_url must be an http(s) URL"),
        ({"base_url": "http://x/v1", "model": "m", "timeout": 0}, "timeout must be"),
        ({"base_url": "http://x/v1", "model": "m", "retries": -1}, "retries must be"),
        ({"base_url": "http://x/v1", "model": "m", "backoff": float("nan")}, "backoff must be"),
        ({"base_url": "http://x/v1", "model": "m", "max_tokens": 0}, "max_tokens must be"),
        ({"base_url": "http://x/v1", "model": "m", "temperature": 3}, "temperature must be"),
        ({"base_url": "http://x/v1", "model": "m", "temperature": True}, "temperature must be"),
    ],
)
def test_bad_settings_are_named(options: dict[str, Any], problem: str) -> None:
    with pytest.raises(ConfigError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        ChatClient(**options)


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        ([], "non-empty list"),
        ("hello", "non-empty list"),
        (["hello"], "message 0 is str"),
        ([{"role": "robot", "content": "x"}], "message 0 has role 'robot'"),
        ([{"role": "user", "content": "x"}, {"role": "user"}], "message 1 has no text"),
    ],
)
def test_bad_messages_are_refused_before_sending(openai_stub: OpenAIStub, messages: Any,
                                                 problem: str) -> None:
    with pytest.raises(FormatError, match=problem):
        make(openai_stub).complete(messages)
    assert openai_stub.requests == []


def test_server_error_then_success_is_retried(openai_stub: OpenAIStub) -> None:
    openai_stub.queue = ["500"]
    out = make(openai_stub, retries=2).complete(ASK)
    assert out.text == "Stub summary."
    assert len(openai_stub.requests) == 2
    assert openai_stub.bodies[0] == openai_stub.bodies[1]


def test_server_error_after_the_last_retry(openai_stub: OpenAIStub) -> None:
    openai_stub.mode = "500"
    client = make(openai_stub, retries=2)
    with pytest.raises(LLMError) as info:
        client.complete(ASK)
    assert len(openai_stub.requests) == 3
    assert info.value.where == openai_stub.url + "/chat/completions"
    message = str(info.value)
    assert message.startswith(openai_stub.url + "/chat/completions: HTTP 500: ")
    assert "stub overloaded" in message and "(after 3 attempts)" in message


def test_retries_wait_with_exponential_backoff(openai_stub: OpenAIStub) -> None:
    openai_stub.queue = ["500", "500"]
    make(openai_stub, retries=2, backoff=0.1).complete(ASK)
    first, second, third = (r.at for r in openai_stub.requests)
    assert second - first >= 0.1
    assert third - second >= 0.2


def test_rate_limit_honours_retry_after(openai_stub: OpenAIStub) -> None:
    openai_stub.queue = ["429"]
    openai_stub.retry_after = "0.3"
    out = make(openai_stub, retries=1, backoff=0).complete(ASK)
    assert out.text == "Stub summary."
    first, second = (r.at for r in openai_stub.requests)
    assert second - first >= 0.3


def test_rate_limit_after_the_last_retry(openai_stub: OpenAIStub) -> None:
    openai_stub.mode = "429"
    with pytest.raises(LLMError, match=r"HTTP 429: .*rate limited.*\(after 2 attempts\)"):
        make(openai_stub, retries=1).complete(ASK)


def test_client_error_is_not_retried_and_the_body_is_cut(openai_stub: OpenAIStub) -> None:
    body = json.dumps({"error": {"message": "model 'x' not found " + "z" * 400}})
    openai_stub.queue = [(404, body, {})]
    with pytest.raises(LLMError) as info:
        make(openai_stub, retries=3).complete(ASK)
    assert len(openai_stub.requests) == 1
    message = str(info.value)
    assert openai_stub.url + "/chat/completions" in message
    assert "HTTP 404: " + body[:200] + "..." in message
    assert body[:201] not in message


def test_timeout(openai_stub: OpenAIStub) -> None:
    openai_stub.mode = "slow"
    openai_stub.delay = 1.0
    start = time.perf_counter()
    with pytest.raises(LLMError, match=r"no answer within 0.2 s \(after 2 attempts\)"):
        make(openai_stub, timeout=0.2, retries=1).complete(ASK)
    assert time.perf_counter() - start < 1.5
    assert len(openai_stub.requests) == 2


def test_a_slow_answer_then_a_quick_one(openai_stub: OpenAIStub) -> None:
    openai_stub.queue = ["slow"]
    openai_stub.delay = 0.6
    assert make(openai_stub, timeout=0.2, retries=1).complete(ASK).text == "Stub summary."
    assert len(openai_stub.requests) == 2


def test_connection_refused() -> None:
    url = closed_port_url()
    client = ChatClient(url, model="m", retries=1, backoff=0)
    with pytest.raises(LLMError, match=r"connection failed.*\(after 2 attempts\)") as info:
        client.complete(ASK)
    assert info.value.where == url + "/chat/completions"


def _raw(body: str) -> tuple[int, str, dict[str, str]]:
    return (200, body, {})


@pytest.mark.parametrize(
    ("mode", "problem"),
    [
        ("not_json", "malformed JSON answer: <html><body>502 upstream gone</body></html>"),
        ("no_choices", "bad answer: 'choices' is empty"),
        ("wrong_types", "bad answer: choices[0].message.content is int, not text"),
        ("empty_content", "bad answer: choices[0].message.content is empty"),
        (_raw('{"object": "chat.completion"}'), "bad answer: no 'choices' list"),
        (_raw('{"choices": {"0": "x"}}'), "bad answer: no 'choices' list"),
        (_raw('[{"choices": []}]'), "bad answer: expected a JSON object, got list"),
        (_raw('"text"'), "bad answer: expected a JSON object, got str"),
        (_raw('{"choices": [{"text": "legacy"}]}'), "choices[0] has no 'message' object"),
        (_raw('{"choices": ["x"]}'), "choices[0] has no 'message' object"),
        (_raw('{"choices": [{"message": {"role": "assistant", "content": null}}]}'),
         "choices[0].message has no content"),
        (_raw('{"choices": [{"message": {"content": ["a", "b"]}}]}'),
         "choices[0].message.content is list, not text"),
        (_raw('{"error": {"message": "context length exceeded"}}'),
         "the endpoint reports an error: {'message': 'context length exceeded'}"),
        (_raw(""), "malformed JSON answer: (empty body)"),
    ],
)
def test_junk_answers_raise_llm_error(openai_stub: OpenAIStub, mode: Any, problem: str) -> None:
    openai_stub.mode = mode
    with pytest.raises(LLMError) as info:
        make(openai_stub, retries=2).complete(ASK)
    assert problem in str(info.value)
    assert info.value.where == openai_stub.url + "/chat/completions"
    assert len(openai_stub.requests) == 1  # junk is not retried


def test_one_client_serves_many_threads(openai_stub: OpenAIStub) -> None:
    openai_stub.reply = lambda body: "answer to " + body["messages"][-1]["content"]
    client = make(openai_stub)
    answers: dict[int, str] = {}

    def ask(i: int) -> None:
        answers[i] = client.complete([{"role": "user", "content": f"q{i}"}]).text

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == {i: f"answer to q{i}" for i in range(8)}
    assert len(openai_stub.requests) == 8


def test_injected_transport_is_used() -> None:
    seen: list[Any] = []

    def answer(request: Any) -> Any:
        seen.append(json.loads(request.content))
        return httpx.Response(200, json={"choices": [{"message": {"content": "via transport"}}]})

    client = ChatClient("http://llm.invalid/v1", model="m",
                        transport=httpx.MockTransport(answer))
    out = client.complete(ASK)
    assert out == Completion("via transport", 0, 0, "m", out.elapsed_s)
    assert seen[0]["messages"] == ASK


def test_context_manager_closes(openai_stub: OpenAIStub) -> None:
    with make(openai_stub) as client:
        client.complete(ASK)
    with pytest.raises(LLMError, match="the client is closed"):
        client.complete(ASK)
    assert len(openai_stub.requests) == 1


def test_missing_httpx_gives_the_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "httpx", None)
    with pytest.raises(MissingDependencyError, match=r"precis\[remote\]") as info:
        ChatClient("http://127.0.0.1:9/v1", model="m")
    assert info.value.package == "httpx" and info.value.extra == "remote"


def test_importing_precis_and_the_llm_layer_does_not_import_httpx() -> None:
    code = ("import sys, precis, precis.llm; "
            "print(sorted(m for m in ('httpx', 'precis.analysis') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
