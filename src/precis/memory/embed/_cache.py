"""Embedding caches: an in-memory one, and :class:`CachedEmbedder` that embeds only new texts."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from precis.memory.embed.base import (
    Embedder,
    EmbeddingCache,
    Vectors,
    check_texts,
    content_key,
)

__all__ = ["CachedEmbedder", "InMemoryEmbeddingCache"]


class InMemoryEmbeddingCache:
    """An :class:`EmbeddingCache` in a dict (per process, thread-safe, unbounded)."""

    def __init__(self) -> None:
        self._data: dict[tuple[str, str], bytes] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._data)

    def get_many(self, model: str, keys: Sequence[str]) -> dict[str, bytes]:
        with self._lock:
            return {k: self._data[(model, k)] for k in keys if (model, k) in self._data}

    def put_many(self, model: str, items: Sequence[tuple[str, bytes]]) -> None:
        with self._lock:
            for key, value in items:
                self._data[(model, key)] = bytes(value)


class CachedEmbedder:
    """An :class:`Embedder` that looks each text up in ``cache`` first (by ``inner.name``).

    Only texts with no stored vector go to ``inner``, each distinct text once, and their
    vectors are stored. Stored vectors whose length differs from the fresh ones (the model
    behind the name changed) are computed again.
    """

    def __init__(self, inner: Embedder, cache: EmbeddingCache) -> None:
        self.inner = inner
        self.cache = cache

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    @property
    def languages(self) -> tuple[str, ...] | None:
        """The inner embedder's languages, if it declares them (``None``: any)."""
        return getattr(self.inner, "languages", None)

    def embed(self, texts: Sequence[str]) -> Vectors:
        import numpy as np

        items = check_texts(texts)
        if not items:
            return self.inner.embed([])
        model = self.inner.name
        keys = [content_key(t) for t in items]
        wanted = dict(zip(keys, items))  # each distinct text once
        found: dict[str, Vectors] = {
            key: np.frombuffer(blob, dtype="<f4")
            for key, blob in self.cache.get_many(model, list(wanted)).items()
            if key in wanted and blob and len(blob) % 4 == 0
        }
        if len({v.shape[0] for v in found.values()}) > 1:
            found = {}  # stored under one name with two lengths: trust none of them
        todo = [k for k in wanted if k not in found]
        if todo:
            self._embed_into(found, todo, wanted)
            dim = found[todo[0]].shape[0]
            stale = [k for k, v in found.items() if v.shape[0] != dim]
            if stale:  # the model behind this name changed its vector length
                self._embed_into(found, stale, wanted)
        out = np.empty((len(keys), found[keys[0]].shape[0]), dtype=np.float32)
        for row, key in enumerate(keys):
            out[row] = found[key]
        return out

    def _embed_into(
        self, found: dict[str, Vectors], keys: list[str], texts: dict[str, str]
    ) -> None:
        fresh = self.inner.embed([texts[k] for k in keys])
        self.cache.put_many(
            self.inner.name, [(k, row.astype("<f4").tobytes()) for k, row in zip(keys, fresh)]
        )
        found.update(zip(keys, fresh))
