"""The OpenAI-compatible embedder against a real HTTP server on 127.0.0.1.

The stub (tests/_openai_stub.py) speaks the OpenAI wire format: ``POST /v1/embeddings``
answers a hashed bag of words (16 values); each test queues special answers (an error, a
delay, a raw body) for the next requests.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

np = pytest.importorskip("numpy")
httpx = pytest.importorskip("httpx")

from _openai_stub import DIM, OpenAIStub, bag_of_words  # noqa: E402
from precis.errors import EmbeddingError  # noqa: E402
from precis.memory.embed import OpenAIEmbedder, get_embedder  # noqa: E402


def unit(rows: list[list[float]]) -> Any:
    array = np.array(rows, dtype=np.float64)
    return array / np.linalg.norm(array, axis=1, keepdims=True)


@pytest.fixture
def stub(openai_stub: OpenAIStub) -> OpenAIStub:
    return openai_stub


def make(stub: OpenAIStub, **options: Any) -> OpenAIEmbedder:
    options.setdefault("backoff", 0)
    embedder = get_embedder("openai:bow-16", base_url=stub.url, **options)
    assert isinstance(embedder, OpenAIEmbedder)
    return embedder


TEXTS = ["the cat sat", "on the mat", "a dog", "dogs and cats and dogs", "x"]


def test_embeds_and_sends_the_wire_format(stub: OpenAIStub) -> None:
    embedder = make(stub, api_key="sekret")
    out = embedder.embed(TEXTS[:2])
    assert out.dtype == np.float32 and out.shape == (2, DIM)
    assert np.allclose(out, unit([bag_of_words(t) for t in TEXTS[:2]]), atol=1e-6)
    assert np.allclose(np.linalg.norm(out, axis=1), 1, atol=1e-6)
    [request] = stub.requests
    assert request.path == "/v1/embeddings"
    assert request.body == {"model": "bow-16", "input": TEXTS[:2]}
    assert request.headers["Authorization"] == "Bearer sekret"
    assert embedder.name == "openai:bow-16" and embedder.dim == DIM


def test_no_key_sends_no_authorization(stub: OpenAIStub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PRECIS_EMBED_KEY", raising=False)
    make(stub).embed(["a"])
    assert "Authorization" not in stub.requests[0].headers


def test_environment_gives_url_and_key(stub: OpenAIStub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRECIS_EMBED_URL", stub.url + "/")
    monkeypatch.setenv("PRECIS_EMBED_KEY", "from-env")
    embedder = get_embedder("openai:bow-16", retries=0)
    assert embedder is not None
    embedder.embed(["a"])
    assert stub.requests[0].path == "/v1/embeddings"
    assert stub.requests[0].headers["Authorization"] == "Bearer from-env"


def test_batches_give_the_same_vectors(stub: OpenAIStub) -> None:
    whole = make(stub).embed(TEXTS)
    assert len(stub.requests) == 1
    stub.requests.clear()
    batched = make(stub, batch_size=2).embed(TEXTS)
    assert [r.body["input"] for r in stub.requests] == [TEXTS[0:2], TEXTS[2:4], TEXTS[4:]]
    assert np.array_equal(whole, batched)


def test_rows_follow_index_not_answer_order(stub: OpenAIStub) -> None:
    stub.queue = ["reversed"]
    out = make(stub).embed(TEXTS)
    assert np.allclose(out, unit([bag_of_words(t) for t in TEXTS]), atol=1e-6)


def test_dim_is_learned_from_a_probe(stub: OpenAIStub) -> None:
    embedder = make(stub)
    assert embedder.known_dim is None
    assert embedder.dim == DIM
    assert len(stub.requests) == 1
    assert embedder.known_dim == DIM
    assert make(stub, dim=DIM).dim == DIM and len(stub.requests) == 1  # given: no probe


def test_server_error_then_success_is_retried(stub: OpenAIStub) -> None:
    stub.queue = [(500, '{"error": "overloaded"}', {})]
    out = make(stub, retries=2).embed(["a b"])
    assert len(stub.requests) == 2
    assert np.allclose(out[0], unit([bag_of_words("a b")])[0], atol=1e-6)


def test_rate_limit_is_retried(stub: OpenAIStub) -> None:
    stub.queue = [(429, "slow down", {"Retry-After": "0"}), (503, "busy", {})]
    make(stub, retries=2).embed(["a"])
    assert len(stub.requests) == 3


def test_retries_wait_with_exponential_backoff(stub: OpenAIStub) -> None:
    stub.queue = [(502, "bad gateway", {}), (502, "bad gateway", {})]
    start = time.perf_counter()
    make(stub, retries=2, backoff=0.1).embed(["a"])
    assert time.perf_counter() - start >= 0.3  # 0.1 then 0.2 s
    assert len(stub.requests) == 3


def test_server_error_after_the_last_retry(stub: OpenAIStub) -> None:
    stub.queue = [(500, "boom one", {}), (500, "boom two", {})]
    embedder = make(stub, retries=1)
    with pytest.raises(EmbeddingError, match="HTTP 500: boom two") as info:
        embedder.embed(["a"])
    assert info.value.where == stub.url + "/embeddings"
    assert "after 2 attempts" in str(info.value)


def test_client_error_is_not_retried_and_body_is_cut(stub: OpenAIStub) -> None:
    body = json.dumps({"error": {"message": "model not found " + "z" * 400}})
    stub.queue = [(404, body, {})]
    with pytest.raises(EmbeddingError) as info:
        make(stub, retries=3).embed(["a"])
    assert len(stub.requests) == 1
    message = str(info.value)
    assert stub.url + "/embeddings" in message
    assert "HTTP 404: " + body[:200] + "..." in message
    assert body[:201] not in message


def test_timeout(stub: OpenAIStub) -> None:
    stub.queue = [("sleep", 1.0), ("sleep", 1.0)]
    start = time.perf_counter()
    with pytest.raises(EmbeddingError, match=r"no answer within 0.2 s \(after 2 attempts\)"):
        make(stub, timeout=0.2, retries=1).embed(["a"])
    assert time.perf_counter() - start < 1.5
    assert len(stub.requests) == 2


def test_connection_refused(stub: OpenAIStub) -> None:
    with socket_closed_port() as port:
        embedder = get_embedder(
            "openai:m", base_url=f"http://127.0.0.1:{port}/v1", retries=1, backoff=0
        )
        assert embedder is not None
        with pytest.raises(EmbeddingError, match="connection failed") as info:
            embedder.embed(["a"])
    assert info.value.where == f"http://127.0.0.1:{port}/v1/embeddings"


class socket_closed_port:
    """A port on 127.0.0.1 that nothing listens on."""

    def __enter__(self) -> int:
        import socket

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            return int(sock.getsockname()[1])

    def __exit__(self, *exc: object) -> None:
        pass


def _data(*rows: Any) -> str:
    return json.dumps({"data": [{"index": i, "embedding": r} for i, r in enumerate(rows)]})


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ("not json at all", "malformed JSON answer: not json at all"),
        ('{"object": "list"}', "no 'data' list"),
        ('["data"]', "no 'data' list"),
        (_data([1.0, 2.0]), "1 embeddings for 2 texts"),
        (_data([1.0, 2.0], [1.0, "2"]), "data[1].embedding holds non-numeric values"),
        (_data([1.0, 2.0], [1.0, None]), "data[1].embedding holds non-numeric values"),
        (_data([1.0, 2.0], [[1.0], [2.0]]), "data[1].embedding holds non-numeric values"),
        (_data([1.0, 2.0], []), "data[1].embedding is not a non-empty list"),
        (_data([1.0, 2.0], "AAAA"), "data[1].embedding is not a non-empty list"),
        ('{"data": [{"index": 0, "embedding": [NaN, 1]}, {"index": 1, "embedding": [1, 1]}]}',
         "NaN or infinite"),
        (_data([1.0, 2.0], [1.0, 2.0, 3.0]), "data[1].embedding has 3 values, expected 2"),
        ('{"data": [{"index": 0, "embedding": [1, 2]}, {"index": 0, "embedding": [1, 2]}]}',
         "index 0 appears twice"),
        ('{"data": [{"index": 0, "embedding": [1, 2]}, {"index": 2, "embedding": [1, 2]}]}',
         "data[1] has index 2 (expected 0..1)"),
        ('{"data": [{"index": 0, "embedding": [1, 2]}, {"index": 1}]}',
         "data[1] has no 'embedding'"),
    ],
)
def test_malformed_answers(stub: OpenAIStub, answer: str, problem: str) -> None:
    stub.queue = [lambda body: answer]
    with pytest.raises(EmbeddingError) as info:
        make(stub).embed(["one", "two"])
    assert problem in str(info.value)
    assert info.value.where == stub.url + "/embeddings"


def test_dim_must_match_the_given_one(stub: OpenAIStub) -> None:
    with pytest.raises(EmbeddingError, match=f"has {DIM} values, expected 8"):
        make(stub, dim=8).embed(["a"])


def test_dim_must_stay_the_same_across_batches(stub: OpenAIStub) -> None:
    embedder = make(stub, batch_size=1)
    stub.queue = ["ok", lambda body: _data([1.0, 2.0])]
    with pytest.raises(EmbeddingError, match=f"has 2 values, expected {DIM}"):
        embedder.embed(["a", "b"])


def test_injected_transport_is_used() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        texts = json.loads(request.content)["input"]
        data = [{"index": i, "embedding": bag_of_words(t)} for i, t in enumerate(texts)]
        return httpx.Response(200, json={"data": data})

    embedder = get_embedder(
        "openai:m", base_url="http://embed.invalid/v1", transport=httpx.MockTransport(answer)
    )
    assert embedder is not None
    out = embedder.embed(["a b", "c"])
    assert np.allclose(out, unit([bag_of_words("a b"), bag_of_words("c")]), atol=1e-6)
    assert str(seen[0].url) == "http://embed.invalid/v1/embeddings"


def test_empty_input_sends_nothing(stub: OpenAIStub) -> None:
    assert make(stub, dim=DIM).embed([]).shape == (0, DIM)
    assert stub.requests == []
