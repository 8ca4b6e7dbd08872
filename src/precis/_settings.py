"""Shared checks for typed settings built from plain mappings (config files, dicts)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from precis.errors import ConfigError

__all__ = ["settings_table"]


def settings_table(data: Any, cls: type, where: str) -> dict[str, Any]:
    """``data`` as a dict for the dataclass ``cls``.

    Raises :class:`~precis.errors.ConfigError` naming ``where`` when ``data`` is not a
    mapping or has keys that are not fields of ``cls`` (the message lists the known ones).
    """
    if not isinstance(data, Mapping):
        raise ConfigError(f"expected a table of settings, got {type(data).__name__}",
                          where=where)
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - known, key=str)
    if unknown:
        raise ConfigError(
            f"unknown setting(s) {', '.join(map(repr, unknown))}; known: "
            f"{', '.join(sorted(known))}",
            where=where,
        )
    return dict(data)
