"""Compression levels (seed 001): how many recent messages stay verbatim, what the summary
of the older ones holds, and how much room it gets when no explicit budget is given.

=========  =========  ============================================  ==================
level      keep last  summary of older messages                   room (share of the
                                                                  older messages)
=========  =========  ============================================  ==================
light      10         every section, plus one line per message      50%
normal     10         sections grouped by topic (HIGH and MEDIUM)   25%
heavy      5          one tight summary (HIGH, then MEDIUM)         12%
emergency  3          HIGH items only                               6%
=========  =========  ============================================  ==================

An explicit token budget overrides the room: the whole output (system prompt, summary and
recent messages) is then guaranteed to fit it.
"""

from __future__ import annotations

from dataclasses import dataclass

from precis.errors import ConfigError

__all__ = ["LEVELS", "LevelPreset", "get_level"]


@dataclass(frozen=True)
class LevelPreset:
    name: str
    keep_last: int
    room: float  # summary tokens as a share of the summarized messages' tokens
    min_room: int  # ... but at least this many tokens
    levels: tuple[str, ...]  # importance levels a summary item may come from
    per_message: bool  # one line per older message (the "light" log)
    item_chars: int  # longest item text before it is cut to its core


LEVELS: dict[str, LevelPreset] = {
    "light": LevelPreset("light", 10, 0.50, 400, ("HIGH", "MEDIUM", "LOW"), True, 400),
    "normal": LevelPreset("normal", 10, 0.25, 300, ("HIGH", "MEDIUM"), False, 300),
    "heavy": LevelPreset("heavy", 5, 0.12, 200, ("HIGH", "MEDIUM"), False, 220),
    "emergency": LevelPreset("emergency", 3, 0.06, 120, ("HIGH",), False, 200),
}


def get_level(name: str) -> LevelPreset:
    try:
        return LEVELS[name]
    except KeyError:
        raise ConfigError(
            f"unknown compression level {name!r} (expected {', '.join(LEVELS)})"
        ) from None
