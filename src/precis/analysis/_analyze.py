"""``analyze()``: classify, consolidate and score every fragment of a conversation."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass, field

from precis._gc import collector_paused
from precis.analysis.classify import TypeVoter, classify_all
from precis.analysis.config import AnalysisConfig
from precis.analysis.consolidate import consolidate
from precis.analysis.importance import Importance, score_importance
from precis.analysis.model import Classification, Consolidation
from precis.errors import InputError
from precis.model import Conversation
from precis.segment import Fragment, Segmentation, segment

__all__ = ["Analysis", "AnalyzedFragment", "analyze"]


@dataclass(frozen=True)
class AnalyzedFragment:
    """One fragment with its type, importance and relations."""

    fragment: Fragment
    classification: Classification
    importance: Importance
    superseded_by: str | None
    duplicate_count: int
    folded: bool

    @property
    def id(self) -> str:
        return self.fragment.id

    @property
    def type(self) -> str:
        return self.classification.type

    @property
    def level(self) -> str:
        return self.importance.level


@dataclass
class Analysis:
    """The result of :func:`analyze`; ``items()`` walks the fragments in order."""

    conversation: Conversation
    segmentation: Segmentation
    classifications: list[Classification]
    importance: list[Importance]
    consolidation: Consolidation
    timings: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._index = {f.id: i for i, f in enumerate(self.segmentation.fragments)}
        self._dup_count: dict[str, int] = {}
        for group in self.consolidation.duplicates:
            for member in group.members:
                self._dup_count[member] = group.count

    def __len__(self) -> int:
        return len(self.segmentation.fragments)

    def item(self, fragment_id: str) -> AnalyzedFragment:
        try:
            i = self._index[fragment_id]
        except KeyError:
            raise InputError(
                f"no fragment {fragment_id!r} (this conversation has S1 to S{len(self)})"
            ) from None
        return self._item(i)

    def _item(self, i: int) -> AnalyzedFragment:
        frag = self.segmentation.fragments[i]
        return AnalyzedFragment(
            fragment=frag,
            classification=self.classifications[i],
            importance=self.importance[i],
            superseded_by=self.consolidation.superseded_by.get(frag.id),
            duplicate_count=self._dup_count.get(frag.id, 1),
            folded=frag.id in self.consolidation.folded,
        )

    def items(self) -> Iterator[AnalyzedFragment]:
        for i in range(len(self)):
            yield self._item(i)

    def explain(self, fragment_id: str) -> str:
        """Why a fragment got its type and level, in one line."""
        return explain(self.item(fragment_id))


def explain(item: AnalyzedFragment) -> str:
    cls, imp = item.classification, item.importance
    factors = ", ".join(f"{name} {value:+.2f}" for name, value in imp.factors.items())
    why = f"{cls.type} ({cls.confidence:.2f}, {cls.source}"
    if cls.evidence:
        why += ": " + ", ".join(cls.evidence[:4])
    why += f") -> {imp.level} {imp.score:.2f} = {factors}"
    if item.superseded_by:
        why += f"; superseded by {item.superseded_by}"
    if item.duplicate_count > 1:
        why += f"; said {item.duplicate_count} times"
    if item.folded:
        why += "; folded confirmation"
    return why


def analyze(
    source: Conversation | Segmentation,
    config: AnalysisConfig | None = None,
    *,
    voter: TypeVoter | None = None,
    conversation: Conversation | None = None,
) -> Analysis:
    """Type, importance and relations of every fragment of a conversation.

    ``source`` is a :class:`~precis.model.Conversation` (segmented here) or a
    :class:`~precis.segment.Segmentation` (pass its ``conversation`` too). ``voter`` is
    the optional model layer asked about low-confidence fragments.
    """
    # (a model layer may allocate as it likes: the collector stays on for it)
    with collector_paused() if voter is None else nullcontext():
        return _analyze(source, config or AnalysisConfig(), voter, conversation)


def _analyze(
    source: Conversation | Segmentation,
    cfg: AnalysisConfig,
    voter: TypeVoter | None,
    conversation: Conversation | None,
) -> Analysis:
    timings: dict[str, float] = {}
    start = time.perf_counter()
    if isinstance(source, Conversation):
        conv, seg = source, segment(source)
    else:
        if conversation is None:
            raise TypeError("analyze(segmentation) needs conversation=")
        conv, seg = conversation, source
    timings["segment"] = time.perf_counter() - start
    t = time.perf_counter()
    fragments = seg.fragments
    classes = classify_all(fragments, cfg.cue_table, voter=voter, threshold=cfg.vote_below)
    timings["classify"] = time.perf_counter() - t
    t = time.perf_counter()
    cons = consolidate(fragments, [c.type for c in classes], config=cfg.consolidation)
    timings["consolidate"] = time.perf_counter() - t
    t = time.perf_counter()
    scores = score_importance(fragments, classes, cons, cfg)
    timings["score"] = time.perf_counter() - t
    return Analysis(conv, seg, list(classes), scores, cons, timings)
