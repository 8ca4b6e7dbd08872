"""Analysis output: what each fragment is, how much it matters, and how fragments relate.

Analysis never changes a :class:`~precis.segment.Fragment`; it produces records keyed by
fragment id, so the data keeps flowing one way (segment -> analyze -> summarize).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "FRAGMENT_TYPES",
    "Chain",
    "Classification",
    "Consolidation",
    "DuplicateGroup",
    "FragmentType",
    "Level",
]

FragmentType = Literal[
    "goal",
    "background",
    "fact",
    "reasoning",
    "decision",
    "constraint",
    "plan",
    "code",
    "error",
    "todo",
    "chitchat",
]
FRAGMENT_TYPES: tuple[FragmentType, ...] = (
    "goal", "background", "fact", "reasoning", "decision", "constraint",
    "plan", "code", "error", "todo", "chitchat",
)
Level = Literal["HIGH", "MEDIUM", "LOW"]


@dataclass(frozen=True)
class Classification:
    """A fragment's type, with the rule layer's confidence (0-1) and why.

    ``tags`` are secondary labels (seed 000 classes such as ``technical_specification``,
    ``workflow_status``, ``documentation``; technical level ``tech:advanced``; actionability
    ``actionable`` / ``informational``). ``evidence`` lists the cues that fired, e.g.
    ``"cue:must"``, ``"structure:code_fence"``, ``"role:tool"``. ``source`` is ``rules`` or the
    name of the model layer that voted.
    """

    type: FragmentType
    confidence: float
    tags: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()
    source: str = "rules"


@dataclass(frozen=True)
class DuplicateGroup:
    """Fragments that say the same thing; ``kept`` is the latest, the others fold into it.

    ``most_complete`` is the member with the fullest wording (most numbers and names, then
    the longest text): the one to show when the copies differ (seed 002 二.4 rule 3).
    """

    kept: str
    members: tuple[str, ...]  # in time order, ``kept`` last
    most_complete: str | None = None

    @property
    def count(self) -> int:
        return len(self.members)


@dataclass(frozen=True)
class Chain:
    """Versions of one requirement / constraint / goal in time order; the last is in force."""

    id: str
    topic: str
    fragments: tuple[str, ...]

    @property
    def current(self) -> str:
        return self.fragments[-1]


@dataclass
class Consolidation:
    """How fragments relate: duplicates, requirement chains, folded confirmations."""

    duplicates: list[DuplicateGroup] = field(default_factory=list)
    chains: list[Chain] = field(default_factory=list)
    folded: set[str] = field(default_factory=set)  # confirmations / acknowledgements
    # fragment id -> the id of the fragment that supersedes it (newer chain version or the
    # kept duplicate)
    superseded_by: dict[str, str] = field(default_factory=dict)
