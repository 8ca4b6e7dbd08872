"""Exact OpenAI token counts with tiktoken, from a local BPE file only: never a download.

tiktoken fetches its BPE files from the network on first use; precis never lets it. The
file is looked for, in this order:

1. the ``path`` the caller gives (a file, or a directory holding ``<encoding>.tiktoken``);
2. ``$PRECIS_TOKENIZER_DIR/<encoding>.tiktoken``;
3. tiktoken's own cache (``$TIKTOKEN_CACHE_DIR``, else ``$DATA_GYM_CACHE_DIR``, else
   ``<tmp>/data-gym-cache``), under the SHA-1 of the download URL as tiktoken names it;
4. ``<precis home>/tokenizers/<encoding>.tiktoken``.

The file is checked against the SHA-256 tiktoken expects, then parsed here (the format is
one ``<base64 token> <rank>`` per line) rather than with ``tiktoken.load.load_tiktoken_bpe``,
which would also copy every local file into tiktoken's cache directory (and fail when
that directory is read-only). The regex and special tokens come from
``tiktoken_ext.openai_public`` itself: its constructor is run with the loader swapped for
one that only records the URL and hash, so nothing is hard-coded here and nothing is
fetched.
"""

from __future__ import annotations

import os
import types
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from precis.errors import ConfigError, MissingDependencyError, TokenizerError
from precis.paths import precis_home
from precis.tokens.base import TokenCounter

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "ENCODINGS",
    "TOKENIZER_DIR_ENV",
    "EncodingSpec",
    "TiktokenCounter",
    "bpe_file_or_none",
    "encoding_spec",
    "find_bpe_file",
    "tiktoken_installed",
]

ENCODINGS = ("cl100k_base", "o200k_base")
TOKENIZER_DIR_ENV = "PRECIS_TOKENIZER_DIR"


def tiktoken_installed() -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec("tiktoken") is not None
    except (ImportError, ValueError):
        return False


def _import_tiktoken(purpose: str) -> Any:
    try:
        import tiktoken
    except ImportError:
        raise MissingDependencyError(
            package="tiktoken", extra="tiktoken", purpose=purpose
        ) from None
    return tiktoken


@dataclass(frozen=True)
class EncodingSpec:
    """What tiktoken knows about an encoding, minus the ranks."""

    name: str
    pat_str: str
    special_tokens: dict[str, int]
    url: str
    sha256: str | None
    explicit_n_vocab: int | None


class _NotSupported(Exception):
    pass


@cache
def encoding_spec(encoding: str) -> EncodingSpec:
    """The regex, special tokens, URL and hash of ``encoding``, from tiktoken_ext."""
    if encoding not in ENCODINGS:
        raise ConfigError(
            f"unsupported tiktoken encoding {encoding!r}; precis supports "
            f"{', '.join(ENCODINGS)}",
            where="tokenizer",
        )
    _import_tiktoken(f"counting {encoding} tokens")
    import importlib

    try:
        openai_public = importlib.import_module("tiktoken_ext.openai_public")
    except ImportError:
        raise TokenizerError(
            "tiktoken is installed without tiktoken_ext.openai_public; reinstall tiktoken"
        ) from None
    constructor = openai_public.ENCODING_CONSTRUCTORS.get(encoding)
    code = getattr(constructor, "__code__", None)
    if code is None or "load_tiktoken_bpe" not in code.co_names:
        raise TokenizerError(
            f"this tiktoken version builds {encoding} in a way precis does not know; "
            "use tiktoken >= 0.7, < 1"
        )
    calls: list[tuple[str, str | None]] = []

    def record(blobpath: str, expected_hash: str | None = None) -> dict[bytes, int]:
        calls.append((blobpath, expected_hash))
        return {}

    def refuse(*args: object, **kwargs: object) -> dict[bytes, int]:
        raise _NotSupported

    # A copy of the constructor whose loaders only record: the module itself is untouched.
    namespace = dict(constructor.__globals__)
    namespace["load_tiktoken_bpe"] = record
    namespace["data_gym_to_mergeable_bpe_ranks"] = refuse
    probe = types.FunctionType(code, namespace, encoding)
    try:
        spec = probe()
    except _NotSupported:
        calls.clear()
    if len(calls) != 1:
        raise TokenizerError(f"cannot read the definition of {encoding} from tiktoken")
    url, sha256 = calls[0]
    return EncodingSpec(
        name=spec["name"],
        pat_str=spec["pat_str"],
        special_tokens=dict(spec["special_tokens"]),
        url=url,
        sha256=sha256,
        explicit_n_vocab=spec.get("explicit_n_vocab"),
    )


def _tiktoken_cache_dir() -> Path | None:
    """tiktoken's cache directory, by tiktoken's own rules (``""`` disables the cache)."""
    import tempfile

    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            value = os.environ[var]
            return Path(value).expanduser() if value else None
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def _candidates(encoding: str) -> list[tuple[Path | None, str]]:
    """Where to look, in order: (path or None, how to describe the place)."""
    file_name = f"{encoding}.tiktoken"
    places: list[tuple[Path | None, str]] = []
    env_dir = os.environ.get(TOKENIZER_DIR_ENV)
    if env_dir:
        places.append((Path(env_dir).expanduser() / file_name, f"${TOKENIZER_DIR_ENV}"))
    else:
        places.append((None, f"${TOKENIZER_DIR_ENV}/{file_name} (the variable is not set)"))
    cache_dir = _tiktoken_cache_dir()
    if cache_dir is None:
        places.append((None, "tiktoken's cache (disabled: TIKTOKEN_CACHE_DIR is empty)"))
    else:
        import hashlib

        key = hashlib.sha1(encoding_spec(encoding).url.encode()).hexdigest()
        places.append((cache_dir / key, "tiktoken's cache"))
    places.append((precis_home() / "tokenizers" / file_name, "precis home"))
    return places


def _not_found(encoding: str, looked: list[str]) -> TokenizerError:
    url = encoding_spec(encoding).url
    family = encoding.split("_")[0]
    lines = "\n".join(f"  - {place}" for place in looked)
    return TokenizerError(
        f"no {encoding} BPE file found (precis never downloads tokenizer files). "
        f"Looked in:\n{lines}\n"
        f"Download {url} on a machine with network access and either put it in a "
        f"directory named by ${TOKENIZER_DIR_ENV} as {encoding}.tiktoken, or pass its "
        f"path (get_counter({encoding!r}, path=...) / --tokenizer {encoding}:PATH); "
        f"or count with the estimator instead: 'estimate:{family}'",
        where="tokenizer",
    )


def find_bpe_file(encoding: str, path: str | os.PathLike[str] | None = None) -> Path:
    """The local BPE file of ``encoding`` (see the module docstring for the search order).

    Raises :class:`~precis.errors.TokenizerError` naming every place looked at.
    """
    if path is not None:
        given = Path(path).expanduser()
        candidate = given / f"{encoding}.tiktoken" if given.is_dir() else given
        if candidate.is_file():
            return candidate
        raise _not_found(encoding, [f"{candidate} (given path: no such file)"])
    looked = []
    for place_path, place in _candidates(encoding):
        if place_path is not None and place_path.is_file():
            return place_path
        looked.append(f"{place_path} ({place})" if place_path is not None else place)
    raise _not_found(encoding, looked)


def bpe_file_or_none(encoding: str) -> Path | None:
    """Like :func:`find_bpe_file` without a path, but ``None`` instead of an error."""
    try:
        return find_bpe_file(encoding)
    except (TokenizerError, MissingDependencyError):
        return None


def _parse_bpe(data: bytes, where: str) -> dict[bytes, int]:
    import base64
    import binascii

    ranks: dict[bytes, int] = {}
    for number, line in enumerate(data.splitlines(), start=1):
        if not line:
            continue
        try:
            token, rank = line.split()
            ranks[base64.b64decode(token, validate=True)] = int(rank)
        except (ValueError, binascii.Error):
            raise TokenizerError(
                f"line {number} is not '<base64 token> <rank>': not a tiktoken BPE file",
                where=where,
            ) from None
    return ranks


@lru_cache(maxsize=8)
def _load_encoding(encoding: str, path: str, mtime_ns: int, size: int) -> tiktoken.Encoding:
    """Build (once per file version) the Encoding of ``encoding`` from ``path``."""
    import hashlib

    tiktoken_mod = _import_tiktoken(f"counting {encoding} tokens")
    spec = encoding_spec(encoding)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise TokenizerError(f"cannot read: {exc.strerror or exc}", where=path) from None
    if spec.sha256 is not None:
        digest = hashlib.sha256(data).hexdigest()
        if digest != spec.sha256:
            raise TokenizerError(
                f"not the {encoding} BPE file: its SHA-256 is {digest}, tiktoken expects "
                f"{spec.sha256}",
                where=path,
            )
    ranks = _parse_bpe(data, path)
    try:
        built: tiktoken.Encoding = tiktoken_mod.Encoding(
            name=spec.name,
            pat_str=spec.pat_str,
            mergeable_ranks=ranks,
            special_tokens=spec.special_tokens,
            explicit_n_vocab=spec.explicit_n_vocab,
        )
    except (ValueError, AssertionError) as exc:
        raise TokenizerError(f"tiktoken rejected the file: {exc}", where=path) from None
    return built


_LINES_ADD_UP = frozenset({"cl100k_base", "o200k_base"})  # see precis.tokens.lines


class TiktokenCounter(TokenCounter):
    """Exact token counts for ``cl100k_base`` (GPT-4, GPT-3.5) or ``o200k_base`` (GPT-4o,
    GPT-4.1, o-series), from a local BPE file.

    Special-token strings in the text (``<|endoftext|>``) are counted as ordinary text.
    """

    def __init__(
        self, encoding: str = "o200k_base", path: str | os.PathLike[str] | None = None
    ) -> None:
        _import_tiktoken(f"counting {encoding} tokens")
        encoding_spec(encoding)  # an unsupported encoding is a ConfigError before any lookup
        file = find_bpe_file(encoding, path)
        try:
            stat = file.stat()
        except OSError as exc:
            raise TokenizerError(f"cannot read: {exc.strerror or exc}", where=str(file)) from None
        self.name = encoding
        self.path = file
        self.lines_add_up = encoding in _LINES_ADD_UP
        self._encoding = _load_encoding(
            encoding, str(file.resolve()), stat.st_mtime_ns, stat.st_size
        )

    def count(self, text: str) -> int:
        if not isinstance(text, str):
            raise TokenizerError(f"cannot count tokens of a {type(text).__name__}")
        return len(self._encoding.encode_ordinary(text))

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        """One text after the other on this thread: tiktoken's ``encode_ordinary_batch``
        starts a pool of 8 threads per call, which on one core doubles the CPU time of a
        large batch (measured: 96 ms against 44 ms for a 200k-token conversation)."""
        if not all(isinstance(t, str) for t in texts):
            return [self.count(t) for t in texts]
        encode = self._encoding.encode_ordinary
        return [len(encode(t)) for t in texts]
