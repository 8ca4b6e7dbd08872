"""Embeddings from any OpenAI-compatible endpoint (OpenAI, vLLM, TEI, Ollama, llama.cpp, ...).

``POST {base_url}/embeddings`` with ``{"model", "input": [...]}`` and a Bearer key; the
answer's ``data[i].embedding`` rows are put back in ``index`` order, checked and normalised.
Needs ``httpx`` (``pip install 'precis[remote]'``); callers may inject an httpx transport.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from precis.errors import ConfigError, EmbeddingError
from precis.llm._http import (
    JSONClient,
    check_positive_int,
    endpoint_url,
    env_key,
    import_httpx,
)
from precis.memory.embed.base import Vectors, check_texts, import_numpy, normalise_rows

if TYPE_CHECKING:
    import httpx

__all__ = ["EMBED_KEY_ENV", "EMBED_URL_ENV", "OpenAIEmbedder"]

EMBED_URL_ENV = "PRECIS_EMBED_URL"
EMBED_KEY_ENV = "PRECIS_EMBED_KEY"
_PURPOSE = "embedding with an OpenAI-compatible endpoint"
_WHERE = "embedder"


class OpenAIEmbedder:
    """Vectors of ``model`` from an OpenAI-compatible ``/embeddings`` endpoint.

    ``base_url`` (e.g. ``http://localhost:8080/v1``) and ``api_key`` default to
    ``$PRECIS_EMBED_URL`` / ``$PRECIS_EMBED_KEY``; no key sends no ``Authorization``.
    ``dim`` is checked against every answer, or learned from the first one (reading
    :attr:`dim` before any answer sends one short probe text). A request is retried
    ``retries`` times after a connection error, a timeout, HTTP 408/429/5xx, waiting
    ``backoff * 2**attempt`` seconds (or the server's ``Retry-After``, up to 30 s).
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        dim: int | None = None,
        batch_size: int = 64,
        timeout: float = 30.0,
        retries: int = 2,
        backoff: float = 0.5,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        import_numpy("remote", _PURPOSE)
        import_httpx(_PURPOSE)
        if not isinstance(model, str) or not model.strip():
            raise ConfigError("an embedding model must be named: openai:<model>", where=_WHERE)
        self.url = endpoint_url(base_url, EMBED_URL_ENV, "/embeddings", where=_WHERE)
        self.model = model
        self.name = f"openai:{model}"
        self.batch_size = check_positive_int("batch_size", batch_size, where=_WHERE)
        self._dim = None if dim is None else check_positive_int("dim", dim, where=_WHERE)
        self._http = JSONClient(
            self.url,
            error=EmbeddingError,
            purpose=_PURPOSE,
            where=_WHERE,
            api_key=env_key(api_key, EMBED_KEY_ENV),
            timeout=timeout,
            retries=retries,
            backoff=backoff,
            transport=transport,
        )
        self.retries = self._http.retries
        self.backoff = self._http.backoff

    @property
    def dim(self) -> int:
        if self._dim is None:
            self.embed(["dimension probe"])
        assert self._dim is not None
        return self._dim

    @property
    def known_dim(self) -> int | None:
        """The vector length if given or already learned, without asking the endpoint."""
        return self._dim

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> OpenAIEmbedder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def embed(self, texts: Sequence[str]) -> Vectors:
        np = import_numpy("remote", _PURPOSE)
        items = check_texts(texts)
        if not items:
            return np.zeros((0, self._dim or 0), dtype=np.float32)  # type: ignore[no-any-return]
        parts = [
            self._embed_batch(items[i : i + self.batch_size])
            for i in range(0, len(items), self.batch_size)
        ]
        return normalise_rows(np.concatenate(parts) if len(parts) > 1 else parts[0])

    def _embed_batch(self, texts: list[str]) -> Vectors:
        answer = self._http.post({"model": self.model, "input": texts})
        return self._parse(answer, len(texts))

    def _parse(self, answer: Any, count: int) -> Vectors:
        np = import_numpy("remote", _PURPOSE)

        def bad(problem: str) -> EmbeddingError:
            return EmbeddingError(f"bad answer: {problem}", where=self.url)

        data = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(data, list):
            raise bad("no 'data' list")
        if len(data) != count:
            raise bad(f"{len(data)} embeddings for {count} texts")
        rows: list[Any] = [None] * count
        for position, item in enumerate(data):
            if not isinstance(item, dict) or "embedding" not in item:
                raise bad(f"data[{position}] has no 'embedding'")
            index = item.get("index", position)
            if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < count:
                raise bad(f"data[{position}] has index {index!r} (expected 0..{count - 1})")
            if rows[index] is not None:
                raise bad(f"index {index} appears twice")
            rows[index] = self._vector(item["embedding"], position, bad, np)
        return np.stack(rows)  # type: ignore[no-any-return]

    def _vector(self, value: Any, position: int, bad: Any, np: Any) -> Any:
        if not isinstance(value, list) or not value:
            raise bad(f"data[{position}].embedding is not a non-empty list of numbers")
        vector = np.array(value)
        if vector.ndim != 1 or vector.dtype.kind not in "fiu":
            raise bad(f"data[{position}].embedding holds non-numeric values")
        vector = vector.astype(np.float32)
        if not np.isfinite(vector).all():
            raise bad(f"data[{position}].embedding holds NaN or infinite values")
        if self._dim is None:
            self._dim = len(vector)
        elif len(vector) != self._dim:
            raise bad(f"data[{position}].embedding has {len(vector)} values, expected {self._dim}")
        return vector

