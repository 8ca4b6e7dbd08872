"""Understanding a conversation: what each fragment is, how much it matters, how they relate.

``analyze(conversation)`` classifies every fragment (goal, constraint, decision, ...),
consolidates them (duplicates, requirement version chains, folded confirmations) and
scores their importance (HIGH / MEDIUM / LOW) with every factor kept for explanation.
"""

from __future__ import annotations

from precis.analysis._analyze import Analysis, AnalyzedFragment, analyze, explain
from precis.analysis.classify import TypeVoter, classify, classify_all
from precis.analysis.config import AnalysisConfig, ImportanceWeights
from precis.analysis.consolidate import consolidate
from precis.analysis.cues import CueTable
from precis.analysis.importance import Importance, score_importance
from precis.analysis.model import (
    FRAGMENT_TYPES,
    Chain,
    Classification,
    Consolidation,
    DuplicateGroup,
    FragmentType,
    Level,
)

__all__ = [
    "FRAGMENT_TYPES",
    "Analysis",
    "AnalysisConfig",
    "AnalyzedFragment",
    "Chain",
    "Classification",
    "Consolidation",
    "CueTable",
    "DuplicateGroup",
    "FragmentType",
    "Importance",
    "ImportanceWeights",
    "Level",
    "TypeVoter",
    "analyze",
    "classify",
    "classify_all",
    "consolidate",
    "explain",
    "score_importance",
]
