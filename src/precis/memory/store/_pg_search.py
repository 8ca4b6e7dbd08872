"""Search inside PostgreSQL: BM25 over the postings and cosine over pgvector, with the
tenant and the filters in the same SQL, so any number of processes share one index and none
loads the store into memory.

Keyword scores are those of the SQLite store (:class:`precis.memory.keywords.KeywordIndex`,
itself FTS5's ``bm25()`` with column weights 1.0 / 0.5): k1 = 1.2, b = 0.75, idf over every
card of the tenant (filters do not change it), ties broken by the earlier card.

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
from precis.memory.store._rows import filter_sql
from precis.memory.store.base import Filters

if TYPE_CHECKING:
    import numpy as np

    from precis.memory.store._pg import Shared

__all__ = ["EXACT_BELOW", "keyword_search", "pg_filter", "vector_search"]

EXACT_BELOW = 5000  # allowed cards under which vector search is exact
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
    where, params = pg_filter(filters, tenant)  # first: a bad filter is an error even here
    terms = shared.terms().query(words)
    if not terms or limit <= 0:
        return []
    with shared.connection() as conn:
        stats = conn.execute("SELECT cards, total_length FROM keyword_stats WHERE tenant = %s",
                             (tenant,)).fetchone()
        if stats is None or stats[0] <= 0:
            return []
        cards, total = int(stats[0]), float(stats[1])
        found = conn.execute("SELECT id, df FROM terms WHERE tenant = %s AND term = ANY(%s) "
                             "AND df > 0", (tenant, terms)).fetchall()
        if not found:
            return []
        average = total / cards or 1.0
        allowed = "" if filters.empty else \
            f"AND p.card_key IN (SELECT c.key FROM cards c WHERE {where})"
        rows = conn.execute(
            "SELECT c.id, x.s FROM (SELECT p.card_key, %s * sum(w.idf * p.freq / (p.freq + %s "
            "* (1 - %s + %s * p.length / %s))) AS s "
            "FROM unnest(%s::bigint[], %s::float8[]) AS w(term_id, idf) "
            f"JOIN postings p ON p.tenant = %s AND p.term_id = w.term_id {allowed} "
            "GROUP BY p.card_key ORDER BY s DESC, p.card_key LIMIT %s) x "
            "JOIN cards c ON c.key = x.card_key ORDER BY x.s DESC, x.card_key",
            (K1 + 1, K1, B, B, average, [r[0] for r in found],
             [idf(cards, int(r[1])) for r in found], tenant,
             *(params if allowed else []), limit),
        ).fetchall()
    return [(str(cid), float(score)) for cid, score in rows]


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
        "SELECT c.id, 1 - ({expr} <=> %s) AS s FROM cards c JOIN vectors v "
        "ON v.tenant = c.tenant AND v.model = {model} AND v.card_key = c.key "
        "WHERE {where} ORDER BY s DESC, c.key LIMIT %s"
    ).format(expr=expr, model=named, where=sql.SQL(where))
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
            with conn.transaction():
                ef = _EF_FILTERED if not filters.empty else max(40, 2 * limit)
                conn.execute("SELECT set_config('hnsw.ef_search', %s, true)",
                             (str(min(ef, _EF_FILTERED)),))
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
