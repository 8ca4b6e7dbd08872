"""Importance marks: a piece of sub-agent output with its level, category and source.

Seed 003's ``mark(content, importance, category, source)`` needs the caller to choose the
level. Here the level and the category may also be left to precis: the text is analysed by
:func:`precis.analysis.analyze` (the same classifier and importance weights as for whole
conversations) with the factors that only make sense inside a conversation (recency, the
latest request, the last decision) switched off, since a lone finding has no position.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from precis.analysis import AnalysisConfig, ImportanceWeights, analyze
from precis.analysis.model import Level
from precis.errors import InputError
from precis.model import ROLES, Conversation, Message, Role
from precis.subagents._checks import LEVELS, check_level, check_text, level_rank

__all__ = ["LEVELS", "Mark", "mark"]


@dataclass(frozen=True)
class Mark:
    """One marked item of sub-agent output.

    ``level`` is HIGH (must keep: key files, serious issues, core decisions), MEDIUM (keep
    if there is room) or LOW (may drop); ``category`` says what it is (``file``, ``issue``,
    ``decision``, or a precis fragment type such as ``fact``); ``source`` says who produced
    it (a sub-agent or task name). Lower-case levels are accepted and stored upper-case.
    """

    text: str
    level: Level = "MEDIUM"
    category: str = ""
    source: str = ""

    def __post_init__(self) -> None:
        check_text(self.text, "mark.text")
        object.__setattr__(self, "level", check_level(self.level, "mark.level"))
        check_text(self.category, "mark.category")
        check_text(self.source, "mark.source")

    @property
    def rank(self) -> int:
        """0 for HIGH, 1 for MEDIUM, 2 for LOW."""
        return level_rank(self.level)


@cache
def _standalone_config() -> AnalysisConfig:
    """Analysis settings for a lone text: no position-dependent factors."""
    return AnalysisConfig(
        weights=ImportanceWeights(recency=0.0, latest_request=0.0, last_decision=0.0)
    )


def _infer(text: str, role: Role) -> tuple[Level, str]:
    """The level and type precis gives ``text``: those of its most important fragment
    (highest level, then highest score, then the first)."""
    analysis = analyze(Conversation([Message.of(role, text)]), _standalone_config())
    items = list(analysis.items())
    if not items:  # white space only
        return "LOW", "chitchat"
    best = min(items, key=lambda it: (level_rank(it.level), -it.importance.score))
    return best.importance.level, best.type


def mark(
    text: str,
    level: Level | str | None = None,
    category: str | None = None,
    source: str = "",
    *,
    role: Role = "assistant",
) -> Mark:
    """Mark ``text``; a level or category left out is inferred by precis' rules.

    The inferred category is the precis fragment type (``decision``, ``constraint``,
    ``error``, ``fact``, ...) of the text's most important fragment and the inferred level
    is that fragment's level. ``role`` is who wrote the text (a tool's output weighs like
    one). ``mark("src/auth/login.py", "HIGH", "file", "eye")`` keeps the caller's choice.
    """
    check_text(text, "text")
    if role not in ROLES:
        raise InputError(
            f"unknown role {role!r} (expected {', '.join(ROLES)})", where="role"
        )
    chosen = None if level is None else check_level(level)
    if chosen is None or category is None:
        inferred_level, inferred_type = _infer(text, role)
        chosen = chosen or inferred_level
        category = inferred_type if category is None else category
    return Mark(text=text, level=chosen, category=category, source=source)

