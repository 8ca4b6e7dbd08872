"""The in-memory vector index of the memory store: exact for small N, IVF for large N.

:class:`VectorIndex` holds float32 unit vectors keyed by int64 ids (the store's card row
ids) and answers cosine top-k searches, optionally restricted to a sorted array of
``allowed`` ids (the store's user / session / type / time filters). The store keeps the raw
vectors in SQLite; the index keeps a copy in memory plus, once trained, its IVF state, which
:meth:`VectorIndex.export_state` / :meth:`VectorIndex.from_state` save and restore so a
large store does not retrain on every process start.

How it searches:

* Below ``ivf_threshold`` vectors (50,000 by default) every search is exact: a matrix
  product over all vectors (in pieces small enough for BLAS to keep on the calling thread).
* From there on the index is an IVF: spherical k-means centroids (about ``sqrt(N)``,
  trained on a seeded sample), each vector stored in the list of its nearest centroid. A
  query scans the lists of its nearest centroids; how many is calibrated at training time
  (recall against brute force of 128 sampled points, half of them moved to cosine ~0.7,
  each left out of its own neighbours; ``recall_target`` 0.97), per neighbour depth, so
  that a filtered search, which needs deeper neighbours, probes more.
  New vectors go to their nearest list; the index retrains once it has grown
  ``retrain_growth`` times (2x) since the last training, and goes back to exact search if
  it shrinks below half the threshold.
* ``allowed`` is enforced inside the search, never after it: up to ``exact_max`` (20,000)
  allowed ids, the search is exact over just those rows; above it, the probed lists are
  masked to the allowed ids, and more lists are probed until ``k`` allowed results are
  found. A search returns ``min(k, number of allowed ids in the index)`` results.

Storage: one float32 matrix in which each list owns a contiguous region with spare room;
a full region moves to the end (geometric growth, the matrix grows in place when it can)
and the holes are compacted away. Searches read list regions in place: no per-search copy
of the matrix. Deterministic for a given ``seed``. Searches may run concurrently with one
another, not with :meth:`add` / :meth:`remove` (the store serialises them).

Errors: a bad query, ``k``, ``allowed`` or ``nprobe`` raises :class:`QueryError`; vectors of
another dimension than the index's :class:`ConfigError` (the embedder does not match);
NaN, infinite or all-zero vectors, or a count that does not match the ids,
:class:`EmbeddingError`; ids that are not integers :class:`InputError`; a bad option
:class:`ConfigError`. A failed :meth:`VectorIndex.add` changes nothing.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from precis.errors import ConfigError, EmbeddingError, InputError, QueryError
from precis.memory import _ivf
from precis.memory._ivf import F32, I32, I64

__all__ = ["VectorIndex"]

_CHUNK = 16384  # rows validated / normalised / assigned at a time
_GATHER = 1024  # rows gathered at a time by the exact search over allowed ids
_QUERY_CHUNK = 16  # queries scored together against a block of rows
_CANDIDATES = 1 << 22  # candidate slots (queries x lists x per-list top) of one scan
_SAMPLE_PER_LIST = 50  # k-means training points per centroid
_CALIBRATION_QUERIES = 128

# A part of the data being laid out: ids, vectors, and their norms when not yet unit length.
_Part = tuple[I64, npt.NDArray[Any], "npt.NDArray[np.float64] | None"]


class VectorIndex:
    """Cosine top-k search over unit float32 vectors keyed by int64 ids.

    Options: ``ivf_threshold`` (train the IVF from this many vectors), ``exact_max``
    (largest ``allowed`` set searched exactly), ``nlist`` (IVF lists; default
    ``sqrt(N)``), ``nprobe`` (lists probed for ``k = 10`` unfiltered; default calibrated),
    ``recall_target`` (calibration target), ``retrain_growth`` (retrain after growing this
    many times), ``seed``.
    """

    def __init__(
        self,
        dim: int,
        *,
        ivf_threshold: int = 50_000,
        exact_max: int = 20_000,
        nlist: int | None = None,
        nprobe: int | None = None,
        recall_target: float = 0.97,
        retrain_growth: float = 2.0,
        seed: int = 0,
    ) -> None:
        self._dim = _int_option("dim", dim, 1)
        self._threshold = _int_option("ivf_threshold", ivf_threshold, 2)
        self._exact_max = _int_option("exact_max", exact_max, 0)
        self._nlist_opt = None if nlist is None else _int_option("nlist", nlist, 1)
        self._nprobe_opt = None if nprobe is None else _int_option("nprobe", nprobe, 1)
        self._target = _float_option("recall_target", recall_target, 0.0, 1.0)
        self._growth = _float_option("retrain_growth", retrain_growth, 1.1, math.inf)
        self._seed = _int_option("seed", seed, 0)
        # rows: the matrix and each row's id; list l owns rows [start, start + cap)
        self._V: F32 = np.empty((0, self._dim), dtype=np.float32)
        self._rid: I64 = np.empty(0, dtype=np.int64)
        self._lstart: I64 = np.zeros(1, dtype=np.int64)
        self._lcount: I64 = np.zeros(1, dtype=np.int64)
        self._lcap: I64 = np.zeros(1, dtype=np.int64)
        self._end = 0  # rows in use by regions (beyond: free)
        self._holes = 0  # rows of abandoned regions below _end
        # ids: sorted, with each id's row and list
        self._n = 0
        self._sid: I64 = np.empty(0, dtype=np.int64)
        self._srow: I64 = np.empty(0, dtype=np.int64)
        self._slist: I32 = np.empty(0, dtype=np.int32)
        # IVF state (None: exact search over one list)
        self._centroids: F32 | None = None
        self._depths: I64 = np.ones(1, dtype=np.int64)
        self._probes: I64 = np.ones(1, dtype=np.int64)
        self._trained_n = 0

    # -- introspection ----------------------------------------------------------------

    def __len__(self) -> int:
        return self._n

    def __contains__(self, card_id: object) -> bool:
        if isinstance(card_id, bool) or not isinstance(card_id, (int, np.integer)):
            return False
        pos = int(np.searchsorted(self._sid[: self._n], card_id))
        return pos < self._n and int(self._sid[pos]) == int(card_id)

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def trained(self) -> bool:
        """Whether searches use the IVF (else they are exact)."""
        return self._centroids is not None

    @property
    def nlist(self) -> int:
        """Number of IVF lists (0 while the index is exact)."""
        return 0 if self._centroids is None else int(self._centroids.shape[0])

    @property
    def nprobe(self) -> int | None:
        """Lists probed by an unfiltered ``k = 10`` search (``None`` while exact)."""
        if self._centroids is None:
            return None
        return self._probe_count(10, 1.0, None)

    @property
    def memory_bytes(self) -> int:
        """Bytes held by the index's arrays (the vector matrix dominates)."""
        arrays = (self._V, self._rid, self._sid, self._srow, self._slist, self._lstart,
                  self._lcount, self._lcap)
        total = sum(a.nbytes for a in arrays)
        return total + (0 if self._centroids is None else self._centroids.nbytes)

    def ids(self) -> I64:
        """The ids in the index, sorted (a copy)."""
        out: I64 = self._sid[: self._n].copy()
        return out

    # -- updates ----------------------------------------------------------------------

    def add(self, ids: npt.ArrayLike, vectors: npt.ArrayLike) -> None:
        """Add ``vectors`` (one row per id; normalised here) under ``ids``.

        An id already in the index has its vector replaced; within one call the last row
        of a repeated id wins.
        """
        ids_a = _check_ids(ids)
        x, norms = self._check_vectors(vectors, ids_a)
        if ids_a.size == 0:
            return
        ids_a, x, norms = _last_wins(ids_a, x, norms)
        self._remove_ids(ids_a)
        self._insert(ids_a, x, norms)
        self._maintain()

    def remove(self, ids: npt.ArrayLike) -> int:
        """Remove ``ids`` (ids not in the index are ignored); returns how many were removed."""
        removed = self._remove_ids(np.unique(_check_ids(ids)))
        if removed:
            self._maintain()
        return removed

    def train(self) -> None:
        """(Re)train the IVF now on the current vectors (normally automatic)."""
        if self._n:
            self._train(self._layout_parts())

    # -- search -----------------------------------------------------------------------

    def search(
        self,
        query: npt.ArrayLike,
        k: int,
        *,
        allowed: npt.ArrayLike | None = None,
        nprobe: int | None = None,
    ) -> tuple[I64, F32]:
        """The ``k`` ids most similar to ``query`` (cosine) and their scores, best first.

        ``allowed`` (a sorted int64 array; unsorted input is sorted) restricts the
        results to those ids. ``nprobe`` overrides the lists probed for an unfiltered
        ``k = 10`` search (filtered or deeper searches scale it up); ``nprobe >= nlist``
        makes the search exact.
        """
        q = self._check_queries(query, single=True)
        ids, scores = self._search(q, _check_k(k), _check_allowed(allowed), _check_nprobe(nprobe))
        return ids[0], scores[0]

    def search_many(
        self,
        queries: npt.ArrayLike,
        k: int,
        *,
        allowed: npt.ArrayLike | None = None,
        nprobe: int | None = None,
    ) -> tuple[I64, F32]:
        """:meth:`search` for each row of ``queries`` (m, dim): ids and scores (m, k').

        ``k' = min(k, number of allowed ids in the index)``, the same for every query.
        """
        q = self._check_queries(queries, single=False)
        return self._search(q, _check_k(k), _check_allowed(allowed), _check_nprobe(nprobe))

    # -- persistence ------------------------------------------------------------------

    def export_state(self) -> bytes:
        """The trained state (centroids, probe curve, each id's list) as bytes.

        The vectors themselves are not included: the store keeps them. An exact (untrained)
        index exports a state that restores to an exact index.
        """
        n = self._n
        if self._centroids is None:
            state = _ivf.IndexState(
                centroids=np.empty((0, self._dim), dtype=np.float32),
                depths=self._depths, probes=self._probes, ids=np.empty(0, dtype=np.int64),
                labels=np.empty(0, dtype=np.int32), fingerprints=np.empty(0, dtype=np.float32),
                trained_n=0,
            )
            return _ivf.encode_state(state)
        fp_rows = np.zeros(self._V.shape[0], dtype=np.float32)
        for label in np.flatnonzero(self._lcount):
            s, c = int(self._lstart[label]), int(self._lcount[label])
            centroid = self._centroids[label : label + 1]
            fp_rows[s : s + c] = _ivf.dot(self._V[s : s + c], centroid)[:, 0]
        state = _ivf.IndexState(
            centroids=self._centroids, depths=self._depths, probes=self._probes,
            ids=self._sid[:n], labels=self._slist[:n], fingerprints=fp_rows[self._srow[:n]],
            trained_n=self._trained_n,
        )
        return _ivf.encode_state(state)

    @classmethod
    def from_state(
        cls, data: bytes, ids: npt.ArrayLike, vectors: npt.ArrayLike, **options: Any
    ) -> VectorIndex:
        """An index over ``ids`` / ``vectors`` reusing the state of :meth:`export_state`.

        Ids the state does not know (added since) go to their nearest list; vectors whose
        similarity to their saved centroid moved (re-embedded) are reassigned. A state that
        is corrupt, built for another dimension, knows fewer than half of the ids, or whose
        vectors changed in more than 5% of cases is ignored: the index is built (and
        trained, if large enough) from scratch. ``options`` are those of the constructor.
        """
        try:
            shape = np.shape(vectors)
        except (TypeError, ValueError):
            shape = ()
        if len(shape) != 2:
            raise EmbeddingError(f"vectors must be a 2-D array (one row per id), got shape {shape}")
        index = cls(int(shape[1]), **options)
        index._restore(data, ids, vectors)
        return index

    def _restore(self, data: bytes, ids: npt.ArrayLike, vectors: npt.ArrayLike) -> None:
        ids_a = _check_ids(ids)
        x, norms = self._check_vectors(vectors, ids_a)
        if ids_a.size == 0:
            return
        ids_a, x, norms = _last_wins(ids_a, x, norms)
        state = None
        if isinstance(data, (bytes, bytearray, memoryview)):
            state = _ivf.decode_state(bytes(data), self._dim)
        labels = None if state is None else _ivf.labels_from_state(state, x, norms, ids_a)
        if state is None or labels is None:
            self._insert(ids_a, x, norms)
        else:
            self._relayout(state.centroids, [(ids_a, x, norms)], [labels])
            self._depths, self._probes = state.depths, state.probes
            self._trained_n = state.trained_n
        self._maintain()

    # -- validation -------------------------------------------------------------------

    def _check_vectors(
        self, vectors: npt.ArrayLike, ids: I64
    ) -> tuple[npt.NDArray[Any], npt.NDArray[np.float64]]:
        """``vectors`` as an array with each row's norm; every row finite and non-zero."""
        try:
            x = np.asarray(vectors)
        except (TypeError, ValueError) as err:
            raise EmbeddingError(f"vectors must be a 2-D array of numbers ({err})") from None
        if ids.size == 0 and x.size == 0:
            return np.empty((0, self._dim), dtype=np.float32), np.empty(0, dtype=np.float64)
        if x.dtype.kind not in "fiu":
            raise EmbeddingError(f"vectors must be numbers, got dtype {x.dtype}")
        if x.ndim != 2:
            raise EmbeddingError(
                f"vectors must be a 2-D array (one row per id), got shape {x.shape}"
            )
        if x.shape[1] != self._dim:
            raise ConfigError(
                f"the vectors have {x.shape[1]} dimensions but this index holds "
                f"{self._dim}-dimensional vectors (was the embedding model changed?)"
            )
        if x.shape[0] != ids.size:
            raise EmbeddingError(f"{ids.size} ids but {x.shape[0]} vectors")
        norms = np.empty(x.shape[0], dtype=np.float64)
        for i in range(0, x.shape[0], _CHUNK):
            chunk = x[i : i + _CHUNK]
            norms[i : i + _CHUNK] = np.sqrt(np.einsum("ij,ij->i", chunk, chunk, dtype=np.float64))
        bad = np.flatnonzero(~np.isfinite(norms) | (norms == 0))
        if bad.size:
            i = int(bad[0])
            what = "is all zeros" if norms[i] == 0 else "contains NaN or infinite values"
            raise EmbeddingError(
                f"the vector of id {int(ids[i])} {what} ({bad.size} bad vector(s) in the batch)"
            )
        return x, norms

    def _check_queries(self, queries: npt.ArrayLike, *, single: bool) -> F32:
        """``queries`` as unit float32 rows (m, dim)."""
        try:
            q = np.asarray(queries)
        except (TypeError, ValueError) as err:
            raise QueryError(f"the query vector must be an array of numbers ({err})") from None
        if q.dtype.kind not in "fiu":
            raise QueryError(f"the query vector must hold numbers, got dtype {q.dtype}")
        want = 1 if single else 2
        if q.ndim != want or q.shape[-1] != self._dim:
            shape = f"({self._dim},)" if single else f"(m, {self._dim})"
            raise QueryError(
                f"the query {'vector' if single else 'matrix'} has shape {q.shape}; this index "
                f"holds {self._dim}-dimensional vectors, so it must be {shape}"
            )
        q2 = np.asarray(q, dtype=np.float64).reshape(-1, self._dim)
        norms = np.sqrt(np.einsum("ij,ij->i", q2, q2))
        for i in np.flatnonzero(~np.isfinite(norms) | (norms == 0))[:1]:
            where = "query" if single else f"query {int(i)}"
            if norms[i] == 0:
                raise QueryError("the query vector is all zeros: it has no direction", where=where)
            raise QueryError("the query vector contains NaN or infinite values", where=where)
        return np.asarray(q2 / norms[:, None], dtype=np.float32)

    # -- layout -----------------------------------------------------------------------

    def _lookup(self, ids: I64) -> tuple[I64, npt.NDArray[np.bool_]]:
        """Positions of ``ids`` in the sorted id array, and which of them are present."""
        n = self._n
        if n == 0:
            return np.zeros(ids.size, dtype=np.int64), np.zeros(ids.size, dtype=bool)
        pos = np.minimum(np.searchsorted(self._sid[:n], ids), n - 1)
        return pos, self._sid[pos] == ids

    def _set_rows(self, ids: I64, rows: I64) -> None:
        pos = np.searchsorted(self._sid[: self._n], ids)
        self._srow[pos] = rows

    def _layout_parts(self) -> list[_Part]:
        parts: list[_Part] = []
        for label in np.flatnonzero(self._lcount):
            s, c = int(self._lstart[label]), int(self._lcount[label])
            parts.append((self._rid[s : s + c], self._V[s : s + c], None))
        return parts

    def _insert(self, ids: I64, x: npt.NDArray[Any], norms: npt.NDArray[np.float64]) -> None:
        """Add new ids (none in the index), training or retraining if that is due."""
        total = self._n + ids.size
        new: _Part = (ids, x, norms)
        if self._centroids is None:
            if total >= self._threshold:
                self._train([*self._layout_parts(), new])
                return
        elif total >= self._growth * self._trained_n:
            self._train([*self._layout_parts(), new])
            return
        for i in range(0, ids.size, _CHUNK):
            xn = _ivf.normalise(x[i : i + _CHUNK], norms[i : i + _CHUNK])
            if self._centroids is None:
                labels = np.zeros(xn.shape[0], dtype=np.int32)
            else:
                labels, _ = _ivf.assign(xn, self._centroids)
            self._append_grouped(ids[i : i + _CHUNK], xn, labels)

    def _append_grouped(self, ids: I64, xn: F32, labels: I32) -> None:
        order = np.argsort(labels, kind="stable")
        ids, xn, labels = ids[order], xn[order], labels[order]
        rows = np.empty(ids.size, dtype=np.int64)
        cuts = [0, *(np.flatnonzero(np.diff(labels)) + 1).tolist(), ids.size]
        for a, b in itertools.pairwise(cuts):
            label = int(labels[a])
            count = int(self._lcount[label])
            self._reserve(label, count + b - a)
            s = int(self._lstart[label]) + count
            self._V[s : s + b - a] = xn[a:b]
            self._rid[s : s + b - a] = ids[a:b]
            self._lcount[label] = count + b - a
            rows[a:b] = np.arange(s, s + b - a)
        self._index_insert(ids, rows, labels)

    def _reserve(self, label: int, need: int) -> None:
        """Make list ``label``'s region hold ``need`` rows (grow in place or move it)."""
        cap = int(self._lcap[label])
        if need <= cap:
            return
        s, c = int(self._lstart[label]), int(self._lcount[label])
        if self._centroids is None:
            newcap = max(need, cap + cap // 2, 1024)
        else:
            newcap = max(need + 4, need + need // 4)
        if s + cap == self._end:  # the last region: extend it
            self._ensure_rows(s + newcap)
            self._end = s + newcap
        else:  # move it to the end; its old rows become a hole
            ns = self._end
            self._ensure_rows(ns + newcap)
            self._V[ns : ns + c] = self._V[s : s + c]
            self._rid[ns : ns + c] = self._rid[s : s + c]
            self._holes += cap
            self._lstart[label] = ns
            self._end = ns + newcap
            self._set_rows(self._rid[ns : ns + c], np.arange(ns, ns + c, dtype=np.int64))
        self._lcap[label] = newcap

    def _ensure_rows(self, rows: int) -> None:
        have = self._V.shape[0]
        if rows <= have:
            return
        new = max(rows, have + have // 2)
        self._V = _grown(self._V, (new, self._dim))
        self._rid = _grown(self._rid, (new,))

    def _index_insert(self, ids: I64, rows: I64, labels: I32) -> None:
        order = np.argsort(ids, kind="stable")
        ids, rows, labels = ids[order], rows[order], labels[order]
        n, b = self._n, ids.size
        if n == 0 or ids[0] > self._sid[n - 1]:  # the usual case: new row ids are larger
            if n + b > self._sid.size:
                cap = max(n + b, self._sid.size + self._sid.size // 2)
                self._sid = _grown(self._sid, (cap,))
                self._srow = _grown(self._srow, (cap,))
                self._slist = _grown(self._slist, (cap,))
            self._sid[n : n + b] = ids
            self._srow[n : n + b] = rows
            self._slist[n : n + b] = labels
        else:
            pos = np.searchsorted(self._sid[:n], ids)
            self._sid = np.insert(self._sid[:n], pos, ids)
            self._srow = np.insert(self._srow[:n], pos, rows)
            self._slist = np.insert(self._slist[:n], pos, labels)
        self._n = n + b

    def _remove_ids(self, ids: I64) -> int:
        """Remove the present ones of ``ids`` (sorted, unique) from rows and id arrays."""
        pos, hit = self._lookup(ids)
        pos = pos[hit]
        if pos.size == 0:
            return 0
        rows, labels = self._srow[pos].copy(), self._slist[pos].copy()
        n, keep = self._n, np.ones(self._n, dtype=bool)
        keep[pos] = False
        m = n - pos.size
        self._sid[:m] = self._sid[:n][keep]
        self._srow[:m] = self._srow[:n][keep]
        self._slist[:m] = self._slist[:n][keep]
        self._n = m
        order = np.lexsort((rows, labels))
        rows, labels = rows[order], labels[order]
        cuts = [0, *(np.flatnonzero(np.diff(labels)) + 1).tolist(), rows.size]
        for a, b in itertools.pairwise(cuts):
            label = int(labels[a])
            s, count = int(self._lstart[label]), int(self._lcount[label])
            slots = rows[a:b] - s
            kept = count - slots.size
            holes = slots[slots < kept]
            if holes.size:  # fill holes with the surviving rows of the region's tail
                tail = np.arange(kept, count, dtype=np.int64)
                movers = tail[~np.isin(tail, slots)]
                self._V[s + holes] = self._V[s + movers]
                self._rid[s + holes] = self._rid[s + movers]
                self._set_rows(self._rid[s + holes], s + holes)
            self._lcount[label] = kept
        return int(pos.size)

    def _maintain(self) -> None:
        """Train, retrain, fall back to exact search or compact, as the size asks."""
        if self._centroids is None:
            if self._n >= self._threshold:
                self._train(self._layout_parts())
        elif self._n < max(1, self._threshold // 2):
            self._relayout(None, self._layout_parts())
        elif self._n >= self._growth * self._trained_n:
            self._train(self._layout_parts())
        elif self._holes > self._end // 4:
            self._compact()

    def _compact(self) -> None:
        """Slide the regions down over the holes (in place, region by region)."""
        at = 0
        for label in np.argsort(self._lstart, kind="stable"):
            s, c, cap = (int(self._lstart[label]), int(self._lcount[label]),
                         int(self._lcap[label]))
            if s != at and c:
                self._V[at : at + c] = self._V[s : s + c]
                self._rid[at : at + c] = self._rid[s : s + c]
            self._lstart[label] = at
            at += cap
        self._end, self._holes = at, 0
        rows = self._all_rows()
        self._set_rows(self._rid[rows], rows)

    def _all_rows(self) -> I64:
        spans = [np.arange(self._lstart[i], self._lstart[i] + self._lcount[i], dtype=np.int64)
                 for i in np.flatnonzero(self._lcount)]
        return np.concatenate(spans) if spans else np.empty(0, dtype=np.int64)

    def _train(self, parts: Sequence[_Part]) -> None:
        """Train centroids on a sample of ``parts``, lay them out as lists, calibrate."""
        total = sum(p[0].size for p in parts)
        nlist = self._nlist_opt or round(math.sqrt(total))
        nlist = max(1, min(nlist, total))
        rng = np.random.default_rng([self._seed, total])
        size = min(total, nlist * _SAMPLE_PER_LIST)
        sample = _gather(parts, np.sort(rng.choice(total, size, replace=False)), self._dim)
        centroids = _ivf.kmeans(sample, nlist, seed=self._seed)
        del sample
        self._relayout(centroids, parts)
        self._calibrate()
        self._trained_n = self._n

    def _relayout(
        self,
        centroids: F32 | None,
        parts: Sequence[_Part],
        labels: Sequence[I32] | None = None,
    ) -> None:
        """Rebuild the rows as one region per list of ``centroids`` (one region if None)."""
        total = sum(p[0].size for p in parts)
        nlist = 1 if centroids is None else centroids.shape[0]
        if labels is None:
            labels = [self._labels(p, centroids) for p in parts]
        counts = np.bincount(np.concatenate([*labels, np.empty(0, np.int32)]), minlength=nlist)
        if centroids is None:
            caps = np.array([max(1024, total + total // 4)], dtype=np.int64)
        else:
            caps = (counts + counts // 8 + 4).astype(np.int64)
        starts = np.cumsum(caps) - caps
        end = int(caps.sum())
        matrix = np.empty((end, self._dim), dtype=np.float32)
        rid = np.empty(end, dtype=np.int64)
        fill = np.zeros(nlist, dtype=np.int64)
        all_rows = np.empty(total, dtype=np.int64)
        all_labels = np.empty(total, dtype=np.int32)
        at = 0
        for (ids, x, norms), lab in zip(parts, labels):
            for i in range(0, ids.size, _CHUNK):
                xc = x[i : i + _CHUNK]
                if norms is not None:
                    xc = _ivf.normalise(xc, norms[i : i + _CHUNK])
                lc = lab[i : i + _CHUNK]
                # each row's place: its list's start + rows already there + rank within chunk
                order = np.argsort(lc, kind="stable")
                ls = lc[order]
                cnt = np.bincount(ls, minlength=nlist)
                dest = np.empty(ls.size, dtype=np.int64)
                rank = np.arange(ls.size) - (np.cumsum(cnt) - cnt)[ls]
                dest[order] = starts[ls] + fill[ls] + rank
                matrix[dest] = xc
                rid[dest] = ids[i : i + _CHUNK]
                fill += cnt
                all_rows[at : at + ls.size] = dest
                all_labels[at : at + ls.size] = lc
                at += ls.size
        all_ids = rid[all_rows]
        order = np.argsort(all_ids, kind="stable")
        self._V, self._rid = matrix, rid
        self._lstart, self._lcount, self._lcap = starts, counts.astype(np.int64), caps
        self._end, self._holes = end, 0
        self._sid, self._srow, self._slist = all_ids[order], all_rows[order], all_labels[order]
        self._n = total
        self._centroids = centroids
        if centroids is None:
            self._depths = np.ones(1, dtype=np.int64)
            self._probes = np.ones(1, dtype=np.int64)
            self._trained_n = 0

    def _labels(self, part: _Part, centroids: F32 | None) -> I32:
        """Nearest centroid of each vector (the norm does not change the argmax)."""
        ids, x, _ = part
        if centroids is None:
            return np.zeros(ids.size, dtype=np.int32)
        out = np.empty(ids.size, dtype=np.int32)
        for i in range(0, ids.size, _CHUNK):
            xc = np.asarray(x[i : i + _CHUNK], dtype=np.float32)
            out[i : i + _CHUNK], _ = _ivf.assign(xc, centroids)
        return out

    def _calibrate(self) -> None:
        """Measure the probe curve on data points of the index (leave-one-out).

        Every other point is moved to cosine ~0.7 of where it was (a query is rarely a copy
        of a card), which asks for a few more probes on data less clustered than the
        cards' own neighbourhoods."""
        assert self._centroids is not None
        n = self._n
        nlist = self._centroids.shape[0]
        if n < 2 or nlist == 1:
            self._depths = np.ones(1, dtype=np.int64)
            self._probes = np.full(1, nlist, dtype=np.int64)
            return
        rng = np.random.default_rng([self._seed, n, 1])
        qpos = np.sort(rng.choice(n, min(_CALIBRATION_QUERIES, n), replace=False))
        parts = self._layout_parts()
        queries = _gather(parts, qpos, self._dim)
        moved = queries[1::2] + rng.standard_normal(queries[1::2].shape, dtype=np.float32) / (
            math.sqrt(self._dim))
        queries[1::2] = moved / np.linalg.norm(moved, axis=1, keepdims=True)
        blocks = [(p[1], int(label)) for p, label in zip(parts, np.flatnonzero(self._lcount))]
        self._depths, self._probes = _ivf.calibrate(
            blocks, queries, qpos, self._centroids, self._target
        )

    # -- search internals -------------------------------------------------------------

    def _probe_count(self, k: int, fraction: float, override: int | None) -> int:
        nlist = self.nlist
        depth = max(1, k) / max(fraction, 1e-12)
        calibrated = _ivf.probes_for_depth(self._depths, self._probes, depth, nlist)
        base = override if override is not None else self._nprobe_opt
        if base is None:
            return calibrated
        reference = _ivf.probes_for_depth(self._depths, self._probes, 10, nlist)
        return max(1, min(nlist, max(base, math.ceil(base * calibrated / reference))))

    def _search(
        self, q: F32, k: int, allowed: I64 | None, nprobe: int | None
    ) -> tuple[I64, F32]:
        m, n = q.shape[0], self._n
        if n == 0 or k == 0 or (allowed is not None and allowed.size == 0):
            return np.empty((m, 0), dtype=np.int64), np.empty((m, 0), dtype=np.float32)
        fraction = 1.0
        if allowed is not None:
            if allowed.size <= self._exact_max:
                pos, hit = self._lookup(allowed)
                rows = np.sort(self._srow[pos[hit]])
                if rows.size == 0:
                    return np.empty((m, 0), dtype=np.int64), np.empty((m, 0), dtype=np.float32)
                return self._exact(q, rows, min(k, rows.size))
            fraction = min(1.0, allowed.size / n)
        among = None if allowed is None else _ivf.Allowed(allowed)
        k = min(k, n)
        if self._centroids is None:
            return _ivf.trim(*self._scan(q, np.zeros((m, 1), dtype=np.int64), k, among))
        nlist = self._centroids.shape[0]
        cscores = _ivf.dot(q, self._centroids)
        p = self._probe_count(k, fraction, nprobe)
        out_i = np.full((m, k), -1, dtype=np.int64)
        out_s = np.full((m, k), -np.inf, dtype=np.float32)
        counts = np.zeros(m, dtype=np.int64)
        todo = np.arange(m)
        while True:  # probe more lists for the queries that found fewer than k
            if p >= nlist:
                probe = np.tile(np.arange(nlist, dtype=np.int64), (todo.size, 1))
            else:
                probe = np.argpartition(-cscores[todo], p - 1, axis=1)[:, :p]
            ids, scores, found = self._scan(q[todo], probe, k, among)
            out_i[todo], out_s[todo], counts[todo] = ids, scores, found
            short = found < k
            if not short.any() or p >= nlist:
                break
            todo, p = todo[short], min(nlist, 2 * p)
        return _ivf.trim(out_i, out_s, counts)

    def _scan(
        self, q: F32, probe: npt.NDArray[np.intp] | I64, k: int, allowed: _ivf.Allowed | None
    ) -> tuple[I64, F32, I64]:
        """Top ``k`` of each query over the lists it probes (``probe``: m x p list numbers).

        Each probed list contributes its own top ``w`` (``w = min(k, largest list)``) to a
        candidate slot; queries are taken in chunks that keep the slots under
        ``_CANDIDATES`` entries."""
        m, p = probe.shape
        w = max(1, min(k, int(self._lcount.max())))
        step = max(1, _CANDIDATES // (p * w))
        if m > step:
            chunks = [self._scan(q[i : i + step], probe[i : i + step], k, allowed)
                      for i in range(0, m, step)]
            return _ivf.stack(chunks)
        cand_s = np.full((m, p, w), -np.inf, dtype=np.float32)
        cand_i = np.full((m, p, w), -1, dtype=np.int64)
        flat = probe.ravel()
        order = np.argsort(flat, kind="stable")
        lists = flat[order]
        cuts = [0, *(np.flatnonzero(np.diff(lists)) + 1).tolist(), flat.size]
        for a, b in itertools.pairwise(cuts):
            label = int(lists[a])
            c = int(self._lcount[label])
            if c == 0:
                continue
            s = int(self._lstart[label])
            sel = order[a:b]
            self._score_block(self._V[s : s + c], self._rid[s : s + c], q, sel // p, sel % p,
                              w, allowed, cand_s, cand_i)
        return _ivf.merge(cand_s.reshape(m, p * w), cand_i.reshape(m, p * w), k)

    def _exact(self, q: F32, rows: I64, k: int) -> tuple[I64, F32]:
        """Exact top ``k`` over the given rows (sorted), gathered a block at a time."""
        m = q.shape[0]
        blocks = -(-rows.size // _GATHER)
        w = min(k, _GATHER)
        step = max(1, _CANDIDATES // (blocks * w))
        if m > step:
            chunks = [self._exact(q[i : i + step], rows, k) for i in range(0, m, step)]
            return (np.concatenate([c[0] for c in chunks]),
                    np.concatenate([c[1] for c in chunks]))
        cand_s = np.full((m, blocks, w), -np.inf, dtype=np.float32)
        cand_i = np.full((m, blocks, w), -1, dtype=np.int64)
        buf = np.empty((min(_GATHER, rows.size), self._dim), dtype=np.float32)
        queries = np.arange(m)
        for j in range(blocks):
            r = rows[j * _GATHER : (j + 1) * _GATHER]
            block = buf[: r.size]
            np.take(self._V, r, axis=0, out=block)
            self._score_block(block, self._rid[r], q, queries, np.full(m, j), w, None,
                              cand_s, cand_i)
        return _ivf.trim(*_ivf.merge(cand_s.reshape(m, -1), cand_i.reshape(m, -1), k))

    @staticmethod
    def _score_block(
        vecs: F32,
        ids: I64,
        q: F32,
        queries: npt.NDArray[np.intp],
        slots: npt.NDArray[np.intp],
        k: int,
        allowed: _ivf.Allowed | None,
        cand_s: F32,
        cand_i: I64,
    ) -> None:
        """Write the top ``k`` of ``vecs`` for each of ``queries`` into its candidate slot."""
        mask = None
        if allowed is not None:
            mask = allowed.member(ids)
            kept = int(np.count_nonzero(mask))
            if kept == 0:
                return
            if kept * 4 < mask.size:  # few allowed: score only those rows
                vecs, ids, mask = vecs[mask], ids[mask], None
        c = vecs.shape[0]
        step = _QUERY_CHUNK
        for i in range(0, queries.size, step):
            qi = queries[i : i + step]
            scores = _ivf.dot(vecs, q[qi])  # (c, queries)
            if mask is not None:
                scores[~mask] = -np.inf
            if c > k:
                part = np.argpartition(scores, c - k, axis=0)[c - k :]
                cand_s[qi, slots[i : i + step]] = np.take_along_axis(scores, part, axis=0).T
                cand_i[qi, slots[i : i + step]] = ids[part].T
            else:
                cand_s[qi, slots[i : i + step], :c] = scores.T
                cand_i[qi, slots[i : i + step], :c] = ids


# -- helpers ----------------------------------------------------------------------------


def _gather(parts: Sequence[_Part], positions: I64, dim: int) -> F32:
    """Unit vectors at the given global ``positions`` (sorted) of the concatenated parts."""
    out = np.empty((positions.size, dim), dtype=np.float32)
    offset = 0
    for _, x, norms in parts:
        a, b = np.searchsorted(positions, [offset, offset + x.shape[0]])
        local = positions[a:b] - offset
        out[a:b] = x[local] if norms is None else _ivf.normalise(x[local], norms[local])
        offset += x.shape[0]
    return out


def _grown(array: npt.NDArray[Any], shape: tuple[int, ...]) -> npt.NDArray[Any]:
    """``array`` enlarged to ``shape`` along axis 0: in place when numpy can, else copied."""
    try:
        array.resize(shape, refcheck=True)
        return array
    except ValueError:  # referenced elsewhere or not owning its data
        new = np.empty(shape, dtype=array.dtype)
        new[: array.shape[0]] = array
        return new


def _last_wins(
    ids: I64, x: npt.NDArray[Any], norms: npt.NDArray[np.float64]
) -> tuple[I64, npt.NDArray[Any], npt.NDArray[np.float64]]:
    """Drop all but the last row of each repeated id."""
    if ids.size < 2 or bool(np.all(ids[1:] > ids[:-1])):  # sorted: the store's usual order
        return ids, x, norms
    ordered = np.sort(ids)
    if not bool(np.any(ordered[1:] == ordered[:-1])):
        return ids, x, norms
    _, first_of_reversed = np.unique(ids[::-1], return_index=True)
    keep = np.sort(ids.size - 1 - first_of_reversed)
    return ids[keep], x[keep], norms[keep]


def _check_ids(ids: npt.ArrayLike) -> I64:
    try:
        a = np.asarray(ids)
    except (TypeError, ValueError) as err:
        raise InputError(f"card ids must be a 1-D array of integers ({err})") from None
    if a.ndim != 1:
        raise InputError(f"card ids must be a 1-D array of integers, got shape {a.shape}")
    if a.size == 0:
        return np.empty(0, dtype=np.int64)
    if a.dtype.kind not in "iu":
        raise InputError(f"card ids must be integers, got dtype {a.dtype}")
    return a.astype(np.int64, copy=False)


def _check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise QueryError(f"k must be a non-negative integer, got {k!r}")
    return int(k)


def _check_nprobe(nprobe: int | None) -> int | None:
    if nprobe is None:
        return None
    if isinstance(nprobe, bool) or not isinstance(nprobe, (int, np.integer)) or nprobe < 1:
        raise QueryError(f"nprobe must be a positive integer, got {nprobe!r}")
    return int(nprobe)


def _check_allowed(allowed: npt.ArrayLike | None) -> I64 | None:
    """``allowed`` as a sorted, unique int64 array."""
    if allowed is None:
        return None
    try:
        a = np.asarray(allowed)
    except (TypeError, ValueError) as err:
        raise QueryError(f"allowed must be a 1-D array of card ids ({err})") from None
    if a.ndim != 1:
        raise QueryError(f"allowed must be a 1-D array of card ids, got shape {a.shape}")
    if a.size == 0:
        return np.empty(0, dtype=np.int64)
    if a.dtype.kind not in "iu":
        raise QueryError(f"allowed must hold integer card ids, got dtype {a.dtype}")
    a = a.astype(np.int64, copy=False)
    if a.size > 1 and not bool(np.all(a[1:] > a[:-1])):
        a = np.unique(a)
    return a


def _int_option(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ConfigError(f"{name} must be an integer >= {minimum}, got {value!r}",
                          where="VectorIndex")
    return int(value)


def _float_option(name: str, value: object, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
        low <= value <= high
    ):
        raise ConfigError(f"{name} must be a number in [{low}, {high}], got {value!r}",
                          where="VectorIndex")
    return float(value)
