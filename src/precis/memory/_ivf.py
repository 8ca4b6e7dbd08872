"""The numeric parts of the vector index: k-means, calibration, state, top-k merging.

Pure functions over numpy arrays; :mod:`precis.memory.vectors` owns the storage layout.
Every vector here is float32 and L2-normalised, so a dot product is a cosine.

* :func:`kmeans` trains ``nlist`` centroids on a sample (spherical k-means: centroids are
  re-normalised each round; seeded initialisation from the sample; empty clusters are
  re-seeded with the worst-served sample points).
* :func:`assign` gives each vector its nearest centroid, a block of rows at a time.
* :func:`calibrate` measures, for neighbour depths 1 to 1,000, how many of a query's
  nearest lists must be probed so that the lists hold ``target`` of its true neighbours
  (on points sampled from the index, each left out of its own neighbours); the search
  probes accordingly.
* :func:`encode_state` / :func:`decode_state`: the trained state as bytes (versioned header,
  CRC-32); :func:`decode_state` returns ``None`` for anything it cannot trust, and
  :func:`labels_from_state` matches a state to the vectors being loaded.
* :func:`dot`, :func:`merge`, :func:`trim`, :func:`member`: the search's scoring and
  top-k bookkeeping.
"""

from __future__ import annotations

import math
import struct
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "DEPTHS",
    "F32",
    "I32",
    "I64",
    "Allowed",
    "IndexState",
    "assign",
    "calibrate",
    "decode_state",
    "dot",
    "encode_state",
    "kmeans",
    "labels_from_state",
    "merge",
    "normalise",
    "probes_for_depth",
    "stack",
    "trim",
]

F32 = npt.NDArray[np.float32]
I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]

#: Neighbour depths the probe curve is calibrated at (a filtered search of ``k`` results
#: among a fraction ``f`` of the vectors needs the unfiltered neighbours down to ``k / f``).
DEPTHS = (1, 10, 20, 50, 100, 200, 500, 1000)

# Largest matrix product (rows x queries x dim) done in one call at search time. OpenBLAS
# runs smaller products on the calling thread; larger ones wake its thread pool, which on
# a busy machine (or a server answering several searches at once) costs far more than it
# saves: 2,048 x 384 products took 20 ms each under load, against 0.5 ms for 1,024 x 384.
_SERIAL_PRODUCT = 1 << 18
_STATE_FP_TOLERANCE = 1e-4  # a restored vector whose centroid similarity moved more changed
_STATE_MIN_FOUND = 0.5  # restore a state only if it knows at least this share of the ids
_STATE_MAX_CHANGED = 0.05  # ... and at most this share of its vectors changed
_CHUNK = 16384  # rows checked at a time
_BLOCK_BYTES = 32 << 20  # one score block (rows x centroids or queries x rows), in bytes
_MAGIC = b"PRECISVI"
_VERSION = 1
_HEADER = struct.Struct("<8sHHIIQQI")  # magic, version, flags, dim, nlist, n, trained_n, depths


def normalise(x: npt.NDArray[Any], norms: npt.NDArray[Any] | None = None) -> F32:
    """``x`` as a new float32 array of unit rows (``norms`` if already computed)."""
    out = np.array(x, dtype=np.float32, copy=True)
    if norms is None:
        norms = np.linalg.norm(out, axis=1)
    out /= np.asarray(norms, dtype=np.float32)[:, None]
    return out


def assign(x: F32, centroids: F32) -> tuple[I32, F32]:
    """Index and similarity of the nearest centroid of every row of ``x``."""
    n = x.shape[0]
    labels = np.empty(n, dtype=np.int32)
    best = np.empty(n, dtype=np.float32)
    step = max(1, _BLOCK_BYTES // (4 * max(1, centroids.shape[0])))
    for i in range(0, n, step):
        scores = x[i : i + step] @ centroids.T
        am = scores.argmax(axis=1)
        labels[i : i + step] = am
        best[i : i + step] = np.take_along_axis(scores, am[:, None], axis=1)[:, 0]
    return labels, best


def kmeans(sample: F32, nlist: int, *, seed: int, iterations: int = 10) -> F32:
    """``nlist`` unit centroids trained on the unit rows of ``sample`` (spherical k-means)."""
    rng = np.random.default_rng(seed)
    n = sample.shape[0]
    nlist = max(1, min(nlist, n))
    centroids: F32 = sample[np.sort(rng.choice(n, nlist, replace=False))].copy()
    for _ in range(iterations):
        labels, best = assign(sample, centroids)
        counts = np.bincount(labels, minlength=nlist)
        order = np.argsort(labels, kind="stable")
        used = np.flatnonzero(counts)
        starts = (np.cumsum(counts) - counts)[used]
        sums = np.zeros_like(centroids)
        sums[used] = np.add.reduceat(sample[order], starts, axis=0)
        empty = np.flatnonzero(counts == 0)
        if empty.size:  # re-seed with the points their centroid serves worst
            worst = np.argsort(best, kind="stable")[: empty.size]
            sums[empty] = sample[worst]
        norms = np.linalg.norm(sums, axis=1)
        norms[norms == 0] = 1.0
        centroids = np.asarray(sums / norms[:, None], dtype=np.float32)
    return centroids


def calibrate(
    blocks: Sequence[tuple[F32, int]],
    queries: F32,
    query_rows: I64,
    centroids: F32,
    target: float,
) -> tuple[I64, I64]:
    """Probe counts needed at each neighbour depth of :data:`DEPTHS` for recall ``target``.

    ``blocks`` are the index's lists as (vectors, list number) in row order; ``queries``
    are vectors of the index at global positions ``query_rows`` of that order (each is left
    out of its own neighbours). Returns (depths, probes), probes non-decreasing.
    """
    n = sum(b.shape[0] for b, _ in blocks)
    nlist = centroids.shape[0]
    depths = np.array([d for d in DEPTHS if d < n] or [max(1, n - 1)], dtype=np.int64)
    top = int(min(depths[-1] + 1, n))
    col_list = np.concatenate(
        [np.full(b.shape[0], label, dtype=np.int32) for b, label in blocks]
    )
    # rank[q, l]: position of list l in query q's probe order (0 = probed first)
    order = np.argsort(-(queries @ centroids.T), axis=1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(nlist)[None, :], axis=1)
    step = max(1, 4 * _BLOCK_BYTES // (4 * n))
    neighbour_ranks = []
    for i in range(0, queries.shape[0], step):
        q = queries[i : i + step]
        scores = np.empty((q.shape[0], n), dtype=np.float32)
        at = 0
        for vecs, _ in blocks:
            scores[:, at : at + vecs.shape[0]] = q @ vecs.T
            at += vecs.shape[0]
        scores[np.arange(q.shape[0]), query_rows[i : i + step]] = -np.inf  # leave one out
        part = np.argpartition(-scores, top - 1, axis=1)[:, :top]
        part = np.take_along_axis(
            part, np.argsort(-np.take_along_axis(scores, part, axis=1), axis=1), axis=1
        )
        lists = col_list[part[:, : top - 1]]
        neighbour_ranks.append(np.take_along_axis(rank[i : i + step], lists, axis=1))
    ranks = np.concatenate(neighbour_ranks)
    probes = np.empty(depths.size, dtype=np.int64)
    for j, depth in enumerate(depths):
        hist = np.bincount(ranks[:, :depth].ravel(), minlength=nlist)
        covered = np.cumsum(hist) / hist.sum()
        probes[j] = int(np.searchsorted(covered, target - 1e-9)) + 1
    np.maximum.accumulate(probes, out=probes)
    return depths, np.minimum(probes, nlist)


def probes_for_depth(depths: I64, probes: I64, depth: float, nlist: int) -> int:
    """Probe count for neighbour ``depth`` from the calibrated curve (scaled beyond it)."""
    i = int(np.searchsorted(depths, depth))
    beyond = math.ceil(int(probes[-1]) * depth / max(1, int(depths[-1])))
    return max(1, min(nlist, int(probes[i]) if i < depths.size else beyond))


@dataclass(frozen=True)
class IndexState:
    """A decoded trained state: centroids, probe curve, and each id's list and score."""

    centroids: F32
    depths: I64
    probes: I64
    ids: I64  # sorted, unique
    labels: I32
    fingerprints: F32  # each vector's similarity to its centroid, to spot changed vectors
    trained_n: int


def encode_state(state: IndexState) -> bytes:
    """``state`` as bytes: a fixed header, the arrays (little-endian), a CRC-32 of it all."""
    nlist, dim = state.centroids.shape
    header = _HEADER.pack(
        _MAGIC, _VERSION, 0, dim, nlist, state.ids.size, state.trained_n, state.depths.size
    )
    parts: list[bytes] = [header]
    for array, dtype in _arrays(state):
        parts.append(np.ascontiguousarray(array, dtype=dtype).tobytes())
    body = b"".join(parts)
    return body + struct.pack("<I", zlib.crc32(body))


def decode_state(data: bytes, dim: int) -> IndexState | None:
    """The state in ``data`` if it is intact and built for ``dim``; ``None`` otherwise."""
    try:
        return _decode(memoryview(data), dim)
    except (ValueError, TypeError, struct.error, OverflowError, MemoryError):
        return None


def _decode(data: memoryview, dim: int) -> IndexState | None:
    if len(data) < _HEADER.size + 4:
        return None
    body = data[:-4]
    (crc,) = struct.unpack("<I", data[-4:])
    if zlib.crc32(body) != crc:
        return None
    magic, version, _flags, sdim, nlist, n, trained_n, ndepths = _HEADER.unpack_from(body)
    if magic != _MAGIC or version != _VERSION or sdim != dim or nlist < 1 or ndepths < 1:
        return None
    shapes: list[tuple[tuple[int, ...], str]] = [
        ((nlist, dim), "<f4"), ((ndepths,), "<i8"), ((ndepths,), "<i8"),
        ((n,), "<i8"), ((n,), "<i4"), ((n,), "<f4"),
    ]
    arrays: list[npt.NDArray[Any]] = []
    at = _HEADER.size
    for shape, dtype in shapes:
        count = int(np.prod(shape))
        size = count * np.dtype(dtype).itemsize
        if at + size > len(body):
            return None
        arrays.append(np.frombuffer(body, dtype=dtype, count=count, offset=at).reshape(shape))
        at += size
    if at != len(body):
        return None
    centroids, depths, probes, ids, labels, fps = arrays
    if not np.isfinite(centroids).all() or not np.isfinite(fps).all():
        return None
    if np.any(np.diff(ids) <= 0) or np.any(np.diff(depths) <= 0) or depths[0] < 1:
        return None
    if n and (labels.min() < 0 or labels.max() >= nlist):
        return None
    if probes.min() < 1 or probes.max() > nlist or np.any(np.diff(probes) < 0):
        return None
    return IndexState(
        centroids=centroids.astype(np.float32),
        depths=depths.astype(np.int64),
        probes=probes.astype(np.int64),
        ids=ids.astype(np.int64),
        labels=labels.astype(np.int32),
        fingerprints=fps.astype(np.float32),
        trained_n=int(trained_n),
    )


def _arrays(state: IndexState) -> Iterable[tuple[npt.NDArray[Any], str]]:
    yield state.centroids, "<f4"
    yield state.depths, "<i8"
    yield state.probes, "<i8"
    yield state.ids, "<i8"
    yield state.labels, "<i4"
    yield state.fingerprints, "<f4"


def dot(a: F32, b: F32) -> F32:
    """``a @ b.T`` in row pieces small enough for BLAS to run each on the calling thread."""
    out = np.empty((a.shape[0], b.shape[0]), dtype=np.float32)
    step = max(16, _SERIAL_PRODUCT // max(1, a.shape[1] * b.shape[0]))
    bt = b.T
    for i in range(0, a.shape[0], step):
        np.matmul(a[i : i + step], bt, out=out[i : i + step])
    return out


def merge(cand_s: F32, cand_i: I64, k: int) -> tuple[I64, F32, I64]:
    """Best ``k`` of each row of candidates, best first (ties: smaller id first), with
    the number of real ones; rows are padded to ``k`` columns (-1, -inf)."""
    if cand_s.shape[1] < k:
        pad = ((0, 0), (0, k - cand_s.shape[1]))
        cand_s = np.pad(cand_s, pad, constant_values=-np.inf)
        cand_i = np.pad(cand_i, pad, constant_values=-1)
    if cand_s.shape[1] > k:
        part = np.argpartition(-cand_s, k - 1, axis=1)[:, :k]
        cand_s = np.take_along_axis(cand_s, part, axis=1)
        cand_i = np.take_along_axis(cand_i, part, axis=1)
    order = np.lexsort((cand_i, -cand_s), axis=-1)
    scores = np.take_along_axis(cand_s, order, axis=1)
    ids = np.take_along_axis(cand_i, order, axis=1)
    return ids, scores, np.isfinite(scores).sum(axis=1)


def stack(chunks: Sequence[tuple[I64, F32, I64]]) -> tuple[I64, F32, I64]:
    """:func:`merge` results of consecutive query chunks as one."""
    return (np.concatenate([c[0] for c in chunks]), np.concatenate([c[1] for c in chunks]),
            np.concatenate([c[2] for c in chunks]))


def trim(ids: I64, scores: F32, counts: I64) -> tuple[I64, F32]:
    """Cut every row to the number of real results (the same for every query)."""
    c = int(counts.min()) if counts.size else 0
    return np.ascontiguousarray(ids[:, :c]), np.ascontiguousarray(scores[:, :c])


class Allowed:
    """A sorted, non-empty id set asked "which of these ids are in it?" many times in one
    search (once per probed list): a bitmap over the ids when they are dense enough
    (card row ids are: 1, 2, 3 ...), a binary search otherwise."""

    __slots__ = ("_bits", "_ids")

    def __init__(self, ids: I64) -> None:
        self._ids = ids
        top = int(ids[-1])
        self._bits: npt.NDArray[np.bool_] | None = None
        if int(ids[0]) >= 0 and top < max(1 << 16, 64 * ids.size):
            self._bits = np.zeros(top + 1, dtype=bool)
            self._bits[ids] = True

    def member(self, ids: I64) -> npt.NDArray[np.bool_]:
        if self._bits is not None:
            top = self._bits.size - 1
            inside: npt.NDArray[np.bool_] = (ids >= 0) & (ids <= top) & self._bits[
                np.clip(ids, 0, top)]
            return inside
        pos = np.minimum(np.searchsorted(self._ids, ids), self._ids.size - 1)
        found: npt.NDArray[np.bool_] = self._ids[pos] == ids
        return found


def labels_from_state(
    state: IndexState, x: npt.NDArray[Any], norms: npt.NDArray[np.float64], ids: I64
) -> I32 | None:
    """Each id's list from ``state``, or ``None`` when the state does not fit the data.

    Ids the state does not know, and vectors whose similarity to their saved centroid
    moved (re-embedded), get their nearest centroid. ``None`` when the state knows fewer
    than half of the ids or more than 5% of its vectors changed (another model)."""
    if state.ids.size == 0:
        return None
    pos = np.minimum(np.searchsorted(state.ids, ids), state.ids.size - 1)
    found = state.ids[pos] == ids
    known = int(np.count_nonzero(found))
    if known < _STATE_MIN_FOUND * ids.size:
        return None
    labels = state.labels[pos].copy()
    changed = 0
    for i in range(0, ids.size, _CHUNK):
        xc = np.asarray(x[i : i + _CHUNK], dtype=np.float32)
        lab = labels[i : i + _CHUNK]
        sims = np.einsum("ij,ij->i", xc, state.centroids[lab]) / norms[i : i + _CHUNK]
        same = np.abs(sims - state.fingerprints[pos[i : i + _CHUNK]]) <= _STATE_FP_TOLERANCE
        ok = found[i : i + _CHUNK] & same
        changed += int(np.count_nonzero(found[i : i + _CHUNK] & ~same))
        if not ok.all():
            lab[~ok], _ = assign(xc[~ok], state.centroids)
    if changed > _STATE_MAX_CHANGED * known:
        return None
    out: I32 = labels
    return out
