"""CachedEmbedder over the in-memory cache: only new texts reach the wrapped embedder."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import pytest

np = pytest.importorskip("numpy")

from precis.errors import EmbeddingError  # noqa: E402
from precis.memory.embed import (  # noqa: E402
    CachedEmbedder,
    Embedder,
    EmbeddingCache,
    InMemoryEmbeddingCache,
    content_key,
)


class Counting:
    """Deterministic vectors from a hash of each text; records every text it embeds."""

    def __init__(self, name: str = "count", dim: int = 8) -> None:
        self.name = name
        self.dim = dim
        self.seen: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.seen += texts
        rows = [
            np.frombuffer(hashlib.sha256(t.encode()).digest()[: self.dim], dtype=np.uint8)
            for t in texts
        ]
        out = np.array(rows, dtype=np.float32).reshape(len(texts), self.dim) + 1
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_protocols_are_met() -> None:
    cache = InMemoryEmbeddingCache()
    assert isinstance(cache, EmbeddingCache)
    assert isinstance(CachedEmbedder(Counting(), cache), Embedder)


def test_second_call_embeds_nothing_new() -> None:
    inner, cache = Counting(), InMemoryEmbeddingCache()
    cached = CachedEmbedder(inner, cache)
    texts = ["alpha", "beta", "alpha", "gamma"]
    first = cached.embed(texts)
    assert inner.seen == ["alpha", "beta", "gamma"]  # each distinct text once
    assert len(cache) == 3
    second = cached.embed(texts)
    assert inner.seen == ["alpha", "beta", "gamma"]
    assert first.dtype == np.float32 and first.shape == (4, 8)
    assert np.array_equal(first, second)
    assert np.array_equal(first, Counting().embed(texts))  # same as without a cache
    assert np.array_equal(first[0], first[2])


def test_only_the_new_texts_are_embedded() -> None:
    inner = Counting()
    cached = CachedEmbedder(inner, InMemoryEmbeddingCache())
    cached.embed(["a", "b"])
    out = cached.embed(["b", "c", "a", "d"])
    assert inner.seen == ["a", "b", "c", "d"]
    assert np.array_equal(out, Counting().embed(["b", "c", "a", "d"]))


def test_models_do_not_share_entries() -> None:
    cache = InMemoryEmbeddingCache()
    one, two = Counting("model-one"), Counting("model-two")
    CachedEmbedder(one, cache).embed(["x", "y"])
    CachedEmbedder(two, cache).embed(["x", "y"])
    assert one.seen == ["x", "y"] and two.seen == ["x", "y"]
    assert len(cache) == 4
    assert set(cache.get_many("model-one", [content_key("x")])) == {content_key("x")}


def test_cache_holds_little_endian_float32_bytes_by_content_key() -> None:
    cache = InMemoryEmbeddingCache()
    vector = CachedEmbedder(Counting(), cache).embed(["hello"])[0]
    blob = cache.get_many("count", [content_key("hello"), content_key("other")])
    assert list(blob) == [content_key("hello")]
    assert np.array_equal(np.frombuffer(blob[content_key("hello")], dtype="<f4"), vector)


def test_stored_vectors_of_another_length_are_replaced() -> None:
    cache = InMemoryEmbeddingCache()
    CachedEmbedder(Counting(dim=4), cache).embed(["old"])
    inner = Counting(dim=8)  # same name, the model now gives 8 values
    out = CachedEmbedder(inner, cache).embed(["old", "new"])
    assert out.shape == (2, 8)
    assert sorted(inner.seen) == ["new", "old"]
    assert len(cache.get_many("count", [content_key("old")])[content_key("old")]) == 32


def test_empty_and_bad_input() -> None:
    inner = Counting()
    cached = CachedEmbedder(inner, InMemoryEmbeddingCache())
    assert cached.embed([]).shape == (0, 8)
    assert cached.name == "count" and cached.dim == 8
    with pytest.raises(EmbeddingError, match="not a single string"):
        cached.embed("hello")
    with pytest.raises(EmbeddingError, match="text 1 is a int"):
        cached.embed(["a", 3])  # type: ignore[list-item]
