"""Chinese memory recall: MADial-Bench (zh), user 1: recall@1/3/5/10 of memory systems.

The data (``../shared/data/madial/``, see its README) is user 1's memory archive (83
memories: an event, its date) and 76 dialogues. For each dialogue, the query is the dialogue
before its (first) test turn, ``"".join(dialogue[1:t])`` as the benchmark writes it
(``<Bart>:"…"`` lines), and the candidates are all the user's memories; recall@k = the share
of the dialogue's ``relevant-id`` memories among the first k distinct memories returned,
averaged over dialogues.

Systems (``--systems``, comma-separated; one whose packages are missing is skipped):

- ``bm25-jieba``: plain Okapi BM25 (k1 1.5, b 0.75) over ``rjieba.cut`` words of each
  memory, punctuation left out;
- ``precis-keywords``: precis's memory store, keywords only; ``precis-minilm``,
  ``precis-use`` and ``precis-local``: the same store, hybrid with the embedder ``minilm``
  (all-MiniLM-L6-v2, English), ``use`` (multilingual Universal Sentence Encoder) or
  ``local`` (the default local embedder). Every memory is ingested as a conversation of one
  user message dated with the memory's date, all under user ``1``; a hit's session names
  its memory. The store's clock is the real date (``--today`` sets another);
- ``use-cosine``: the multilingual Universal Sentence Encoder alone, exhaustive cosine;
- ``bge-m3``, ``openai``: the benchmark's own top-20 lists (BGE-M3 dense and OpenAI
  embeddings), shipped in the data folder: anchors, not run here.

    python bench/memory_zh.py [--systems ...] [--today YYYY-MM-DD] [--json OUT]
"""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import parser, print_table, require_data, write_json

KS = (1, 3, 5, 10)
Search = Callable[[str], list[str]]
"""``search(query)`` -> memory ids, best first."""
Memories = dict[str, dict[str, Any]]


def read_jsonl(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def load(folder: Path) -> tuple[Memories, list[dict[str, Any]]]:
    memories: Memories = {}
    for row in read_jsonl(folder / "MADial-Bench-zh-memory.user1.json"):
        memories.update(row)
    return memories, read_jsonl(folder / "MADial-Bench-zh-dialogue.user1.json")


def query_of(dialogue: dict[str, Any]) -> str:
    return "".join(dialogue["dialogue"][1:dialogue["test-turn"][0]])


def recall(found: list[str], relevant: list[int], k: int) -> float:
    wanted = {str(r) for r in relevant}
    top = list(dict.fromkeys(found))[:k]
    return len(wanted.intersection(top)) / len(wanted)


# ----------------------------------------------------------------------- systems


def _bm25_jieba(memories: Memories, folder: Path, today: date | None) -> Search:
    import numpy as np
    import rjieba

    def tokens(text: str) -> list[str]:
        return [w for w in rjieba.cut(text) if any(c.isalnum() for c in w)]

    ids = list(memories)
    docs = [Counter(tokens(memories[i]["event"])) for i in ids]
    lengths = np.array([sum(d.values()) for d in docs], dtype=float)
    average = lengths.mean()
    df = Counter(w for d in docs for w in d)
    n = len(docs)

    def search(query: str) -> list[str]:
        scores = np.zeros(n)
        for word in set(tokens(query)):
            if word not in df:
                continue
            idf = math.log(1 + (n - df[word] + 0.5) / (df[word] + 0.5))
            tf = np.array([d.get(word, 0) for d in docs], dtype=float)
            scores += idf * tf * 2.5 / (tf + 1.5 * (0.25 + 0.75 * lengths / average))
        order = np.argsort(-scores, kind="stable")
        return [ids[j] for j in order if scores[j] > 0]

    return search


def _use_cosine(memories: Memories, folder: Path, today: date | None) -> Search:
    import numpy as np

    from precis.memory.embed import get_embedder

    model = get_embedder("use")
    assert model is not None
    ids = list(memories)
    matrix = model.embed([memories[i]["event"] for i in ids])

    def search(query: str) -> list[str]:
        scores = matrix @ model.embed([query])[0]
        return [ids[j] for j in np.argsort(-scores, kind="stable")]

    return search


def _precis(embedder: str) -> Callable[[Memories, Path, date | None], Search]:
    def make(memories: Memories, folder: Path, today: date | None) -> Search:
        from precis import Conversation, Message
        from precis.memory import Memory

        folder.mkdir(parents=True, exist_ok=True)
        memory = Memory(folder / f"{embedder}.sqlite3", embedder=embedder)
        for mid, item in memories.items():
            message = Message.of("user", item["event"], timestamp=f"{item['time']}T12:00:00")
            memory.ingest(Conversation([message], id=f"m{mid}"), user="1")

        def search(query: str) -> list[str]:
            hits = memory.search(query, k=10, user="1", today=today).hits
            return [hit.card.session_id[1:] for hit in hits]

        return search

    return make


def _shipped(name: str) -> Callable[[Memories, Path, date | None], Search]:
    def make(memories: Memories, folder: Path, today: date | None) -> Search:
        path = folder / name
        if not path.exists():
            raise ImportError(f"{path} not found")
        by_id = {row["id"]: [str(i) for i in row["top_20_ids"]] for row in read_jsonl(path)}

        def search(query: str) -> list[str]:
            return by_id[_IDS[query]]

        return search

    return make


_IDS: dict[str, int] = {}  # query -> dialogue id, for the shipped lists

SYSTEMS: dict[str, Callable[[Memories, Path, date | None], Search]] = {
    "bm25-jieba": _bm25_jieba,
    "precis-keywords": _precis("none"),
    "precis-minilm": _precis("minilm"),
    "precis-use": _precis("use"),
    "precis-local": _precis("local"),
    "use-cosine": _use_cosine,
    "bge-m3": _shipped("BGE_M3_dense_zh_top_20_ids.user1.json"),
    "openai": _shipped("openai_zh_top_20_ids.user1.json"),
}


# -------------------------------------------------------------------------- run


def main() -> None:
    p = parser(__doc__.splitlines()[0] if __doc__ else "")
    p.add_argument("--systems", default=",".join(SYSTEMS),
                   help=f"comma-separated, from {', '.join(SYSTEMS)} (default: all)")
    p.add_argument("--today", type=date.fromisoformat, default=None,
                   help="the date precis reads relative time words against (default: today)")
    p.add_argument("--threads", type=int, default=1, help="BLAS threads (default 1)")
    args = p.parse_args()
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[name] = str(args.threads)
    names = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = [s for s in names if s not in SYSTEMS]
    if unknown:
        p.error(f"unknown system(s) {', '.join(unknown)} (expected {', '.join(SYSTEMS)})")
    folder = require_data(args.data, "madial")
    memories, dialogues = load(folder)
    _IDS.update({query_of(d): d["id"] for d in dialogues})
    print(f"{len(memories)} memories, {len(dialogues)} dialogues, "
          f"{sum(len(d['relevant-id']) for d in dialogues)} relevant memories in all")

    results: list[dict[str, Any]] = []
    skipped: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="precis-memory-zh-") as scratch:
        for name in names:
            start = time.perf_counter()
            try:
                search = SYSTEMS[name](memories, folder if name in ("bge-m3", "openai")
                                       else Path(scratch) / name, args.today)
            except (ImportError, NotImplementedError) as exc:
                skipped[name] = f"{type(exc).__name__}: {exc}"
                print(f"{name}: skipped ({skipped[name]})")
                continue
            built = time.perf_counter() - start
            rows, latencies = [], []
            for d in dialogues:
                start = time.perf_counter()
                found = search(query_of(d))
                latencies.append(time.perf_counter() - start)
                rows.append({"id": d["id"], "relevant": d["relevant-id"], "found": found[:10],
                             **{f"recall@{k}": recall(found, d["relevant-id"], k) for k in KS}})
            results.append({
                "system": name, "build_seconds": built,
                "query_ms_mean": 1000 * sum(latencies) / len(latencies),
                **{f"recall@{k}": sum(r[f"recall@{k}"] for r in rows) / len(rows) for k in KS},
                "per_dialogue": rows,
            })
            print(f"  {name}: built in {built:.1f} s")
    print()
    print_table(["system"] + [f"recall@{k}" for k in KS] + ["build s", "query ms"],
                [[r["system"]] + [f"{100 * r[f'recall@{k}']:.1f}" for k in KS]
                 + [f"{r['build_seconds']:.1f}", f"{r['query_ms_mean']:.1f}"] for r in results],
                title=f"MADial-Bench zh, user 1: memory recall (%), {len(dialogues)} dialogues")
    for name, why in skipped.items():
        print(f"skipped {name}: {why}")
    write_json(args.json, {"benchmark": "memory_zh", "ks": list(KS),
                           "today": args.today.isoformat() if args.today else None,
                           "results": results, "skipped": skipped})


if __name__ == "__main__":
    main()
