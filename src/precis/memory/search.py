"""Memory search: understand the query, filter in the store, fuse keyword and vector ranks,
then post-process (near-duplicates out, optional time order, source context, a recap).

Ranking fuses BM25 (:mod:`precis.memory.keywords`) and cosine similarity (when the store
has vectors) by relative score: each list is scaled to [0, 1] and the two are averaged. It
is nudged by what the query asked for: a card of a type the query names, a card that holds
an exact entity of the query (an id, a path), the person the query names, a card naming a
version when the query asks which one, and recency when the query asks for the latest. A
query of several lines is also searched by its last two lines (both lists, half the weight
each). A superseded card is shown with its successor's id, and
ranked lower when the query asks for the current state.
Filters given by the caller are hard (enforced by the store); a time range read from the
query text is a filter too, unless nothing matches it, in which case it is dropped and the
result says so.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import TYPE_CHECKING, Any

from precis.errors import EmbeddingError, QueryError
from precis.memory.card import MemoryCard
from precis.memory.query import QueryPlan, understand
from precis.memory.store.base import NO_FILTERS, Filters, Store, StoredMessage
from precis.memory.text import words as split_words
from precis.segment._lang import detect_language

if TYPE_CHECKING:
    from precis.memory.embed import Embedder

__all__ = ["KEYWORDS_ONLY", "MIN_SCORE", "Hit", "SearchResult", "search"]

_MAX_K = 1000
SEMANTIC_WEIGHT = {"en": 0.4, "zh": 0.6}
"""The share of the fused score that comes from the vectors (the rest from BM25), by the
query's language: keywords are weaker in Chinese (word cutting errs, no stemming, more
synonyms). Measured with the local models (README, Benchmarks): on LoCoMo (English) recall@10
is 75.8 / 74.7 / 70.7 at 0.4 / 0.5 / 0.6 with the multilingual model, on MADial-Bench (Chinese)
recall@1 31.4 / 33.9 / 32.1 at 0.5 / 0.6 / 0.7."""
_VERSION_NUMBER = re.compile(r"(?<![\w.])v?\d+(?:\.\d+)+(?![\w.])|(?<![A-Za-z])v\d+\b|版本",
                             re.IGNORECASE)
KEYWORDS_ONLY = "keyword results only"
"""The start of the note a result carries when its vector search could not run."""
MIN_SCORE = 1e-3
"""A card scoring below this (scores are relative: the best candidate of a list scores 1)
is no result: it matched only words that nearly every card holds (their IDF is about 0)
or was the weakest candidate of every list it was in."""


@dataclass(frozen=True)
class Hit:
    """One search result: the card, its score, why it ranked, and where it came from."""

    card: MemoryCard
    score: float
    why: dict[str, float]
    sources: tuple[StoredMessage, ...] = ()
    context: tuple[StoredMessage, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.card.id,
            "score": round(self.score, 6),
            "why": {k: round(v, 4) for k, v in self.why.items()},
            "card": self.card.to_dict(),
            "sources": [_message_dict(m) for m in self.sources],
            "context": [_message_dict(m) for m in self.context],
        }


@dataclass(frozen=True)
class SearchResult:
    """The hits of one query, best first (or in time order), with how the query was read."""

    query: str
    plan: QueryPlan
    hits: list[Hit]
    filters: Filters
    notes: list[str] = field(default_factory=list)
    recap: str | None = None
    timings: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        plan = self.plan
        return {
            "query": self.query,
            "understood": {
                "words": list(plan.words),
                "entities": list(plan.entities),
                "names": list(plan.names),
                "intents": list(plan.intents),
                "time": None if plan.time is None else {
                    "from": plan.time.first.isoformat(), "to": plan.time.last.isoformat(),
                    "phrase": plan.time.phrase,
                },
                "wants_recent": plan.wants_recent,
                "wants_version": plan.wants_version,
            },
            "filters": {k: v for k, v in self.filters.__dict__.items() if v not in (None, ())},
            "notes": self.notes,
            "recap": self.recap,
            "hits": [h.to_dict() for h in self.hits],
            "timings_ms": {k: round(v * 1000, 3) for k, v in self.timings.items()},
        }


def search(
    store: Store,
    query: str,
    *,
    k: int = 10,
    filters: Filters = NO_FILTERS,
    embedder: Embedder | None = None,
    chronological: bool = False,
    context: int = 0,
    dedupe: bool = True,
    recap: bool = False,
    today: date | None = None,
    candidates: int = 100,
) -> SearchResult:
    """Search the store (see the module docstring)."""
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= _MAX_K:
        raise QueryError(f"k must be a whole number from 1 to {_MAX_K}, got {k!r}")
    if not isinstance(context, int) or isinstance(context, bool) or not 0 <= context <= 20:
        raise QueryError(f"context must be a whole number from 0 to 20, got {context!r}")
    timings: dict[str, float] = {}
    t = time.perf_counter()
    plan = understand(query, today=today)
    timings["understand"] = time.perf_counter() - t
    notes: list[str] = []
    if plan.truncated:
        notes.append(f"the query was cut to its first {len(plan.words)} content words")
    effective = filters
    if plan.time is not None and not (filters.since or filters.until):
        effective = replace(filters, since=plan.time.first.isoformat(),
                            until=plan.time.last.isoformat())
    pool = max(candidates, k * 3)
    fused, why = _rank(store, plan, effective, embedder, pool, timings, notes)
    if not fused and effective is not filters:
        notes.append(f"nothing matched the time range of {plan.time.phrase!r}; "  # type: ignore[union-attr]
                     "searched all times")
        effective = filters
        fused, why = _rank(store, plan, effective, embedder, pool, timings, notes)
    t = time.perf_counter()
    ordered = sorted(fused.items(), key=lambda p: (-p[1], p[0]))
    # the nudges scale a score by at most ~1.5x: candidates far down cannot reach the top k
    cards = {c.id: c for c in store.get_many([cid for cid, _ in ordered[: k * 2 + 10]])}
    scored = _adjust(plan, [(cards[cid], s) for cid, s in ordered if cid in cards], why)
    hits: list[Hit] = []
    seen: list[frozenset[str]] = []
    for card, score in scored:
        if score < MIN_SCORE:
            break  # sorted: the rest are no better (see MIN_SCORE)
        if dedupe:
            bag = frozenset(split_words(card.content))
            if any(_similar(bag, other) for other in seen):
                continue
            seen.append(bag)
        hits.append(Hit(card, score, why.get(card.id, {})))
        if len(hits) == k:
            break
    timings["rank"] = time.perf_counter() - t
    hits = _with_sources(store, hits, context)
    if chronological:
        hits.sort(key=lambda h: _time_order(h.card))
    summary = _recap(hits) if recap else None
    return SearchResult(query, plan, hits, effective, notes, summary, timings)


def _rank(
    store: Store,
    plan: QueryPlan,
    filters: Filters,
    embedder: Embedder | None,
    pool: int,
    timings: dict[str, float],
    notes: list[str],
) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    fused: dict[str, float] = {}
    why: dict[str, dict[str, float]] = {}
    t = time.perf_counter()
    words = list(dict.fromkeys([*plan.words, *plan.entities, *plan.expansions]))
    keyword = [("bm25", store.keyword_search(words, filters, pool))]
    if plan.end_words:
        keyword.append(("bm25 end", store.keyword_search(list(plan.end_words), filters, pool)))
    timings["keyword"] = time.perf_counter() - t
    semantic = []
    if embedder is not None and _understands(embedder, plan.text):
        t = time.perf_counter()
        texts = [plan.text] if plan.end is None else [plan.text, plan.end]
        vectors: Any
        try:
            vectors = embedder.embed(texts)
        except EmbeddingError as err:  # an endpoint down: the keywords still answer
            note = f"{KEYWORDS_ONLY}: the embedder failed ({err})"
            if note not in notes:
                notes.append(note)
            vectors = []
        timings["embed"] = time.perf_counter() - t
        t = time.perf_counter()
        for label, vector in zip(("cosine", "cosine end"), vectors):
            semantic.append((label, store.vector_search(vector, embedder.name, filters, pool)))
        timings["vector"] = time.perf_counter() - t
    weight = SEMANTIC_WEIGHT[_language(plan.text)] if semantic else 0.0
    for lists, share_of in ((keyword, 1.0 - weight), (semantic, weight)):
        for label, ranked in lists:
            for cid, score in ranked:
                why.setdefault(cid, {})[label] = score
            # alone, BM25 is scaled from its true zero (no match): the weakest keyword match
            # keeps a share, so it is not cut as a zero score; fused with cosine (which has
            # no true zero), both are scaled from their weakest candidate to weigh alike
            floor = 0.0 if not semantic else None
            for cid, share in _relative(ranked, floor).items():
                fused[cid] = fused.get(cid, 0.0) + share * share_of / len(lists)
    return fused, why


def _language(text: str) -> str:
    return "zh" if detect_language(text) in ("zh", "mixed") else "en"


def _understands(embedder: Embedder, text: str) -> bool:
    """Whether the embedder knows the query's language (one that declares ``languages``,
    like the English-only MiniLM, is skipped for a Chinese query)."""
    languages = getattr(embedder, "languages", None)
    return not languages or _language(text) in languages


def _relative(ranked: Sequence[tuple[str, float]], floor: float | None = None
              ) -> dict[str, float]:
    """Scores of one ranked list scaled to [0, 1] within the list (relative score fusion):
    the best gets 1 and ``floor`` 0 (by default the worst candidate), so BM25 and cosine
    weigh alike."""
    if not ranked:
        return {}
    top = max(s for _, s in ranked)
    low = min(s for _, s in ranked) if floor is None else min(floor, top)
    span = top - low
    if span <= 0:
        return {cid: 1.0 for cid, _ in ranked}
    return {cid: (s - low) / span for cid, s in ranked}


def _adjust(
    plan: QueryPlan, scored: Sequence[tuple[MemoryCard, float]], why: dict[str, dict[str, float]]
) -> list[tuple[MemoryCard, float]]:
    """Apply the query's nudges (see the module docstring) and sort, best first. A card's
    importance level (compaction's judgement of a fragment) does not change its rank: once
    worth a card, a memory ranks by its match (a x0.85 for LOW cost MADial-Bench 0.8 points
    of recall@10 and did nothing on LoCoMo)."""
    entities = [e.lower() for e in plan.entities]
    names = {n.lower() for n in plan.names}
    newest = max((c.event_time or c.created_at for c, _ in scored), default="")
    out: list[tuple[MemoryCard, float]] = []
    for card, score in scored:
        factor = 1.0
        reasons = why.setdefault(card.id, {})
        if plan.intents and card.type in plan.intents:
            factor *= 1.15
            reasons["type"] = 1.15
        content = card.content.lower()
        if entities and any(e in content for e in entities):
            factor *= 1.3
            reasons["entity"] = 1.3
        if names and card.speaker and card.speaker.lower() in names:
            factor *= 1.1
            reasons["speaker"] = 1.1
        if plan.wants_version and _VERSION_NUMBER.search(card.content):
            factor *= 1.15
            reasons["version"] = 1.15
        if card.superseded_by and plan.wants_recent:
            factor *= 0.7
            reasons["superseded"] = 0.7
        if plan.wants_recent and newest and (card.event_time or card.created_at) == newest:
            factor *= 1.2
            reasons["latest"] = 1.2
        out.append((card, score * factor))
    out.sort(key=lambda p: (-p[1], p[0].id))
    return out


def _time_order(card: MemoryCard) -> tuple[str, str, int, str]:
    """Time order: by event time (the creation time when the card has none), then, for
    cards of one moment (a session ingested without timestamps), by their place in the
    conversation."""
    return (card.event_time or card.created_at, card.session_id,
            min(card.message_indexes, default=0), card.id)


def _similar(a: frozenset[str], b: frozenset[str]) -> bool:
    if not a or not b:
        return a == b
    return len(a & b) / len(a | b) >= 0.9


def _with_sources(store: Store, hits: list[Hit], context: int) -> list[Hit]:
    """Each hit with its source messages and ``context`` neighbours each side (one store
    call for all hits)."""
    ranges = [(h.card.session_id, max(0, min(h.card.message_indexes) - context),
               max(h.card.message_indexes) + context + 1) for h in hits if h.card.message_indexes]
    found = iter(store.messages_in(ranges) if ranges else [])
    out = []
    for hit in hits:
        indexes = hit.card.message_indexes
        if not indexes:
            out.append(hit)
            continue
        around = next(found)
        out.append(replace(hit, sources=tuple(m for m in around if m.index in indexes),
                           context=tuple(m for m in around if m.index not in indexes)))
    return out


def _recap(hits: Sequence[Hit]) -> str | None:
    """A short paragraph of the hits in time order (the rule-based recap; no LLM)."""
    if not hits:
        return None
    lines = []
    for hit in sorted(hits, key=lambda h: _time_order(h.card)):
        card = hit.card
        when = (card.event_time or "")[:10]
        who = f"{card.speaker}: " if card.speaker and card.speaker not in ("user", "assistant") \
            else ""
        lines.append(f"{when + ' ' if when else ''}{who}{card.content}")
    return "\n".join(lines)


def _message_dict(message: StoredMessage) -> dict[str, Any]:
    return {
        "session_id": message.session_id,
        "index": message.index,
        "message_id": message.message_id,
        "role": message.role,
        "speaker": message.speaker,
        "timestamp": message.timestamp,
        "text": message.text,
    }
