"""The PostgreSQL store's keyword index: each card's terms (precis's own, from
:class:`precis.memory.keywords.Terms`, the same as the SQLite store's) written as postings,
with the document frequencies and lengths BM25 needs kept exact in the same transaction.

Locks are taken in one order by every writer (the cards, then their terms sorted by term,
then the tenant's ``keyword_stats`` row), so concurrent writers queue instead of
deadlocking; the rare deadlock left is retried by the store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from precis.memory.card import MemoryCard
from precis.memory.store._rows import CONTEXT_CHARS, card_body, context_text

if TYPE_CHECKING:
    import psycopg

    from precis.memory.keywords import CardTerms, Terms

__all__ = ["card_terms", "index_cards", "term_list", "unindex_cards"]



def card_terms(maker: Terms, cur: psycopg.Cursor[Any], tenant: str,
               cards: Sequence[MemoryCard]) -> list[CardTerms]:
    """The terms of each card: its own words, and at half weight the messages just before
    and after its sources (read in one query)."""
    wanted: list[tuple[str, int]] = []
    for card in cards:
        if card.message_indexes:
            wanted += [(card.session_id, min(card.message_indexes) - 1),
                       (card.session_id, max(card.message_indexes) + 1)]
    texts: dict[tuple[str, int], str] = {}
    if wanted:
        cur.execute(
            "SELECT m.session_id, m.idx, left(m.text, %s) FROM messages m "
            "JOIN unnest(%s::text[], %s::int[]) AS w(session_id, idx) "
            "ON m.session_id = w.session_id AND m.idx = w.idx WHERE m.tenant = %s",
            (CONTEXT_CHARS, [s for s, _ in wanted], [i for _, i in wanted], tenant))
        texts = {(s, i): t for s, i, t in cur.fetchall()}
    pairs = []
    for card in cards:
        context = ""
        if card.message_indexes:
            around = (min(card.message_indexes) - 1, max(card.message_indexes) + 1)
            context = context_text(texts[(card.session_id, i)] for i in sorted(set(around))
                                   if (card.session_id, i) in texts)
        pairs.append((card_body(card), context))
    return maker.cards(pairs)


def term_list(terms: CardTerms) -> str:
    """What a card row keeps of its terms (to take them out of the index later)."""
    return " ".join(terms.freqs)


def index_cards(cur: psycopg.Cursor[Any], tenant: str,
                cards: Sequence[tuple[int, CardTerms]]) -> None:
    """Add postings for these (card key, terms) pairs; update frequencies and the stats."""
    if not cards:
        return
    df: dict[str, int] = {}
    top: dict[str, float] = {}
    for _, terms in cards:
        for term, freq in terms.freqs.items():
            df[term] = df.get(term, 0) + 1
            if freq > top.get(term, 0.0):
                top[term] = freq
    names = sorted(df)
    ids: dict[str, int] = {}
    if names:
        cur.execute(
            "INSERT INTO terms (tenant, term, df, max_freq) "
            "SELECT %s, t, d, m FROM unnest(%s::text[], %s::int[], %s::real[]) AS x(t, d, m) "
            "ORDER BY t ON CONFLICT (tenant, term) DO UPDATE SET df = terms.df + excluded.df, "
            "max_freq = GREATEST(terms.max_freq, excluded.max_freq) RETURNING term, id",
            (tenant, names, [df[t] for t in names], [top[t] for t in names]))
        ids = dict(cur.fetchall())
    term_ids: list[int] = []
    keys: list[int] = []
    freqs: list[float] = []
    lengths: list[float] = []
    for key, terms in cards:
        for term, freq in terms.freqs.items():
            term_ids.append(ids[term])
            keys.append(key)
            freqs.append(freq)
            lengths.append(float(terms.length))
    if term_ids:
        cur.execute(
            "INSERT INTO postings (tenant, term_id, card_key, freq, length) "
            "SELECT %s, * FROM unnest(%s::bigint[], %s::bigint[], %s::real[], %s::real[])",
            (tenant, term_ids, keys, freqs, lengths))
    total = float(sum(t.length for _, t in cards))
    shortest = float(min(t.length for _, t in cards))
    cur.execute(
        "INSERT INTO keyword_stats VALUES (%s, %s, %s, %s) ON CONFLICT (tenant) DO UPDATE SET "
        "cards = keyword_stats.cards + excluded.cards, "
        "total_length = keyword_stats.total_length + excluded.total_length, "
        "min_length = LEAST(keyword_stats.min_length, excluded.min_length)",
        (tenant, len(cards), total, shortest))


def unindex_cards(cur: psycopg.Cursor[Any], tenant: str,
                  cards: Sequence[tuple[int, float | None, str | None]]) -> None:
    """Take these (card key, length, term list) cards out of the keyword index (cards whose
    terms were never computed, length ``None``, have nothing there)."""
    indexed = [(key, length, terms or "") for key, length, terms in cards if length is not None]
    if not indexed:
        return
    df: dict[str, int] = {}
    for _, _, terms in indexed:
        for term in terms.split():
            df[term] = df.get(term, 0) + 1
    names = sorted(df)
    if names:
        # lock the terms in the order every writer takes them, then change them
        cur.execute("SELECT term, id FROM terms WHERE tenant = %s AND term = ANY(%s) "
                    "ORDER BY term FOR UPDATE", (tenant, names))
        ids = dict(cur.fetchall())
        found = [t for t in names if t in ids]
        cur.execute(
            "UPDATE terms t SET df = t.df - x.d FROM unnest(%s::bigint[], %s::int[]) "
            "AS x(id, d) WHERE t.id = x.id",
            ([ids[t] for t in found], [df[t] for t in found]))
        cur.execute("DELETE FROM postings WHERE tenant = %s AND card_key = ANY(%s) "
                    "AND term_id = ANY(%s)",
                    (tenant, [k for k, _, _ in indexed], [ids[t] for t in found]))
    cur.execute(
        "UPDATE keyword_stats SET cards = cards - %s, total_length = total_length - %s "
        "WHERE tenant = %s",
        (len(indexed), float(sum(length for _, length, _ in indexed)), tenant))
