"""What every embedder and embedding cache provides, and the helpers they share.

A vector crosses a cache as raw little-endian float32 bytes (``4 * dim`` bytes); a cache key is
:func:`content_key` of the exact text, scoped by the embedder's ``name``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from precis.errors import EmbeddingError, MissingDependencyError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]
else:
    Vectors = Any

__all__ = [
    "Embedder",
    "EmbeddingCache",
    "Vectors",
    "check_texts",
    "clean_text",
    "content_key",
    "import_numpy",
    "normalise_rows",
]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors.

    ``name`` is a stable id stored with each vector (``"minilm-l6-v2"``, ``"openai:bge-m3"``);
    vectors of different names are never compared. ``dim`` is the vector length.
    """

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """float32 array of shape ``(len(texts), dim)``, rows L2-normalised; batched inside."""
        ...


@runtime_checkable
class EmbeddingCache(Protocol):
    """Stored vectors by ``(model, content_key(text))``; values are little-endian float32 bytes."""

    def get_many(self, model: str, keys: Sequence[str]) -> dict[str, bytes]:
        """The stored vectors of those ``keys`` that have one (others are left out)."""
        ...

    def put_many(self, model: str, items: Sequence[tuple[str, bytes]]) -> None:
        """Store ``(key, vector bytes)`` pairs, replacing what was there."""
        ...


def content_key(text: str) -> str:
    """A stable hash of the exact text (blake2b-128, hex); lone surrogates are allowed."""
    data = text.encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def check_texts(texts: Sequence[str]) -> list[str]:
    """``texts`` as a list, or :class:`EmbeddingError` if it is one string or holds a non-string."""
    if isinstance(texts, (str, bytes)):
        raise EmbeddingError("embed() takes a sequence of texts, not a single string")
    items = list(texts)
    for index, text in enumerate(items):
        if not isinstance(text, str):
            raise EmbeddingError(f"text {index} is a {type(text).__name__}, not a str")
    return items


def clean_text(text: str) -> str:
    """``text`` with lone surrogates replaced (they cannot be encoded as UTF-8, which every
    model's tokenizer needs)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def import_numpy(extra: str, purpose: str) -> Any:
    """The ``numpy`` module, or :class:`MissingDependencyError` naming ``extra``."""
    try:
        import numpy
    except ImportError:
        raise MissingDependencyError(package="numpy", extra=extra, purpose=purpose) from None
    return numpy


def normalise_rows(rows: Vectors) -> Vectors:
    """``rows`` (2-D float32) scaled to unit L2 length in place; all-zero rows stay zero."""
    import numpy as np

    norms = np.sqrt(np.einsum("ij,ij->i", rows, rows))
    norms[norms == 0] = 1
    rows /= norms[:, None]
    return rows
