"""The counter registry: names -> factories, :func:`get_counter` and its cache.

precis's own counters register through :func:`register_counter`, the call a third party
would use. A spec is ``name`` or ``name:argument`` (``estimate:qwen``,
``hf:/models/qwen/tokenizer.json``, ``o200k_base:/files/o200k_base.tiktoken``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from precis.errors import ConfigError, MissingDependencyError, PrecisWarning, TokenizerError
from precis.paths import precis_home
from precis.tokens._estimate import COEFFICIENTS, DEFAULT_FAMILY, EstimatorCounter
from precis.tokens._hf import HFTokenizerCounter, tokenizers_installed
from precis.tokens._tiktoken import (
    ENCODINGS,
    TOKENIZER_DIR_ENV,
    TiktokenCounter,
    bpe_file_or_none,
    tiktoken_installed,
)
from precis.tokens.base import TokenCounter

__all__ = [
    "DEFAULT_SPEC",
    "CounterEntry",
    "CounterFactory",
    "available_counters",
    "counter_names",
    "get_counter",
    "register_counter",
]

DEFAULT_SPEC = "estimate"
"""Used when no tokenizer is asked for: deterministic, no files, no dependencies."""

CounterFactory = Callable[[str | None, Path | None], TokenCounter]
"""``factory(argument, path)``: the part of the spec after ``:`` and ``get_counter(path=)``."""


@dataclass(frozen=True)
class CounterEntry:
    """One registered counter name."""

    name: str
    factory: CounterFactory
    usage: tuple[str, ...]
    """The specs to show users (``estimate:qwen``, ``hf:PATH``)."""
    available: Callable[[], dict[str, str]]
    """The specs usable on this machine now, each with a description."""


_REGISTRY: dict[str, CounterEntry] = {}
_CACHE: dict[tuple[object, ...], TokenCounter] = {}
_LOCK = threading.Lock()
_ENV = (TOKENIZER_DIR_ENV, "TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR", "PRECIS_HOME")


def register_counter(
    name: str,
    factory: CounterFactory,
    *,
    usage: tuple[str, ...] | None = None,
    available: Callable[[], dict[str, str]] | None = None,
    replace: bool = False,
) -> CounterEntry:
    """Make ``get_counter(name)`` / ``get_counter("name:arg")`` call ``factory(arg, path)``."""
    if not name or ":" in name:
        raise ConfigError(f"a counter name must be non-empty and without ':', got {name!r}")
    if name in _REGISTRY and not replace:
        raise ConfigError(f"a counter named {name!r} is already registered")
    entry = CounterEntry(
        name=name,
        factory=factory,
        usage=usage or (name,),
        available=available or (lambda: {}),
    )
    with _LOCK:
        _REGISTRY[name] = entry
        for key in [k for k in _CACHE if k[0] == name]:
            del _CACHE[key]
    return entry


def counter_names() -> list[str]:
    """Every spec form the registry accepts (for help texts and error messages)."""
    return [usage for entry in _REGISTRY.values() for usage in entry.usage]


def get_counter(
    spec: str | None = None, *, path: str | os.PathLike[str] | None = None
) -> TokenCounter:
    """The token counter named by ``spec`` (cached: loading a vocabulary takes time).

    ``None`` gives the estimator (``"estimate"``, o200k coefficients): precis never
    switches to another tokenizer on its own. ``path`` is the vocabulary file of a real
    tokenizer (same as ``"name:PATH"``). Raises :class:`~precis.errors.ConfigError` for an
    unknown spec, :class:`~precis.errors.TokenizerError` when a file is missing or bad,
    :class:`~precis.errors.MissingDependencyError` when the backend is not installed.
    """
    if spec is None:
        spec = DEFAULT_SPEC
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError(
            f"a tokenizer must be named, got {spec!r}; valid: {', '.join(counter_names())}",
            where="tokenizer",
        )
    name, _, argument = spec.strip().partition(":")
    entry = _REGISTRY.get(name)
    if entry is None:
        hint = " (a tokenizer.json is given as hf:PATH)" if spec.endswith(".json") else ""
        raise ConfigError(
            f"unknown tokenizer {spec!r}{hint}; valid: {', '.join(counter_names())}",
            where="tokenizer",
        )
    file = Path(path) if path is not None else None
    key = (name, argument or None, file, tuple(os.environ.get(v) for v in _ENV))
    with _LOCK:
        cached = _CACHE.get(key)
    if cached is not None:
        return cached
    counter = entry.factory(argument or None, file)
    with _LOCK:
        return _CACHE.setdefault(key, counter)


def available_counters() -> dict[str, str]:
    """The specs that work on this machine now, each with a one-line description."""
    found: dict[str, str] = {}
    for entry in _REGISTRY.values():
        found.update(entry.available())
    return found


# --- precis's own counters ----------------------------------------------------------------

_FAMILY_OF = {"cl100k": "cl100k_base", "o200k": "o200k_base", "qwen": "Qwen2/2.5/3"}


def _estimate(argument: str | None, path: Path | None) -> TokenCounter:
    if path is not None:
        raise ConfigError("the estimator reads no file; drop the path", where="tokenizer")
    return EstimatorCounter(argument or DEFAULT_FAMILY)


def _estimate_available() -> dict[str, str]:
    found = {
        DEFAULT_SPEC: f"estimate of {_FAMILY_OF[DEFAULT_FAMILY]} (default; no dependencies)"
    }
    for family in COEFFICIENTS:
        found[f"estimate:{family}"] = f"estimate of {_FAMILY_OF.get(family, family)}"
    return found


def _tiktoken_factory(encoding: str) -> CounterFactory:
    def factory(argument: str | None, path: Path | None) -> TokenCounter:
        if argument and path is not None:
            raise ConfigError(
                f"{encoding}: give the BPE file either as {encoding}:PATH or as path=, "
                "not both",
                where="tokenizer",
            )
        return TiktokenCounter(encoding, path=argument or path)

    return factory


def _tiktoken_available(encoding: str) -> Callable[[], dict[str, str]]:
    def available() -> dict[str, str]:
        if not tiktoken_installed():
            return {}
        file = bpe_file_or_none(encoding)
        return {encoding: f"OpenAI {encoding}, exact ({file})"} if file else {}

    return available


def _auto(argument: str | None, path: Path | None) -> TokenCounter:
    """``auto`` / ``auto:ENCODING``: the exact tiktoken count of ENCODING (o200k_base) when
    tiktoken and its file are there, else the calibrated estimator of the same family, with
    a :class:`~precis.errors.PrecisWarning` saying why."""
    import warnings

    encoding = argument or "o200k_base"
    if encoding not in ENCODINGS:
        raise ConfigError(f"auto takes a tiktoken encoding ({', '.join(ENCODINGS)}), got "
                          f"{encoding!r}", where="tokenizer")
    try:
        return TiktokenCounter(encoding, path=path)
    except (MissingDependencyError, TokenizerError) as err:
        family = encoding.split("_")[0]
        reason = ("tiktoken is not installed (pip install 'precis[tiktoken]')"
                  if isinstance(err, MissingDependencyError) else
                  f"the {encoding} BPE file is not here and tiktoken could not download it")
        warnings.warn(PrecisWarning(
            f"tokenizer auto: {reason}; counting with the calibrated estimator "
            f"(estimate:{family}, a few percent off) instead of {encoding}"), stacklevel=3)
        return EstimatorCounter(family)


def _hf(argument: str | None, path: Path | None) -> TokenCounter:
    file = argument or path
    if not file:
        raise ConfigError(
            "hf needs the path of a tokenizer.json: hf:/path/to/tokenizer.json",
            where="tokenizer",
        )
    return HFTokenizerCounter(file)


def _hf_available() -> dict[str, str]:
    """tokenizer.json files in $PRECIS_TOKENIZER_DIR and <precis home>/tokenizers."""
    if not tokenizers_installed():
        return {}
    roots = [precis_home() / "tokenizers"]
    env_dir = os.environ.get(TOKENIZER_DIR_ENV)
    if env_dir:
        roots.insert(0, Path(env_dir).expanduser())
    found: dict[str, str] = {}
    for root in roots:
        if not root.is_dir():
            continue
        for file in [root / "tokenizer.json", *sorted(root.glob("*/tokenizer.json"))]:
            if file.is_file():
                found[f"hf:{file}"] = "Hugging Face tokenizer.json, exact"
    return found


register_counter(
    "estimate",
    _estimate,
    usage=("estimate", *(f"estimate:{family}" for family in COEFFICIENTS)),
    available=_estimate_available,
)
for _encoding in ENCODINGS:
    register_counter(
        _encoding,
        _tiktoken_factory(_encoding),
        usage=(_encoding,),
        available=_tiktoken_available(_encoding),
    )
register_counter("hf", _hf, usage=("hf:PATH",), available=_hf_available)
register_counter("auto", _auto, usage=("auto", "auto:cl100k_base"))
