"""The PostgreSQL store's keyword index: each card's terms (precis's own, from
:class:`precis.memory.keywords.Terms`, the same as the SQLite store's) kept as postings, with
the document frequencies and lengths BM25 needs kept exact in the same transaction.

A term's postings (card key, weighted frequency, the card's length in tokens) are packed in
blocks (:func:`pack`): each write adds one block per term it touches (level 0); once a term
has :data:`FANOUT` blocks of a level they are merged into one block of the next level. So
a term held by a million cards is a few dozen rows, a search reads its postings in one
query whatever their number, and each posting is rewritten about log16(n) times.

Locks are taken in one order by every writer (the cards, then their terms sorted by term,
then the tenant's ``keyword_stats`` row); a term's blocks change only under its term row's
lock, so concurrent writers queue instead of overwriting each other's blocks, and the rare
deadlock left is retried by the store.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from precis.memory.card import MemoryCard
from precis.memory.store._rows import CONTEXT_CHARS, card_body, context_text

if TYPE_CHECKING:
    import numpy as np
    import psycopg

    from precis.memory.keywords import CardTerms, Terms

__all__ = ["FANOUT", "card_terms", "index_cards", "pack", "term_list", "unindex_cards",
           "unpack"]

FANOUT = 16  # blocks of one level merged into one of the next
_COPY = "COPY postings (tenant, term_id, level, n, data) FROM STDIN (FORMAT BINARY)"
_TYPES = ["text", "int8", "int2", "int4", "bytea"]


def pack(keys: np.ndarray, freqs: np.ndarray, lengths: np.ndarray) -> bytes:
    """A block: the card keys (int64), then their frequencies and lengths (float32)."""
    import numpy as np

    return (np.asarray(keys, dtype="<i8").tobytes() + np.asarray(freqs, dtype="<f4").tobytes()
            + np.asarray(lengths, dtype="<f4").tobytes())


def unpack(n: int, data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import numpy as np

    return (np.frombuffer(data, dtype="<i8", count=n),
            np.frombuffer(data, dtype="<f4", count=n, offset=8 * n),
            np.frombuffer(data, dtype="<f4", count=n, offset=12 * n))


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
    """Add these (card key, terms) cards' postings; update frequencies and the stats."""
    import numpy as np

    if not cards:
        return
    codes: dict[str, int] = {}  # term -> its number in this call
    posted: list[int] = []
    keys: list[int] = []
    freqs: list[float] = []
    lengths: list[float] = []
    for key, terms in cards:
        length = float(terms.length)
        for term, freq in terms.freqs.items():
            posted.append(codes.setdefault(term, len(codes)))
            keys.append(key)
            freqs.append(freq)
            lengths.append(length)
    names = sorted(codes)
    if names:
        code = np.asarray(posted, dtype=np.int64)
        order = np.argsort(code, kind="stable")  # each term's postings together, in card order
        counts = np.bincount(code, minlength=len(codes))
        starts = np.concatenate([[0], np.cumsum(counts)])
        weights = np.asarray(freqs, dtype="<f4")
        top = np.maximum.reduceat(weights[order], starts[:-1])
        cur.execute(
            "INSERT INTO terms (tenant, term, df, max_freq, fresh) SELECT %s, t, d, m, 1 FROM "
            "unnest(%s::text[], %s::int[], %s::real[]) AS x(t, d, m) ORDER BY t "
            "ON CONFLICT (tenant, term) DO UPDATE SET df = terms.df + excluded.df, "
            "max_freq = GREATEST(terms.max_freq, excluded.max_freq), fresh = terms.fresh + 1 "
            "RETURNING term, id, fresh",
            (tenant, names, [int(counts[codes[t]]) for t in names],
             [float(top[codes[t]]) for t in names]))
        found = {term: (int(term_id), int(fresh)) for term, term_id, fresh in cur.fetchall()}
        by_key = np.asarray(keys, dtype="<i8")[order]
        by_freq = weights[order]
        by_length = np.asarray(lengths, dtype="<f4")[order]
        _write_blocks(cur, tenant, 0, (
            (found[t][0], by_key[lo:hi], by_freq[lo:hi], by_length[lo:hi])
            for t in names for lo, hi in [(int(starts[codes[t]]), int(starts[codes[t] + 1]))]))
        full = [found[t][0] for t in names if found[t][1] >= FANOUT]
        if full:
            cur.execute("UPDATE terms SET fresh = 0 WHERE id = ANY(%s)", (full,))
            _merge(cur, tenant, full, 0)
    total = float(sum(t.length for _, t in cards))
    shortest = float(min(t.length for _, t in cards))
    cur.execute(
        "INSERT INTO keyword_stats VALUES (%s, %s, %s, %s) ON CONFLICT (tenant) DO UPDATE SET "
        "cards = keyword_stats.cards + excluded.cards, "
        "total_length = keyword_stats.total_length + excluded.total_length, "
        "min_length = LEAST(keyword_stats.min_length, excluded.min_length)",
        (tenant, len(cards), total, shortest))


def _write_blocks(cur: psycopg.Cursor[Any], tenant: str, level: int,
                  blocks: Iterable[tuple[int, Any, Any, Any]]) -> None:
    """COPY one block per (term id, keys, freqs, lengths) at ``level``."""

    with cur.copy(_COPY) as copy:
        copy.set_types(_TYPES)
        for term_id, keys, freqs, lengths in blocks:
            copy.write_row((tenant, term_id, level, len(keys), pack(keys, freqs, lengths)))


def _merge(cur: psycopg.Cursor[Any], tenant: str, term_ids: list[int], level: int) -> None:
    """Merge the ``level`` blocks of these terms into one block each, one level up; on up
    while a level fills."""
    import numpy as np

    while term_ids:
        cur.execute("DELETE FROM postings WHERE tenant = %s AND term_id = ANY(%s) "
                    "AND level = %s RETURNING term_id, n, data", (tenant, term_ids, level))
        parts: dict[int, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}
        for term_id, n, data in cur.fetchall():
            parts.setdefault(int(term_id), []).append(unpack(int(n), bytes(data)))
        _write_blocks(cur, tenant, level + 1, (
            (term_id, np.concatenate([b[0] for b in blocks]),
             np.concatenate([b[1] for b in blocks]), np.concatenate([b[2] for b in blocks]))
            for term_id, blocks in parts.items()))
        level += 1
        cur.execute("SELECT term_id FROM postings WHERE tenant = %s AND term_id = ANY(%s) "
                    "AND level = %s GROUP BY term_id HAVING count(*) >= %s",
                    (tenant, list(parts), level, FANOUT))
        term_ids = [int(r[0]) for r in cur.fetchall()]


def unindex_cards(cur: psycopg.Cursor[Any], tenant: str,
                  cards: Sequence[tuple[int, float | None, str | None]]) -> None:
    """Take these (card key, length, term list) cards out of the keyword index (cards whose
    terms were never computed, length ``None``, have nothing there)."""
    import numpy as np

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
        gone = np.asarray(sorted(k for k, _, _ in indexed), dtype=np.int64)
        cur.execute("SELECT term_id, block, n, data FROM postings WHERE tenant = %s "
                    "AND term_id = ANY(%s)", (tenant, [ids[t] for t in found]))
        for term_id, block, n, data in cur.fetchall():
            keys, freqs, lengths = unpack(int(n), bytes(data))
            keep = ~np.isin(keys, gone)
            if keep.all():
                continue
            # a block never changes (processes keep blocks by id): a new one replaces it
            cur.execute("DELETE FROM postings WHERE tenant = %s AND term_id = %s "
                        "AND block = %s RETURNING level", (tenant, term_id, block))
            level = int(cur.fetchone()[0])  # type: ignore[index]
            if keep.any():
                _write_blocks(cur, tenant, level, [(int(term_id), keys[keep], freqs[keep],
                                                    lengths[keep])])
    cur.execute(
        "UPDATE keyword_stats SET cards = cards - %s, total_length = total_length - %s "
        "WHERE tenant = %s",
        (len(indexed), float(sum(length for _, length, _ in indexed)), tenant))
