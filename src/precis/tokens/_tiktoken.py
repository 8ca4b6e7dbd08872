"""Exact OpenAI token counts with tiktoken.

The BPE file is looked for, in this order:

1. the ``path`` the caller gives (a file, or a directory holding ``<encoding>.tiktoken``);
2. ``$PRECIS_TOKENIZER_DIR/<encoding>.tiktoken``;
3. tiktoken's own cache (``$TIKTOKEN_CACHE_DIR``, else ``$DATA_GYM_CACHE_DIR``, else
   ``<tmp>/data-gym-cache``), under the SHA-1 of the download URL as tiktoken names it;
4. ``<precis home>/tokenizers/<encoding>.tiktoken``.

A file found there is checked against the SHA-256 tiktoken expects, then parsed here (the
format is one ``<base64 token> <rank>`` per line) rather than with
``tiktoken.load.load_tiktoken_bpe``, which would also copy every local file into
tiktoken's cache directory (and fail when that directory is read-only). The regex and
special tokens come from ``tiktoken_ext.openai_public`` itself: its constructor is run with
the loader swapped for one that only records the URL and hash, so nothing is hard-coded.

When none of these places has the file (and no ``path`` was given), tiktoken loads it the
way it does for any tiktoken user: downloaded once into its cache. Offline, that fails
with a :class:`~precis.errors.TokenizerError` that says where to put the file, and
``get_counter("auto")`` counts with the calibrated estimator instead (with a warning).
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


def _not_found(encoding: str, looked: list[str], download: str = "") -> TokenizerError:
    """One line: where the file was looked for, why tiktoken's download failed (when it was
    tried), and the three ways out."""
    url = encoding_spec(encoding).url
    family = encoding.split("_")[0]
    return TokenizerError(
        f"no {encoding} BPE file (looked in: {'; '.join(looked)})"
        + (f"; tiktoken could not download it ({download})" if download else "")
        + f". Run once with network access (tiktoken keeps {url} in its cache), or put "
        f"that file in ${TOKENIZER_DIR_ENV} as {encoding}.tiktoken or give its path "
        f"(--tokenizer {encoding}:PATH), or count with the estimator: 'estimate:{family}' "
        "(or 'auto', which falls back to it)",
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
    found, looked = _look(encoding)
    if found is None:
        raise _not_found(encoding, looked)
    return found


def _look(encoding: str) -> tuple[Path | None, list[str]]:
    """The first local BPE file of ``encoding``, and the places looked at before it."""
    looked: list[str] = []
    for place_path, place in _candidates(encoding):
        if place_path is not None and place_path.is_file():
            return place_path, looked
        looked.append(f"{place_path} ({place})" if place_path is not None else place)
    return None, looked


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


def _download(tiktoken_mod: Any, encoding: str, looked: list[str]) -> tiktoken.Encoding:
    """The encoding as tiktoken itself loads it (a download into its cache); offline, a
    TokenizerError that says where the file was looked for and how to get it."""
    try:
        built: tiktoken.Encoding = tiktoken_mod.get_encoding(encoding)
    except Exception as exc:  # requests' errors (OSError), a hash mismatch (ValueError), ...
        reason = " ".join(str(exc).split())
        raise _not_found(encoding, looked, f"{type(exc).__name__}: {reason[:120]}") from None
    return built


class TiktokenCounter(TokenCounter):
    """Exact token counts for ``cl100k_base`` (GPT-4, GPT-3.5) or ``o200k_base`` (GPT-4o,
    GPT-4.1, o-series), from a local BPE file.

    Special-token strings in the text (``<|endoftext|>``) are counted as ordinary text.
    """

    def __init__(
        self, encoding: str = "o200k_base", path: str | os.PathLike[str] | None = None
    ) -> None:
        tiktoken_mod = _import_tiktoken(f"counting {encoding} tokens")
        encoding_spec(encoding)  # an unsupported encoding is a ConfigError before any lookup
        self.name = encoding
        self.lines_add_up = encoding in _LINES_ADD_UP
        self.path: Path | None = None
        if path is not None:
            file = find_bpe_file(encoding, path)
        else:
            found, looked = _look(encoding)
            if found is None:  # not here: tiktoken loads it as for any of its users
                self._encoding = _download(tiktoken_mod, encoding, looked)
                return
            file = found
        try:
            stat = file.stat()
        except OSError as exc:
            raise TokenizerError(f"cannot read: {exc.strerror or exc}", where=str(file)) from None
        self.path = file
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
