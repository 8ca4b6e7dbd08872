"""The embedder registry: names -> factories, and :func:`get_embedder`.

precis's own embedders register through :func:`register_embedder`, the call a third party
would use. A spec is ``name`` or ``name:argument`` (``openai:bge-m3``); the factory is called
as ``factory(argument, **options)``, ``argument`` being ``None`` when the spec has no ``:``.
``"none"`` and ``"lexical"`` are reserved: they mean "no vectors" and give ``None``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Collection
from typing import Any

from precis.errors import ConfigError
from precis.memory.embed._minilm import MiniLMEmbedder
from precis.memory.embed._openai import EMBED_URL_ENV, OpenAIEmbedder
from precis.memory.embed._use import USEEmbedder
from precis.memory.embed.base import Embedder

__all__ = ["LOCAL", "NO_EMBEDDER", "embedder_names", "get_embedder", "register_embedder"]

NO_EMBEDDER = ("none", "lexical")
"""Specs that mean lexical search only (``get_embedder`` gives ``None``)."""

_REGISTRY: dict[str, Callable[..., Embedder]] = {}
_USAGE: dict[str, str] = {}
_LOCK = threading.Lock()


def register_embedder(
    name: str, factory: Callable[..., Embedder], *, replace: bool = False
) -> None:
    """Make ``get_embedder("name[:argument]", **options)`` call ``factory(argument, **options)``."""
    if not isinstance(name, str) or not name or ":" in name or name != name.strip():
        raise ConfigError(
            f"an embedder name must be non-empty, without ':' or spaces, got {name!r}",
            where="embedder",
        )
    if name.lower() in NO_EMBEDDER:
        raise ConfigError(f"the embedder name {name!r} is reserved (no vectors)", where="embedder")
    with _LOCK:
        if name in _REGISTRY and not replace:
            raise ConfigError(f"an embedder named {name!r} is already registered", where="embedder")
        _REGISTRY[name] = factory


def embedder_names() -> list[str]:
    """Every spec form :func:`get_embedder` accepts (for help texts and error messages)."""
    return [*NO_EMBEDDER, *(_USAGE.get(name, name) for name in _REGISTRY)]


def get_embedder(spec: str, **options: Any) -> Embedder | None:
    """The embedder named by ``spec``, or ``None`` for ``"none"`` / ``"lexical"``.

    ``"local"``: the default local embedder, ``"use"`` (:data:`LOCAL`).
    ``"use"``: the multilingual Universal Sentence Encoder in numpy (option ``name``).
    ``"minilm"``: all-MiniLM-L6-v2 in numpy, English only (options ``model_dir``,
    ``batch_tokens``, ``name``; ``$PRECIS_MINILM_DIR`` gives the model directory).
    ``"openai:<model>"``: an OpenAI-compatible endpoint (options ``base_url``, ``api_key``,
    ``dim``, ``batch_size``, ``timeout``, ``retries``, ``backoff``, ``transport``;
    ``$PRECIS_EMBED_URL`` / ``$PRECIS_EMBED_KEY`` fill in the first two).
    An unknown spec or option raises :class:`~precis.errors.ConfigError`.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError(
            f"an embedder must be named, got {spec!r}; known: {', '.join(embedder_names())}",
            where="embedder",
        )
    name, colon, argument = spec.strip().partition(":")
    if name.lower() in NO_EMBEDDER and not colon:
        if options:
            raise ConfigError(f"{spec!r} takes no options, got {sorted(options)}", where="embedder")
        return None
    factory = _REGISTRY.get(name)
    if factory is None:
        raise ConfigError(
            f"unknown embedder {spec!r}; known: {', '.join(embedder_names())}", where="embedder"
        )
    return factory(argument if colon else None, **options)


def _check(spec: str, options: dict[str, Any], allowed: Collection[str]) -> None:
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ConfigError(
            f"unknown option(s) {', '.join(unknown)} for embedder {spec!r} "
            f"(valid: {', '.join(sorted(allowed))})",
            where="embedder",
        )


def _minilm(argument: str | None, **options: Any) -> Embedder:
    if argument is not None:
        raise ConfigError(
            f"the minilm embedder takes no ':{argument}' (give model_dir= or "
            f"$PRECIS_MINILM_DIR for another copy of the model files)",
            where="embedder",
        )
    _check("minilm", options, ("model_dir", "batch_tokens", "name"))
    return MiniLMEmbedder(**options)


def _use(argument: str | None, **options: Any) -> Embedder:
    if argument is not None:
        raise ConfigError(f"the use embedder takes no ':{argument}'", where="embedder")
    _check("use", options, ("name",))
    return USEEmbedder(**options)


LOCAL = "use"
"""What ``"local"`` means: the default local embedder, chosen by measurement (the
multilingual Universal Sentence Encoder: Chinese and English; see README, Benchmarks)."""


def _local(argument: str | None, **options: Any) -> Embedder:
    return _REGISTRY[LOCAL](argument, **options)


def _openai(argument: str | None, **options: Any) -> Embedder:
    if not argument:
        raise ConfigError("name the model: openai:<model>, e.g. openai:bge-m3", where="embedder")
    allowed = ("base_url", "api_key", "dim", "batch_size", "timeout", "retries", "backoff",
               "transport")
    _check(f"openai:{argument}", options, allowed)
    if options.get("base_url") is None and not os.environ.get(EMBED_URL_ENV):
        raise ConfigError(
            f"openai:{argument} needs base_url= or $PRECIS_EMBED_URL "
            "(e.g. http://localhost:8080/v1 or https://api.openai.com/v1)",
            where="embedder",
        )
    return OpenAIEmbedder(argument, **options)


def _register_builtins() -> None:
    register_embedder("local", _local)
    register_embedder("use", _use)
    register_embedder("minilm", _minilm)
    register_embedder("openai", _openai)
    _USAGE["openai"] = "openai:<model>"


_register_builtins()
