"""Validation shared by the sub-agent modules: levels, character budgets, plain text.

Every check raises a :mod:`precis.errors` class whose message names the problem and whose
``where`` names the argument, so bad input never surfaces as a ``KeyError`` or
``TypeError`` from deep inside.
"""

from __future__ import annotations

from precis.analysis.model import Level
from precis.errors import ConfigError, InputError

__all__ = ["LEVELS", "check_level", "check_max_chars", "check_text", "level_rank"]

LEVELS: tuple[Level, ...] = ("HIGH", "MEDIUM", "LOW")
"""Importance levels, most important first (the same three levels as precis.analysis)."""

_RANK: dict[str, int] = {level: i for i, level in enumerate(LEVELS)}


def check_level(value: object, where: str = "level") -> Level:
    """``value`` as a level; ``"high"`` and ``" High "`` are accepted as ``"HIGH"``."""
    if isinstance(value, str):
        name = value.strip().upper()
        if name == "HIGH":
            return "HIGH"
        if name == "MEDIUM":
            return "MEDIUM"
        if name == "LOW":
            return "LOW"
    raise InputError(f"unknown level {value!r} (expected HIGH, MEDIUM or LOW)", where=where)


def level_rank(level: str) -> int:
    """0 for HIGH, 1 for MEDIUM, 2 for LOW (the order in which budgets are filled)."""
    return _RANK[level]


def check_max_chars(value: object, where: str = "max_chars") -> int:
    """A character budget: a whole number >= 0 (a setting, so a :class:`ConfigError`)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"must be a whole number of characters, got {value!r}", where=where)
    if value < 0:
        raise ConfigError(f"must be >= 0 characters, got {value}", where=where)
    return value


def check_text(value: object, where: str, *, allow_empty: bool = True) -> str:
    """``value`` if it is a string (non-blank unless ``allow_empty``)."""
    if not isinstance(value, str):
        raise InputError(f"expected text (a str), got {type(value).__name__}", where=where)
    if not allow_empty and not value.strip():
        raise InputError("must not be empty", where=where)
    return value
