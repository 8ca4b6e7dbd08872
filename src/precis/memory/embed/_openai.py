"""Embeddings from any OpenAI-compatible endpoint (OpenAI, vLLM, TEI, Ollama, llama.cpp, ...).

``POST {base_url}/embeddings`` with ``{"model", "input": [...]}`` and a Bearer key; the
answer's ``data[i].embedding`` rows are put back in ``index`` order, checked and normalised.
Needs ``httpx`` (``pip install 'precis[remote]'``); callers may inject an httpx transport.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from precis.errors import ConfigError, EmbeddingError, MissingDependencyError
from precis.memory.embed.base import Vectors, check_texts, import_numpy, normalise_rows

if TYPE_CHECKING:
    import httpx

__all__ = ["EMBED_KEY_ENV", "EMBED_URL_ENV", "OpenAIEmbedder"]

EMBED_URL_ENV = "PRECIS_EMBED_URL"
EMBED_KEY_ENV = "PRECIS_EMBED_KEY"
_PURPOSE = "embedding with an OpenAI-compatible endpoint"
_RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
_MAX_DELAY = 30.0


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
        try:
            import httpx
        except ImportError:
            raise MissingDependencyError(
                package="httpx", extra="remote", purpose=_PURPOSE
            ) from None
        if not isinstance(model, str) or not model.strip():
            raise ConfigError("an embedding model must be named: openai:<model>", where="embedder")
        url = base_url if base_url is not None else os.environ.get(EMBED_URL_ENV, "")
        if not url.startswith(("http://", "https://")):
            origin = "base_url" if base_url is not None else EMBED_URL_ENV
            raise ConfigError(
                f"{origin} must be an http(s) URL like http://localhost:8080/v1, got {url!r}",
                where="embedder",
            )
        url = url.rstrip("/")
        self.url = url if url.endswith("/embeddings") else f"{url}/embeddings"
        self.model = model
        self.name = f"openai:{model}"
        self.batch_size = _positive_int("batch_size", batch_size)
        self.retries = _count("retries", retries)
        self.backoff = _number("backoff", backoff, zero=True)
        self._dim = None if dim is None else _positive_int("dim", dim)
        key = api_key if api_key is not None else os.environ.get(EMBED_KEY_ENV) or None
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self._client = httpx.Client(
            headers=headers, timeout=_number("timeout", timeout), transport=transport
        )

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
        self._client.close()

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
        body = json.dumps({"model": self.model, "input": texts}).encode("ascii")
        answer = self._post(body)
        return self._parse(answer, len(texts))

    def _post(self, body: bytes) -> Any:
        import httpx

        attempt = 0
        while True:
            try:
                response = self._client.post(self.url, content=body)
            except httpx.TimeoutException:
                problem, delay = f"no answer within {self._client.timeout.read} s", None
            except httpx.TransportError as exc:
                problem, delay = f"connection failed: {exc or type(exc).__name__}", None
            else:
                if response.status_code < 300:
                    try:
                        return response.json()
                    except ValueError:
                        raise EmbeddingError(
                            f"malformed JSON answer: {_snippet(response.text)}", where=self.url
                        ) from None
                problem = f"HTTP {response.status_code}: {_snippet(response.text)}"
                if response.status_code not in _RETRY_STATUS:
                    raise EmbeddingError(problem, where=self.url)
                delay = _retry_after(response.headers.get("Retry-After"))
            if attempt >= self.retries:
                tries = f" (after {attempt + 1} attempts)" if attempt else ""
                raise EmbeddingError(problem + tries, where=self.url)
            wait = self.backoff * 2**attempt
            time.sleep(min(_MAX_DELAY, max(wait, delay or 0.0)))
            attempt += 1

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


def _snippet(text: str) -> str:
    text = " ".join(text.split())
    return (text[:200] + "...") if len(text) > 200 else text or "(empty body)"


def _retry_after(value: str | None) -> float | None:
    try:
        seconds = float(value) if value is not None else math.nan
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _positive_int(key: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{key} must be a positive integer, got {value!r}", where="embedder")
    return value


def _count(key: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{key} must be an integer >= 0, got {value!r}", where="embedder")
    return value


def _number(key: str, value: object, *, zero: bool = False) -> float:
    number = float(value) if isinstance(value, (int, float)) else math.nan
    if isinstance(value, bool) or not math.isfinite(number) or number < 0 or (
        not zero and number == 0
    ):
        expected = "a number >= 0" if zero else "a positive number"
        raise ConfigError(f"{key} must be {expected}, got {value!r}", where="embedder")
    return number
