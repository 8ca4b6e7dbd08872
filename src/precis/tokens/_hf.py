"""Exact token counts with a Hugging Face ``tokenizer.json`` (Qwen, DeepSeek, Llama, ...).

Needs the ``tokenizers`` package (``pip install 'precis[hf]'``); reads a local file only.
Special-token strings in the text (``<|im_end|>``) are counted as ordinary text, and the
file's truncation and padding settings are switched off so long texts count in full.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from precis.errors import MissingDependencyError, TokenizerError
from precis.tokens.base import TokenCounter

__all__ = ["HFTokenizerCounter", "find_tokenizer_json", "tokenizers_installed"]

_PURPOSE = "counting tokens with a Hugging Face tokenizer.json"


def tokenizers_installed() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("tokenizers") is not None
    except (ImportError, ValueError):
        return False


def _import_tokenizers() -> Any:
    try:
        import tokenizers
    except ImportError:
        raise MissingDependencyError(package="tokenizers", extra="hf", purpose=_PURPOSE) from None
    return tokenizers


def find_tokenizer_json(path: str | os.PathLike[str]) -> Path:
    """``path`` itself, or ``path/tokenizer.json`` when ``path`` is a directory."""
    given = Path(path).expanduser()
    candidate = given / "tokenizer.json" if given.is_dir() else given
    if not candidate.is_file():
        raise TokenizerError(
            "no such file: give the path of a Hugging Face tokenizer.json (or of the "
            "directory holding it), e.g. hf:/models/Qwen3-8B/tokenizer.json",
            where=str(candidate),
        )
    return candidate


@lru_cache(maxsize=8)
def _load(path: str, mtime_ns: int, size: int) -> Any:
    tokenizers = _import_tokenizers()
    try:
        tokenizer = tokenizers.Tokenizer.from_file(path)
    except Exception as exc:  # tokenizers raises plain Exception for a bad file
        raise TokenizerError(
            f"not a Hugging Face tokenizer.json: {exc}", where=path
        ) from None
    tokenizer.no_truncation()
    tokenizer.no_padding()
    if hasattr(tokenizer, "encode_special_tokens"):
        tokenizer.encode_special_tokens = True
    return tokenizer


def _clean(text: str) -> str:
    """Lone surrogates cannot cross into Rust: replace them as tiktoken does."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class HFTokenizerCounter(TokenCounter):
    """Counts tokens with the ``tokenizer.json`` at ``path`` (a file or its directory)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        _import_tokenizers()
        file = find_tokenizer_json(path)
        stat = file.stat()
        self.path = file
        self.name = f"hf:{file}"
        self._tokenizer = _load(str(file.resolve()), stat.st_mtime_ns, stat.st_size)

    def count(self, text: str) -> int:
        if not isinstance(text, str):
            raise TokenizerError(f"cannot count tokens of a {type(text).__name__}")
        try:
            encoding = self._tokenizer.encode(text, add_special_tokens=False)
        except (UnicodeEncodeError, TypeError):  # lone surrogates: "must be str"
            encoding = self._tokenizer.encode(_clean(text), add_special_tokens=False)
        return len(encoding.ids)

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        if len(texts) < 2 or not all(isinstance(t, str) for t in texts):
            return [self.count(t) for t in texts]
        try:
            encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        except (UnicodeEncodeError, TypeError):
            return [self.count(t) for t in texts]
        return [len(e.ids) for e in encodings]
