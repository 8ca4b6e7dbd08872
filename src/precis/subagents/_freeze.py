"""Deep-frozen copies of plain data, safe to share between threads.

Mappings become read-only :class:`types.MappingProxyType` views over a private dict,
lists and tuples become tuples, sets become frozensets; strings, numbers, booleans and
``None`` are kept. Anything else (an object whose state could change) is refused, so a
snapshot never holds a reference through which someone else can change it.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from precis.errors import InputError

__all__ = ["freeze", "freeze_mapping"]

_SCALARS = (str, int, float, bool, bytes, type(None))


def freeze(value: Any, where: str) -> Any:
    """An immutable copy of ``value`` (see the module docstring)."""
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, Mapping):
        return freeze_mapping(value, where)
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v, f"{where}[{i}]") for i, v in enumerate(value))
    if isinstance(value, (set, frozenset)):
        return frozenset(freeze(v, f"{where}[]") for v in value)
    raise InputError(
        f"cannot freeze a {type(value).__name__}; use text, numbers, booleans, None, "
        "lists, sets or mappings of those",
        where=where,
    )


def freeze_mapping(value: Mapping[Any, Any], where: str) -> MappingProxyType[str, Any]:
    """A read-only copy of a mapping with text keys (values frozen too)."""
    if not isinstance(value, Mapping):
        raise InputError(f"expected a mapping, got {type(value).__name__}", where=where)
    out: dict[str, Any] = {}
    for key, item in value.items():
        if not isinstance(key, str):
            raise InputError(f"keys must be text, got {key!r}", where=where)
        out[key] = freeze(item, f"{where}.{key}")
    return MappingProxyType(out)
