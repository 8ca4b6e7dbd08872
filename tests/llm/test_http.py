"""The shared JSON-over-HTTP client (precis.llm._http) that the chat client and the
OpenAI-compatible embedder both use, against the real stub server."""

from __future__ import annotations

import time
from email.utils import formatdate

import pytest

httpx = pytest.importorskip("httpx")

from _openai_stub import DIM, OpenAIStub, bag_of_words  # noqa: E402
from precis.errors import ConfigError, EmbeddingError, LLMError  # noqa: E402
from precis.llm._http import JSONClient, endpoint_url, retry_after, snippet  # noqa: E402


def make(stub: OpenAIStub, **options: object) -> JSONClient:
    return JSONClient(stub.url + "/chat/completions", error=LLMError, purpose="testing",
                      where="test", **options)  # type: ignore[arg-type]


def test_retry_after_is_capped(openai_stub: OpenAIStub) -> None:
    openai_stub.queue = ["429"]
    openai_stub.retry_after = "3600"
    start = time.perf_counter()
    answer = make(openai_stub, retries=1, backoff=0, max_delay=0.2).post(
        {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    )
    assert answer["choices"][0]["message"]["content"] == "Stub summary."
    first, second = (r.at for r in openai_stub.requests)
    assert 0.2 <= second - first < 1.0
    assert time.perf_counter() - start < 1.5


def test_retry_after_as_an_http_date(openai_stub: OpenAIStub) -> None:
    openai_stub.queue = ["429"]
    openai_stub.retry_after = formatdate(time.time() + 2, usegmt=True)  # whole seconds
    make(openai_stub, retries=1, backoff=0).post({"model": "m", "messages": []})
    first, second = (r.at for r in openai_stub.requests)
    assert second - first >= 0.9


def test_the_error_class_is_the_callers(openai_stub: OpenAIStub) -> None:
    openai_stub.mode = "500"
    client = JSONClient(openai_stub.url + "/embeddings", error=EmbeddingError,
                        purpose="testing", where="test", retries=0)
    with pytest.raises(EmbeddingError, match=r"HTTP 500: .*stub overloaded") as info:
        client.post({"model": "m", "input": ["a"]})
    assert info.value.where == openai_stub.url + "/embeddings"
    assert "after" not in str(info.value)  # one attempt only


@pytest.mark.parametrize(
    ("value", "seconds"),
    [(None, None), ("0", 0.0), ("2.5", 2.5), ("-1", None), ("nan", None), ("inf", None),
     ("soon", None), ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0)],  # a date in the past: now
)
def test_retry_after_values(value: str | None, seconds: float | None) -> None:
    assert retry_after(value) == seconds


def test_snippet_is_one_line_and_cut() -> None:
    assert snippet("a\n  b\tc") == "a b c"
    assert snippet("   ") == "(empty body)"
    assert snippet("x" * 250) == "x" * 200 + "..."


def test_endpoint_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_URL", "https://api.example.com/v1/")
    assert endpoint_url(None, "SOME_URL", "/embeddings", where="w") == (
        "https://api.example.com/v1/embeddings"
    )
    assert endpoint_url("http://h/v1/embeddings", "SOME_URL", "/embeddings", where="w") == (
        "http://h/v1/embeddings"
    )
    monkeypatch.delenv("SOME_URL")
    with pytest.raises(ConfigError, match="SOME_URL must be an http") as info:
        endpoint_url(None, "SOME_URL", "/embeddings", where="w")
    assert info.value.where == "w"


def test_the_embedder_uses_the_same_client(openai_stub: OpenAIStub) -> None:
    np = pytest.importorskip("numpy")
    from precis.memory.embed import OpenAIEmbedder

    openai_stub.queue = ["429"]
    embedder = OpenAIEmbedder("bow", base_url=openai_stub.url, api_key="k", backoff=0)
    out = embedder.embed(["the cat sat", "a dog"])
    expected = np.array([bag_of_words("the cat sat"), bag_of_words("a dog")])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert out.shape == (2, DIM) and np.allclose(out, expected, atol=1e-6)
    assert [r.path for r in openai_stub.requests] == ["/v1/embeddings"] * 2
    assert openai_stub.requests[1].body == {"model": "bow", "input": ["the cat sat", "a dog"]}
    assert openai_stub.requests[1].headers["Authorization"] == "Bearer k"
