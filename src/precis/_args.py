"""Checks of arguments at the API's edge: a wrong type is refused with a typed error that
names the argument (``since: must be text or None, got int 123``), never a crash deep down.
Text arguments come back cleaned of lone surrogates (:mod:`precis._surrogates`)."""

from __future__ import annotations

from typing import Any

from precis._surrogates import clean_text
from precis.errors import PrecisError, QueryError

__all__ = ["optional_text", "shown", "text"]


def shown(value: object) -> str:
    """A wrong argument for an error message: its type and a short repr."""
    rep = repr(value)
    return f"{type(value).__name__} {rep[:60] + '...' if len(rep) > 60 else rep}"


def text(value: Any, name: str, error: type[PrecisError] = QueryError) -> str:
    """``value`` if it is text (cleaned), else ``error`` naming ``name``."""
    if not isinstance(value, str):
        raise error(f"must be text, got {shown(value)}", where=name)
    return clean_text(value)


def optional_text(value: Any, name: str, error: type[PrecisError] = QueryError) -> str | None:
    """Text or None (see :func:`text`)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise error(f"must be text or None, got {shown(value)}", where=name)
    return clean_text(value)
