"""Memory search: understand the query, filter in the store, fuse keyword and vector ranks,
then post-process (near-duplicates out, optional time order, source context, a recap).

Ranking fuses BM25 (:mod:`precis.memory.keywords`) and cosine similarity (when the store
has vectors) by relative score: each list is scaled to [0, 1] and the two are averaged. It
is nudged by what the query asked for: a card of a type the query names, a card that holds
an exact entity of the query (an id, a path), the person the query names, a card naming a
version when the query asks which one, and recency when the query asks for the latest; a
session's summary card is ranked lower unless the query asks about a session (:data:`UNASKED`). A
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

from precis._surrogates import clean_text
from precis.errors import EmbeddingError, QueryError
from precis.memory.card import MemoryCard
from precis.memory.query import SESSION_CUE_WORDS, QueryPlan, understand
from precis.memory.store.base import NO_FILTERS, Filters, Store, StoredMessage
from precis.memory.text import words as split_words
from precis.segment._lang import detect_language

if TYPE_CHECKING:
    from precis.memory.embed import Embedder

__all__ = ["KEYWORDS_ONLY", "MIN_SCORE", "Hit", "SearchResult", "search", "source_ranges"]

_MAX_K = 1000
SEMANTIC_WEIGHT = {"en": 0.4, "zh": 0.6}
"""The share of the fused score that comes from the vectors (the rest from BM25), by the
query's language: keywords are weaker in Chinese (word cutting errs, no stemming, more
synonyms). Measured with the local models (README, Benchmarks): on LoCoMo (English) recall@10
is 75.8 / 74.7 / 70.7 at 0.4 / 0.5 / 0.6 with the multilingual model, on MADial-Bench (Chinese)
recall@1 31.4 / 33.9 / 32.1 at 0.5 / 0.6 / 0.7."""
UNASKED: dict[str, float] = {"summary": 0.3}
"""Card types ranked lower unless the query (its wording or its type filter) asks for them:
a session's summary answers "what did we do in the billing session" / "那个会话做到哪了",
and would otherwise crowd out the cards that hold the evidence of a question about one fact
(it shares words with most questions about its session, and cites ~20 messages). Measured
on LoCoMo with a summary card per conversation (``bench/memory_locomo.py --summary-cards``,
default model, recall@10; 75.5 without summary cards): 73.3 at full weight, 75.3 at 0.3,
75.4 at 0.3 once it no longer sets the scale of the lists it tops (:func:`_relative`)."""
ASKED: dict[str, float] = {"summary": 2.0}
"""The nudge of a card whose type the query asks for, where it is not 1.15: a question
about a session ("what did we do in the export session?", "导出接口那个会话做到哪了") is
answered by the session's summary, and the question's words only say which session; the
summary, long and general, matches them less than the session's turns that say them (BM25
weighs a long card's words less)."""
_HEADS = 4  # the best cards of each ranked list whose type is looked up (_unasked_heads)
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
    if isinstance(query, str):
        query = clean_text(query)  # a lone surrogate is no word to look for
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
    named = _named_sessions(store, plan, effective, pool)
    head = [cid for cid, _ in ordered[: k * 2 + 10]]
    cards = {c.id: c for c in store.get_many(list(dict.fromkeys([*named, *head])))}
    scored = _adjust(plan, [(cards[cid], fused.get(cid, 0.0)) for cid in
                            dict.fromkeys([*head, *named]) if cid in cards], why,
                     asked(plan, effective))
    first = frozenset(named)
    if first:
        scored = _sessions_first(scored, first, why)
    hits: list[Hit] = []
    seen: list[frozenset[str]] = []
    for card, score in scored:
        if score < MIN_SCORE and card.id not in first:
            break  # sorted after the sessions named: the rest are no better (see MIN_SCORE)
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
    aside = _unasked_heads(store, asked(plan, filters), [*keyword, *semantic])
    for lists, share_of in ((keyword, 1.0 - weight), (semantic, weight)):
        for label, ranked in lists:
            for cid, score in ranked:
                why.setdefault(cid, {})[label] = score
            # alone, BM25 is scaled from its true zero (no match): the weakest keyword match
            # keeps a share, so it is not cut as a zero score; fused with cosine (which has
            # no true zero), both are scaled from their weakest candidate to weigh alike
            floor = 0.0 if not semantic else None
            for cid, share in _relative(ranked, floor, aside).items():
                fused[cid] = fused.get(cid, 0.0) + share * share_of / len(lists)
    return fused, why


def _named_sessions(store: Store, plan: QueryPlan, filters: Filters, pool: int) -> list[str]:
    """For a question about a session ("what did we do in the billing session?", "git 那个会话
    做到哪了"), the summary cards that hold its words (the words name the session; the
    question itself is answered by the session's summary), best first, or the latest
    session's when it names none ("where did we leave off?"); none for other questions."""
    if "summary" not in plan.intents or (filters.types and "summary" not in filters.types):
        return []
    only = replace(filters, types=("summary",))
    words = list(dict.fromkeys([*(w for w in plan.words if w.lower() not in SESSION_CUE_WORDS),
                                *plan.entities]))
    if not words:  # "where did we leave off?": the latest session
        count = store.count(only)
        return [c.id for c in store.cards(only, limit=1, offset=count - 1)] if count else []
    return [cid for cid, score in store.keyword_search(words, only, pool) if score > 0]


def _sessions_first(scored: list[tuple[MemoryCard, float]], named: frozenset[str],
                    why: dict[str, dict[str, float]]) -> list[tuple[MemoryCard, float]]:
    """The summaries of the sessions a question names ahead of every other card, each in
    its order (a stable partition); their ``why`` says so (``session``)."""
    for card, _ in scored:
        if card.id in named:
            why.setdefault(card.id, {})["session"] = 1.0
    return ([p for p in scored if p[0].id in named]
            + [p for p in scored if p[0].id not in named])


def asked(plan: QueryPlan, filters: Filters) -> frozenset[str]:
    """The card types a search asks for: those its wording points to and its filters name."""
    return frozenset(plan.intents) | frozenset(filters.types)


def _unasked_heads(store: Store, wanted: frozenset[str],
                   lists: Sequence[tuple[str, Sequence[tuple[str, float]]]]) -> frozenset[str]:
    """Of the best few cards of each ranked list, those of a type ranked lower unless asked
    for (:data:`UNASKED`) that the search does not ask for: they do not set their list's
    scale (see :func:`_relative`)."""
    if all(kind in wanted for kind in UNASKED):
        return frozenset()
    heads = {cid for _, ranked in lists
             for cid, _ in sorted(ranked, key=lambda p: (-p[1], p[0]))[:_HEADS]}
    return frozenset(c.id for c in store.get_many(sorted(heads))
                     if c.type in UNASKED and c.type not in wanted) if heads else frozenset()


def _language(text: str) -> str:
    return "zh" if detect_language(text) in ("zh", "mixed") else "en"


def _understands(embedder: Embedder, text: str) -> bool:
    """Whether the embedder knows the query's language (one that declares ``languages``,
    like the English-only MiniLM, is skipped for a Chinese query)."""
    languages = getattr(embedder, "languages", None)
    return not languages or _language(text) in languages


def _relative(ranked: Sequence[tuple[str, float]], floor: float | None = None,
              aside: frozenset[str] = frozenset()) -> dict[str, float]:
    """Scores of one ranked list scaled to [0, 1] within the list (relative score fusion):
    the best gets 1 and ``floor`` 0 (by default the worst candidate), so BM25 and cosine
    weigh alike. The best is the best card not ``aside``: a session's summary the query
    does not ask for, which often tops the cosine list of any question about its session,
    would otherwise shrink every other card's share of that list (on LoCoMo with summary
    cards at 0.3, recall@10 75.3 -> 75.4)."""
    if not ranked:
        return {}
    top = max((s for cid, s in ranked if cid not in aside),
              default=max(s for _, s in ranked))
    low = min(s for _, s in ranked) if floor is None else min(floor, top)
    span = top - low
    if span <= 0:
        return {cid: 1.0 for cid, _ in ranked}
    return {cid: min(1.0, (s - low) / span) for cid, s in ranked}


def _adjust(
    plan: QueryPlan, scored: Sequence[tuple[MemoryCard, float]],
    why: dict[str, dict[str, float]], wanted: frozenset[str] = frozenset(),
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
            boost = ASKED.get(card.type, 1.15)
            factor *= boost
            reasons["type"] = boost
        elif card.type in UNASKED and card.type not in wanted:
            factor *= UNASKED[card.type]
            reasons["unasked"] = UNASKED[card.type]
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


def source_ranges(card: MemoryCard, context: int) -> list[tuple[str, int, int]]:
    """The ``(session, start, stop)`` ranges of a card's source messages with ``context``
    neighbours each side, ranges that meet merged: a card citing messages far apart (a
    session's summary) reads those, not everything between them."""
    out: list[tuple[str, int, int]] = []
    for i in sorted(set(card.message_indexes)):
        start, stop = max(0, i - context), i + context + 1
        if out and start <= out[-1][2]:
            out[-1] = (card.session_id, out[-1][1], max(stop, out[-1][2]))
        else:
            out.append((card.session_id, start, stop))
    return out


def _with_sources(store: Store, hits: list[Hit], context: int) -> list[Hit]:
    """Each hit with its source messages and ``context`` neighbours each side (one store
    call for all hits)."""
    per_hit = [source_ranges(h.card, context) for h in hits]
    ranges = [r for rs in per_hit for r in rs]
    found = iter(store.messages_in(ranges) if ranges else [])
    out = []
    for hit, own in zip(hits, per_hit):
        indexes = hit.card.message_indexes
        around = [m for _ in own for m in next(found)]
        if not indexes:
            out.append(hit)
            continue
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
