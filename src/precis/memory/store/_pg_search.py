"""Search inside PostgreSQL: BM25 over the postings and cosine over pgvector, with the
tenant and the filters in the same SQL, so any number of processes share one index and none
loads the store into memory.

Keyword search reads the query terms' posting blocks (:mod:`precis.memory.store._pg_terms`)
and the tenant's statistics in one connection, and sums BM25 in numpy: the scores of the
SQLite store (:class:`precis.memory.keywords.KeywordIndex`, itself FTS5's ``bm25()`` with
column weights 1.0 / 0.5): k1 = 1.2, b = 0.75, idf over every card of the tenant (filters
do not change it), ties broken by the earlier card. Filters are a SQL query on the cards
(their keys, one value) applied to the postings before ranking.

Vectors: a filter that leaves few cards (under :data:`EXACT_BELOW`) is answered exactly
(every allowed card's cosine); otherwise the model's HNSW index is walked with the filter in
the same query (a wider walk when filtered), and a walk that finds less than half of what
was asked (a selective filter the count did not see) is answered exactly instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from precis.errors import StoreError
from precis.memory.keywords import K1, B
from precis.memory.keywords import _best as best  # the SQLite store's top-k: ties alike
from precis.memory.store._pg_terms import unpack
from precis.memory.store._rows import filter_sql
from precis.memory.store.base import Filters

if TYPE_CHECKING:
    import numpy as np

    from precis.memory.store._pg import Shared

__all__ = ["EXACT_BELOW", "keyword_search", "pg_filter", "vector_search"]

EXACT_BELOW = 2000  # allowed cards under which vector search is exact
_CHECKED = 2000  # best keyword cards a filter is checked on before the allowed cards are read
_EF_FILTERED = 1000  # HNSW candidates walked when a filter may drop many (pgvector's most)


def pg_filter(filters: Filters, tenant: str, alias: str = "c") -> tuple[str, list[Any]]:
    """:func:`filter_sql` with psycopg's placeholders."""
    where, params = filter_sql(filters, tenant, alias)
    return where.replace("?", "%s"), params


def idf(cards: int, df: int) -> float:
    """BM25's idf as the SQLite store computes it (a term in most cards counts a little)."""
    value = math.log((cards - df + 0.5) / (df + 0.5))
    return value if value > 0 else 1e-6


def keyword_search(shared: Shared, tenant: str, words: Sequence[str], filters: Filters,
                   limit: int) -> list[tuple[str, float]]:
    """BM25 over the query terms' postings, read in one query (a few blocks per term)."""
    import numpy as np

    where, params = pg_filter(filters, tenant)  # first: a bad filter is an error even here
    terms = shared.terms().query(words)
    if not terms or limit <= 0:
        return []
    with shared.connection() as conn:
        # the tenant's statistics, the terms' frequencies and their blocks' ids; the blocks
        # this process has not read yet come in one more query (a block never changes)
        rows = conn.execute(
            "WITH t AS (SELECT id, df FROM terms WHERE tenant = %s AND term = ANY(%s) "
            "AND df > 0) SELECT s.cards, s.total_length, t.id, t.df, p.block, p.n "
            "FROM keyword_stats s JOIN t ON TRUE JOIN postings p ON p.tenant = s.tenant "
            "AND p.term_id = t.id WHERE s.tenant = %s AND s.cards > 0",
            (tenant, terms, tenant)).fetchall()
        if not rows:
            return []
        cards, total = int(rows[0][0]), float(rows[0][1])
        found = {int(r[2]): int(r[3]) for r in rows}
        cache = shared.blocks
        missing = [int(r[4]) for r in rows if int(r[4]) not in cache]
        if missing:
            for block, n, data in conn.execute(
                    "SELECT block, n, data FROM postings WHERE tenant = %s "
                    "AND term_id = ANY(%s) AND block = ANY(%s)",
                    (tenant, list(found), missing)).fetchall():
                cache.put(int(block), unpack(int(n), bytes(data)))
        blocks = [(r[2], cache.get(int(r[4]))) for r in rows]
        if any(b is None for _, b in blocks):  # evicted meanwhile (a small cache): read again
            data = dict(conn.execute(
                "SELECT block, data FROM postings WHERE tenant = %s AND block = ANY(%s)",
                (tenant, [int(r[4]) for r in rows])).fetchall())
            blocks = [(r[2], unpack(int(r[5]), bytes(data[r[4]]))) for r in rows]
        average = total / cards or 1.0
        keys, scores = _scores(blocks, {t: idf(cards, df) for t, df in found.items()}, average)
        ranked, sums = _sum(keys, scores)
        if filters.empty:
            best_keys, best = _best(ranked, sums, limit)
            named = conn.execute("SELECT key, id FROM cards WHERE key = ANY(%s)",
                                 (best_keys.tolist(),)).fetchall()
        else:
            # the filter on the best cards first: when enough of them pass, no card further
            # down can rank above them (exact); else on every card the filter allows
            best_keys, best = _best(ranked, sums, max(_CHECKED, 20 * limit))
            named = conn.execute(f"SELECT c.key, c.id FROM cards c WHERE c.key = ANY(%s) "
                                 f"AND {where}", (best_keys.tolist(), *params)).fetchall()
            if len(named) < limit and len(best_keys) < len(ranked):
                row = conn.execute(f"SELECT string_agg(int8send(c.key), ''::bytea) FROM "
                                   f"cards c WHERE {where}", params).fetchone()
                if row is None or row[0] is None:
                    return []
                allowed = np.frombuffer(bytes(row[0]), dtype=">i8").astype(np.int64)
                keep = _member(ranked, allowed)
                best_keys, best = _best(ranked[keep], sums[keep], limit)
                named = conn.execute("SELECT key, id FROM cards WHERE key = ANY(%s)",
                                     (best_keys.tolist(),)).fetchall()
    names = {int(k): str(i) for k, i in named}
    out = [(names[k], float(s)) for k, s in zip(best_keys.tolist(), best.tolist())
           if k in names]
    return out[:limit]


def _scores(blocks: Sequence[tuple[Any, Any]], idfs: dict[int, float], average: float
            ) -> tuple[np.ndarray, np.ndarray]:
    """Every posting's BM25 share (the SQLite store's formula): keys and scores."""
    import numpy as np

    keys, scores = [], []
    for term_id, (k, f, length) in blocks:
        norm = K1 * (1 - B + B * length.astype(np.float64) / average)
        keys.append(k)
        scores.append((idfs[int(term_id)] * (K1 + 1)) * f / (f + norm))
    if not keys:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64)
    return np.concatenate(keys), np.concatenate(scores)


def _member(keys: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    import numpy as np

    if not len(keys) or not len(allowed):
        return np.zeros(len(keys), dtype=bool)
    top = int(max(keys.max(), allowed.max()))
    if top <= 64 * (len(keys) + len(allowed)):
        bitmap = np.zeros(top + 1, dtype=bool)
        bitmap[allowed] = True
        inside: np.ndarray = bitmap[keys]
        return inside
    return np.isin(keys, allowed)


def _sum(keys: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each card's summed score: the card keys and their sums."""
    import numpy as np

    if not len(keys):
        return keys, scores
    top = int(keys.max())
    if top <= 16 * len(keys) + (1 << 20):
        sums = np.bincount(keys, weights=scores, minlength=top + 1)
        cards = np.flatnonzero(np.bincount(keys, minlength=top + 1))
        sums = sums[cards]
    else:
        cards, inverse = np.unique(keys, return_inverse=True)
        sums = np.bincount(inverse, weights=scores)
    return cards.astype(np.int64), np.asarray(sums, dtype=np.float64)


def _best(cards: np.ndarray, sums: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best cards, best first (ties: the earlier card first)."""
    if not len(cards):
        return cards, sums
    return best(cards, sums, k)


def vector_search(shared: Shared, tenant: str, query: np.ndarray, model: str,
                  filters: Filters, limit: int) -> list[tuple[str, float]]:
    import numpy as np
    from psycopg import sql

    where, params = pg_filter(filters, tenant)
    dim = model_dim(shared, model)
    if dim is None or limit <= 0:
        return []
    vector = np.asarray(query, dtype=np.float32).reshape(-1)
    if len(vector) != dim:
        raise StoreError(f"a query vector of {len(vector)} values for the model {model!r}, "
                         f"whose stored vectors have {dim}", where=shared.location)
    expr = sql.SQL("v.vec::vector({})").format(sql.Literal(dim))
    named = sql.Literal(model)
    exact = sql.SQL(
        "SELECT c.id, 1 - (v.vec <=> %s) AS s FROM cards c JOIN vectors v "
        "ON v.tenant = c.tenant AND v.model = {model} AND v.card_key = c.key "
        "WHERE {where} ORDER BY s DESC, c.key LIMIT %s"
    ).format(model=named, where=sql.SQL(where))
    walk = sql.SQL(
        "SELECT c.id, 1 - ({expr} <=> %s) FROM vectors v JOIN cards c ON c.key = v.card_key "
        "WHERE v.tenant = %s AND v.model = {model} AND {where} ORDER BY {expr} <=> %s LIMIT %s"
    ).format(expr=expr, model=named, where=sql.SQL(where))
    with shared.connection() as conn:
        allowed = conn.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM cards c WHERE {where} LIMIT %s) x",
            (*params, EXACT_BELOW)).fetchone()
        if allowed is not None and allowed[0] < EXACT_BELOW:
            rows = conn.execute(exact, (vector, *params, limit)).fetchall()
        else:
            ef = min(_EF_FILTERED if not filters.empty else max(40, 2 * limit), _EF_FILTERED)
            if getattr(conn, "_precis_ef", None) != ef:  # a setting of the connection
                conn.execute(f"SET hnsw.ef_search = {int(ef)}")
                conn._precis_ef = ef  # type: ignore[attr-defined]
            rows = conn.execute(walk, (vector, tenant, *params, vector, limit)).fetchall()
            if len(rows) < min(limit, EXACT_BELOW) // 2:
                rows = conn.execute(exact, (vector, *params, limit)).fetchall()
    return [(str(cid), float(score)) for cid, score in rows]


def model_dim(shared: Shared, model: str) -> int | None:
    """The length of ``model``'s stored vectors (None: the store has none of them)."""
    dim = shared.models.get(model)
    if dim is None:
        rows = shared.read("SELECT dim FROM vector_models WHERE model = %s", (model,))
        if rows:
            dim = shared.models[model] = int(rows[0][0])
    return dim
