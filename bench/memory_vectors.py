"""The vector half of the memory search: build time, latency and recall of VectorIndex.

Synthetic data, seeded (no data folder needed): a two-level Gaussian mixture on the unit
sphere in 384 dimensions, the shape of sentence embeddings of a memory store. Topics are
uniform on the sphere; each topic has clusters around it (cosine ~0.6 to the topic);
cards scatter around their cluster (cosine ~0.75), ~100 cards per cluster with log-normal
sizes. Queries are 200 fresh draws from the same mixture (not in the index).

For each size: the time of one ``add`` of all vectors (which trains the IVF from 50,000),
p50 / p95 latency of single-query ``search`` (k = 10) without a filter, with ``allowed`` =
1% of the ids (the exact path) and 30% (the masked IVF path), recall@10 against brute
force over the same vectors (and the same filter), ``search_many`` throughput, and the
export / restore of the trained state.

    python bench/memory_vectors.py [--sizes 10000,100000,1000000] [--json OUT]
"""

from __future__ import annotations

import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import parser, print_table, write_json
from precis.memory.vectors import VectorIndex

K = 10
TOPIC_SPREAD = 0.068  # per coordinate, 384-d: cosine ~0.6 between a cluster and its topic
CARD_SPREAD = 0.045  # per coordinate, 384-d: cosine ~0.75 between a card and its cluster


class Mixture:
    """A seeded two-level Gaussian mixture on the unit sphere."""

    def __init__(self, n: int, dim: int, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.dim = dim
        clusters = max(8, n // 100)
        topics = max(4, clusters // 50)
        topic_c = self._unit(self.rng.standard_normal((topics, dim), dtype=np.float32))
        owner = self.rng.integers(0, topics, clusters)
        noise = self.rng.standard_normal((clusters, dim), dtype=np.float32)
        self.centres = self._unit(topic_c[owner] + TOPIC_SPREAD * noise)
        weights = self.rng.lognormal(0.0, 1.0, clusters)
        self.weights = weights / weights.sum()

    @staticmethod
    def _unit(x: np.ndarray) -> np.ndarray:
        out: np.ndarray = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
        return out

    def draw(self, n: int) -> np.ndarray:
        out = np.empty((n, self.dim), dtype=np.float32)
        for i in range(0, n, 65536):
            m = min(65536, n - i)
            which = self.rng.choice(self.centres.shape[0], m, p=self.weights)
            noise = self.rng.standard_normal((m, self.dim), dtype=np.float32)
            out[i : i + m] = self._unit(self.centres[which] + CARD_SPREAD * noise)
        return out


def brute_force(x: np.ndarray, ids: np.ndarray, q: np.ndarray,
                allowed: np.ndarray | None) -> np.ndarray:
    """Exact top-K ids of each query (x and q are unit rows), independent of the index."""
    best_s = np.full((q.shape[0], 0), -np.inf, dtype=np.float32)
    best_i = np.empty((q.shape[0], 0), dtype=np.int64)
    mask = None if allowed is None else np.isin(ids, allowed)
    for i in range(0, x.shape[0], 100_000):
        s = q @ x[i : i + 100_000].T
        if mask is not None:
            s[:, ~mask[i : i + 100_000]] = -np.inf
        s = np.concatenate([best_s, s], axis=1)
        cand = np.concatenate([best_i, np.broadcast_to(ids[i : i + 100_000], (q.shape[0],
                                                        min(100_000, x.shape[0] - i)))], axis=1)
        top = np.argsort(-s, axis=1)[:, :K]
        best_s = np.take_along_axis(s, top, axis=1)
        best_i = np.take_along_axis(cand, top, axis=1)
    return best_i


def recall(found: list[np.ndarray], truth: np.ndarray) -> float:
    hits = sum(len(set(f.tolist()) & set(t.tolist())) for f, t in zip(found, truth))
    return hits / truth.size


def percentile_ms(times: list[float], pct: float) -> float:
    return float(np.percentile(times, pct)) * 1000


def run_size(n: int, dim: int, n_queries: int, seed: int) -> dict[str, Any]:
    t = time.perf_counter()
    mix = Mixture(n, dim, seed)
    x = mix.draw(n)
    queries = mix.draw(n_queries)
    gen_s = time.perf_counter() - t
    ids = np.arange(1, n + 1, dtype=np.int64)  # like SQLite row ids
    rng = np.random.default_rng(seed + 1)

    index = VectorIndex(dim, seed=seed)
    t = time.perf_counter()
    index.add(ids, x)
    build_s = time.perf_counter() - t

    filters: dict[str, np.ndarray | None] = {
        "none": None,
        "1%": np.sort(rng.choice(ids, max(K, n // 100), replace=False)),
        "30%": np.sort(rng.choice(ids, (n * 3) // 10, replace=False)),
    }
    searches = []
    for name, allowed in filters.items():
        truth = brute_force(x, ids, queries, allowed)
        index.search(queries[0], K, allowed=allowed)  # warm up
        times, found = [], []
        for q in queries:
            start = time.perf_counter()
            got, _ = index.search(q, K, allowed=allowed)
            times.append(time.perf_counter() - start)
            found.append(got)
            if allowed is not None:
                assert np.isin(got, allowed).all() and got.size == K
        start = time.perf_counter()
        index.search_many(queries, K, allowed=allowed)
        batch_s = time.perf_counter() - start
        searches.append({
            "filter": name, "allowed": None if allowed is None else int(allowed.size),
            "p50_ms": percentile_ms(times, 50), "p95_ms": percentile_ms(times, 95),
            "recall_at_10": recall(found, truth),
            "batch_ms_per_query": batch_s / n_queries * 1000,
        })

    t = time.perf_counter()
    state = index.export_state()
    export_s = time.perf_counter() - t
    t = time.perf_counter()
    restored = VectorIndex.from_state(state, ids, x, seed=seed)
    restore_s = time.perf_counter() - t
    a_ids, a_scores = index.search_many(queries, K)
    b_ids, b_scores = restored.search_many(queries, K)
    same = bool(np.array_equal(a_ids, b_ids) and np.array_equal(a_scores, b_scores))
    del restored
    return {
        "n": n, "dim": dim, "generate_seconds": gen_s, "build_seconds": build_s,
        "trained": index.trained, "nlist": index.nlist, "nprobe": index.nprobe,
        "index_mb": index.memory_bytes / 2**20, "state_kb": len(state) / 1024,
        "export_seconds": export_s, "restore_seconds": restore_s,
        "restore_identical": same, "searches": searches,
    }


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--sizes", default="10000,100000,1000000")
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--dim", type=int, default=384)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    figures = [run_size(int(s), args.dim, args.queries, args.seed)
               for s in args.sizes.split(",")]
    print(f"synthetic clustered vectors (seeded, seed {args.seed}): two-level Gaussian mixture "
          f"on the sphere, dim {args.dim}; {args.queries} fresh queries; k = {K}")
    print(f"{os.cpu_count()} cores, shared with other jobs: latencies are indicative; "
          f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB")
    print_table(
        ["vectors", "build s", "nlist", "nprobe", "index MB", "state KB", "export s",
         "restore s", "restored same"],
        [[f["n"], f["build_seconds"], f["nlist"] or "exact", f["nprobe"] or "-",
          f["index_mb"], f["state_kb"], f["export_seconds"], f["restore_seconds"],
          "yes" if f["restore_identical"] else "NO"] for f in figures],
        title="build and state",
    )
    print()
    print_table(
        ["vectors", "allowed", "p50 ms", "p95 ms", "recall@10", "batch ms/query"],
        [[f["n"], s["filter"] if s["allowed"] is None else f"{s['filter']} ({s['allowed']:,})",
          s["p50_ms"], s["p95_ms"], s["recall_at_10"], s["batch_ms_per_query"]]
         for f in figures for s in f["searches"]],
        title="search (single query; batch = search_many of all queries)",
    )
    write_json(args.json, {
        "benchmark": "memory_vectors", "seed": args.seed, "queries": args.queries, "k": K,
        "data": "synthetic two-level Gaussian mixture on the unit sphere (seeded)",
        "cores": os.cpu_count(), "shared_machine": True,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "sizes": figures,
    })


if __name__ == "__main__":
    main()
