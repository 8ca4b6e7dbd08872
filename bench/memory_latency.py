"""Memory store latency: ingestion rate and search p50 / p95 at 10k, 100k and 1M cards.

For every size N of ``--sizes`` and every system of ``--systems``, a fresh store (in a
temporary folder) ingests the first N synthetic memory cards of ``_synthetic_cards``
(seeded; ~30% Chinese; metadata user / session / type / date) in batches of ``--batch``;
only the ingest calls are timed (generating the cards is not). Then ``--queries`` queries
(each aimed at one card, ~30% with a user, type or date-window filter) are run one at a
time after a first query timed apart (it loads the in-memory indexes from the file), top
``--k``. Reported: cards/s, search p50 / p95 in
ms (wall clock, and the process's CPU time: on a shared machine the wall-clock figures
grow with the load average, which is reported), hit@k (the share of queries whose target
card comes back: a sanity check, not a quality measure, since at large N several cards
can answer a query equally well) and the store's size on disk.

Systems:

- ``mem0``: mem0 ``Memory.add(..., infer=False)`` of each card (one call per card: mem0
  has no batch add), ``user_id`` = the card's user, ``agent_id`` = ``bench`` (so a query
  without a user filter can search every card), metadata ``card_id``, ``type``,
  ``session`` and ``day`` (the date as the number YYYYMMDD, for range filters); local
  all-MiniLM-L6-v2 embedder, on-disk Qdrant (its local mode, which Qdrant advises
  against past 20,000 points). ``search(text, top_k=k, filters=..., threshold=0)``.
  Run at sizes up to ``--mem0-max`` (default 10,000) only.
- ``precis``: precis's memory store (one SQLite file), keywords only (the default without
  a model); ``precis-local``: plus the default local model's vectors (the multilingual
  Universal Sentence Encoder, numpy) and hybrid ranking, up to ``--mem0-max`` cards;
  ``precis-hash``: plus stand-in 384-value vectors from hashed words (fast enough for 1M
  cards), to time the hybrid path at every size.

torch and BLAS run on ``--threads`` threads (default 1).

    python bench/memory_latency.py [--sizes 10000,100000,1000000] [--systems mem0,precis]
        [--queries 200] [--k 10] [--batch 1000] [--mem0-max 10000] [--json OUT]
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import parser, print_table, write_outputs
from _locomo_retrieval import limit_threads, mem0_memory, percentile
from _synthetic_cards import Card, Query, card, queries


class Store(Protocol):
    """A memory store under test."""

    def ingest(self, batch: Sequence[Card]) -> None:
        """Add these cards (ids ``Card.id``, text, metadata) to the store."""

    def search(self, query: Query, k: int) -> list[str]:
        """Ids of the best ``k`` cards for ``query.text`` among those matching
        ``query.filters`` (``user``, ``type``, ``date_from`` / ``date_to``), best first."""


Factory = Callable[[Path], Store]
"""``make(empty_folder)`` -> a new, empty store keeping its files in the folder
(ImportError when its packages are missing)."""


# ----------------------------------------------------------------------- mem0


def _day(iso: str) -> int:
    return int(iso.replace("-", ""))


class _Mem0Store:
    def __init__(self, folder: Path) -> None:
        self.memory = mem0_memory(folder, collection="cards")

    def ingest(self, batch: Sequence[Card]) -> None:
        for c in batch:
            self.memory.add([{"role": "user", "content": c.text}], user_id=c.user,
                            agent_id="bench", infer=False,
                            metadata={"card_id": c.id, "type": c.type, "session": c.session,
                                      "day": _day(c.date)})

    def search(self, query: Query, k: int) -> list[str]:
        filters: dict[str, Any] = {"agent_id": "bench"}
        if "user" in query.filters:
            filters["user_id"] = query.filters["user"]
        if "type" in query.filters:
            filters["type"] = query.filters["type"]
        if "date_from" in query.filters:
            filters["day"] = {"gte": _day(query.filters["date_from"]),
                              "lte": _day(query.filters["date_to"])}
        found = self.memory.search(query.text, top_k=k, filters=filters, threshold=0.0)
        return [str(r["metadata"]["card_id"]) for r in found["results"]
                if isinstance(r.get("metadata"), dict) and "card_id" in r["metadata"]]


def _mem0_system(folder: Path) -> Store:
    return _Mem0Store(folder)


# The synthetic card types, as precis card types (the same map for cards and filters).
_TYPE = {"decision": "decision", "config": "config", "sql": "sql", "error": "error-fix",
         "preference": "preference", "event": "event", "person": "fact", "ticket": "fact"}


class _HashEmbedder:
    """A fast stand-in for a sentence model at scales where MiniLM would take hours (1M cards
    at ~100/s): a seeded random vector per word, summed and normalised. It exercises the
    same storage, index and fusion path with 384-value vectors; its similarities are
    lexical, not semantic, so only the timings mean something."""

    name = "bench-hash-384"
    dim = 384

    def __init__(self) -> None:
        self._cache: dict[str, Any] = {}

    def embed(self, texts: Sequence[str]) -> Any:
        import zlib

        import numpy as np

        from precis.memory.text import words

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in words(text):
                vec = self._cache.get(word)
                if vec is None:
                    rng = np.random.default_rng(zlib.crc32(word.encode("utf-8")))
                    vec = self._cache[word] = rng.standard_normal(self.dim).astype(np.float32)
                out[row] += vec
            norm = float(np.linalg.norm(out[row]))
            out[row] /= norm or 1.0
        return out


_PG: list[Any] = []  # the PostgreSQL server of --store postgres (bench/_pg_server.py)


def _new_location(folder: Path) -> str:
    """Where a new precis store goes: a SQLite file in ``folder``, or with ``--store
    postgres`` a fresh database on the benchmark's server."""
    if _PG:
        return str(_PG[0].new_database(migrated=False))
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder / "memory.sqlite3")


def _embedder(spec: str) -> Any:
    return _HashEmbedder() if spec == "hash" else spec


class _PrecisStore:
    def __init__(self, location: str, embedder: str) -> None:
        from precis.memory import Memory

        self.location, self.embedder = location, embedder
        self.memory = Memory(location, embedder=_embedder(embedder))
        if embedder == "local" and self.memory.embedder is None:
            raise ImportError("the local model is not installed (pip install .[local])")

    def close(self) -> None:
        self.memory.close()

    def disk_mb(self) -> float | None:
        if "://" not in self.location:
            return None
        import psycopg

        with psycopg.connect(self.location) as conn:
            row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
        return float(row[0]) / 1e6 if row else None

    def ingest(self, batch: Sequence[Card]) -> None:
        from precis.memory import MemoryCard

        self.memory.add([
            MemoryCard(id=c.id, content=c.text, type=_TYPE[c.type],  # type: ignore[arg-type]
                       tags=(c.type,), session_id=c.session, user_id=c.user, scope="user",
                       event_time=c.date, language=c.lang)
            for c in batch
        ])

    def search(self, query: Query, k: int) -> list[str]:
        f = query.filters
        result = self.memory.search(
            query.text, k=k, user=f.get("user"),
            types=[_TYPE[f["type"]]] if "type" in f else (),
            since=f.get("date_from"), until=f.get("date_to"),
        )
        return [hit.card.id for hit in result.hits]


def _precis(embedder: str) -> Factory:
    def make(folder: Path) -> Store:
        return _PrecisStore(_new_location(folder), embedder)

    return make
# =======================================================================================


_MODEL_SYSTEMS = frozenset({"mem0", "precis-local"})
SYSTEMS: dict[str, Factory] = {
    "mem0": _mem0_system,
    "precis": _precis("none"),                # keywords only (the embedded default)
    "precis-local": _precis("local"),         # + the default local model's vectors (USE)
    "precis-hash": _precis("hash"),           # + stand-in vectors, for 100k / 1M
}


# --------------------------------------------------------------------------- run


def _batches(n: int, size: int, seed: int) -> Iterator[list[Card]]:
    for start in range(0, n, size):
        yield [card(i, seed) for i in range(start, min(n, start + size))]


def _disk_mb(folder: Path) -> float:
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):  # a file removed while walking
                total += (Path(root) / name).stat().st_size
    return total / 1e6


def _measure(name: str, make: Factory, n: int, args: Any) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix=f"precis-memory-latency-{name}-") as scratch:
        folder = Path(scratch)
        start = time.perf_counter()
        store = make(folder / "store")
        setup = time.perf_counter() - start
        ingest = ingest_cpu = 0.0
        done = 0
        step = max(n // 10, args.batch)
        for batch in _batches(n, args.batch, args.seed):
            start, start_cpu = time.perf_counter(), time.process_time()
            store.ingest(batch)
            ingest += time.perf_counter() - start
            ingest_cpu += time.process_time() - start_cpu
            done += len(batch)
            if done % step < len(batch) or done == n:
                print(f"  {name} {n:,}: {done:,} cards in {ingest:.1f} s "
                      f"({done / ingest if ingest else 0:,.0f} cards/s)", flush=True)
        asked = queries(n, args.queries, args.seed)
        start = time.perf_counter()
        store.search(asked[0], args.k)  # the first search loads the indexes: apart
        first = time.perf_counter() - start
        latencies, cpu, hits = [], [], 0
        filtered: list[float] = []
        server_before = _server_cpu()
        for q in asked:
            start, start_cpu = time.perf_counter(), time.process_time()
            found = store.search(q, args.k)
            spent = time.perf_counter() - start
            cpu.append(time.process_time() - start_cpu)
            latencies.append(spent)
            if q.filters:
                filtered.append(spent)
            hits += q.target in found[:args.k]
        server_after = _server_cpu()
        server_ms = (None if server_before is None or server_after is None
                     else 1000 * (server_after - server_before) / len(asked))
        curve = _curve(store, asked, args) if isinstance(store, _PrecisStore) else []
        disk = store.disk_mb() if isinstance(store, _PrecisStore) else None
        if isinstance(store, _PrecisStore):
            store.close()
            if _PG:
                _PG[0].drop(store.location)
        return {
            "system": name, "cards": n, "setup_seconds": setup, "ingest_seconds": ingest,
            "cards_per_second": n / ingest if ingest else None,
            "ingest_cpu_seconds": ingest_cpu,
            "cards_per_cpu_second": n / ingest_cpu if ingest_cpu else None,
            "queries": len(asked), "filtered_queries": len(filtered), "k": args.k,
            "first_search_ms": 1000 * first,
            "search_ms_p50": 1000 * percentile(latencies, 50),
            "search_ms_p95": 1000 * percentile(latencies, 95),
            "filtered_search_ms_p50": 1000 * percentile(filtered, 50),
            "search_cpu_ms_mean": 1000 * sum(cpu) / len(cpu),
            "server_cpu_ms_mean": server_ms,
            "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
            "hit_at_k": hits / len(asked) if asked else None,
            "disk_mb": disk if disk is not None else _disk_mb(folder),
            "store": "postgres" if _PG else "sqlite",
            "processes": curve,
        }


def _server_cpu() -> float | None:
    """CPU seconds used so far by the benchmark's own PostgreSQL (its postmaster's processes),
    so a search's server work can be told from waiting on a loaded machine."""
    server = getattr(_PG[0], "_server", None) if _PG else None
    if server is None:
        return None
    import psutil

    try:
        main = psutil.Process(server.get_pid())
        total = 0.0
        for process in [main, *main.children(recursive=True)]:
            with contextlib.suppress(psutil.Error):
                times = process.cpu_times()
                total += times.user + times.system
        return total
    except psutil.Error:
        return None


def _searcher(location: str, embedder: str, asked: list[Query], k: int, offset: int,
              ready: Any, start: Any, out: Any) -> None:
    """One search process of the curve: opens the store, warms up (its first search), then
    runs every query once from ``offset`` on, timing each."""
    limit_threads(1)
    store = _PrecisStore(location, embedder)
    store.search(asked[offset], k)
    ready.wait()
    start.wait()
    latencies = []
    began = time.perf_counter()
    for i in range(len(asked)):
        q = asked[(offset + i) % len(asked)]
        t = time.perf_counter()
        store.search(q, k)
        latencies.append(time.perf_counter() - t)
    out.put((time.perf_counter() - began, latencies))
    store.close()


def _curve(store: _PrecisStore, asked: list[Query], args: Any) -> list[dict[str, Any]]:
    """Search throughput with 1, 2, 4 ... processes searching the same store at once
    (``--processes``): each runs every query; queries per second over all, p50 / p95."""
    import multiprocessing

    out = []
    context = multiprocessing.get_context("spawn")
    for count in args.processes:
        ready, start, queue = context.Barrier(count + 1), context.Barrier(count + 1), \
            context.Queue()
        workers = [context.Process(target=_searcher, args=(
            store.location, store.embedder, asked, args.k, i * len(asked) // count, ready,
            start, queue)) for i in range(count)]
        for w in workers:
            w.start()
        ready.wait()
        began = time.perf_counter()
        start.wait()
        results = [queue.get() for _ in workers]
        wall = time.perf_counter() - began
        for w in workers:
            w.join()
        latencies = [x for _, lat in results for x in lat]
        out.append({"processes": count, "queries": len(latencies), "seconds": wall,
                    "queries_per_second": len(latencies) / wall,
                    "search_ms_p50": 1000 * percentile(latencies, 50),
                    "search_ms_p95": 1000 * percentile(latencies, 95)})
        print(f"  {count} process(es) searching: {len(latencies) / wall:,.0f} queries/s, "
              f"p95 {1000 * percentile(latencies, 95):.1f} ms", flush=True)
    return out


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--sizes", default="10000,100000,1000000",
                   help="numbers of cards (comma-separated)")
    p.add_argument("--systems", default=",".join(SYSTEMS),
                   help=f"comma-separated, from {', '.join(SYSTEMS)} (default: all)")
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--batch", type=int, default=1000, help="cards per ingest call")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--mem0-max", type=int, default=10000,
                   help="largest size the systems that embed with a model (mem0, precis-local) "
                        "run at (they embed ~100 cards/s here; mem0's Qdrant is brute force)")
    p.add_argument("--threads", type=int, default=1,
                   help="threads for torch / BLAS (default 1)")
    p.add_argument("--store", choices=("sqlite", "postgres"), default="sqlite",
                   help="precis's store: a SQLite file, or a PostgreSQL database (pgserver "
                        "started in a temporary folder, or --pg-url)")
    p.add_argument("--pg-url", default=None, metavar="URL",
                   help="with --store postgres: a server to use (a database per run is made "
                        "and dropped there) instead of starting one")
    p.add_argument("--processes", default="",
                   help="also time this many processes searching the store at once "
                        "(comma-separated, e.g. 1,2,4)")
    args = p.parse_args()
    try:
        args.processes = [int(x) for x in args.processes.split(",") if x.strip()]
    except ValueError:
        p.error("--processes takes whole numbers, e.g. 1,2,4")
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    names = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = [s for s in names if s not in SYSTEMS]
    if unknown:
        p.error(f"unknown system(s) {', '.join(unknown)} (expected {', '.join(SYSTEMS)})")
    if min(sizes, default=1) < 1 or args.queries < 1 or args.batch < 1 or args.k < 1:
        p.error("--sizes, --queries, --batch and --k must be positive")
    limit_threads(args.threads)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.store == "postgres":
        from _pg_server import start_server

        _PG.append(start_server(args.pg_url))
        print(f"PostgreSQL: {_PG[0].settings()}")
    try:
        _run(p, args, sizes, names)
    finally:
        if _PG:
            _PG[0].close()


def _run(p: Any, args: Any, sizes: list[int], names: list[str]) -> None:
    results: list[dict[str, Any]] = []
    skipped: dict[str, str] = {}
    for name in names:
        for n in sizes:
            if name in _MODEL_SYSTEMS and n > args.mem0_max:
                skipped[f"{name}@{n}"] = f"above --mem0-max {args.mem0_max:,}"
                print(f"{name} {n:,}: skipped (above --mem0-max {args.mem0_max:,})")
                continue
            try:
                results.append(_measure(name, SYSTEMS[name], n, args))
            except (ImportError, NotImplementedError) as exc:
                skipped[name] = f"{type(exc).__name__}: {exc}"
                print(f"{name}: skipped ({skipped[name]})")
                break

    print()
    print_table(["system", "cards", "cards/s", "cards/cpu s", "ingest s", "first ms",
                 "search p50 ms",
                 "search p95 ms", "filtered p50 ms", "search cpu ms", "server cpu ms",
                 f"hit@{args.k}",
                 "disk MB", "setup s", "load"],
                [[r["system"], r["cards"], f"{r['cards_per_second'] or 0:,.0f}",
                  f"{r['cards_per_cpu_second'] or 0:,.0f}",
                  f"{r['ingest_seconds']:.1f}", f"{r['first_search_ms']:.0f}",
                  f"{r['search_ms_p50']:.2f}",
                  f"{r['search_ms_p95']:.2f}", f"{r['filtered_search_ms_p50']:.2f}",
                  f"{r['search_cpu_ms_mean']:.2f}",
                  "" if r["server_cpu_ms_mean"] is None else f"{r['server_cpu_ms_mean']:.2f}",
                  f"{100 * r['hit_at_k']:.0f}%", f"{r['disk_mb']:.1f}",
                  f"{r['setup_seconds']:.1f}", r["load_average"]] for r in results],
                title=f"memory latency, {args.store} store ({args.queries} queries, seed "
                      f"{args.seed}, {args.threads} thread(s))")
    curves = [(r, c) for r in results for c in r["processes"]]
    if curves:
        print()
        print_table(["system", "cards", "processes", "queries/s", "search p50 ms",
                     "search p95 ms"],
                    [[r["system"], r["cards"], c["processes"],
                      f"{c['queries_per_second']:,.0f}", f"{c['search_ms_p50']:.2f}",
                      f"{c['search_ms_p95']:.2f}"] for r, c in curves],
                    title="processes searching the same store at once")
    for name, why in skipped.items():
        print(f"skipped {name}: {why}")
    write_outputs(args, {"benchmark": "memory_latency", "seed": args.seed,
                         "threads": args.threads, "batch": args.batch, "store": args.store,
                         "postgres": _PG[0].settings() if _PG else None,
                         "results": results, "skipped": skipped})


if __name__ == "__main__":
    main()
