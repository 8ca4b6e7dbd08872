"""Token estimator accuracy against the real tokenizers, and counting throughput.

Accuracy: the estimator of each family (``estimate:cl100k`` / ``:o200k`` / ``:qwen``) against
its real tokenizer (cl100k_base, o200k_base, Qwen3 tokenizer.json), on the *held-out* half
of the corpus built by ``_token_corpus.py`` (the half ``calibrate_estimator.py`` never
saw). Per language mix (zh, en, code, mixed zh/en) on pieces of at least 200 characters,
plus the shorter pieces on their own (rounding dominates there) and whole conversations.
Error = |estimate - real| / real; mean and worst over the pieces, and the bias (mean signed
error).

Throughput: MB of UTF-8 per second of ``count`` over the held-out pieces one by one, for
the estimator and for the real tokenizers.

    python bench/tokens_bench.py [--data ../shared/data] [--repeat 3] [--json OUT]
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from precis.tokens import EstimatorCounter, TokenCounter

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import best_of, parser, print_table, require_data, write_json
from _token_corpus import (
    LANGS,
    MIN_PIECE_CHARS,
    build_corpus,
    error_stats,
    mixed_pieces,
    real_counters,
)

REAL_NAMES = {"cl100k": "cl100k_base", "o200k": "o200k_base", "qwen": "qwen3 (HF)"}


def _throughput(count: Callable[[str], int], texts: list[str], repeat: int) -> float:
    size = sum(len(t.encode("utf-8")) for t in texts)
    secs, _ = best_of(lambda: [count(t) for t in texts], repeat)
    return size / secs / 1e6


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--repeat", type=int, default=3, help="best of N for throughput")
    args = p.parse_args()
    require_data(args.data, "tokenizers")
    require_data(args.data, "transcripts")

    corpus = build_corpus(args.data)
    pieces = [p for p in corpus.pieces + mixed_pieces(corpus.pieces) if p.heldout]
    long_pieces = [p for p in pieces if len(p.text) >= MIN_PIECE_CHARS]
    short_pieces = [p for p in pieces if len(p.text) < MIN_PIECE_CHARS]
    conversations = [c for c in corpus.conversations if c.heldout]
    counters: dict[str, TokenCounter] = real_counters(args.data)

    accuracy: list[dict[str, Any]] = []
    rows = []
    for family, real in counters.items():
        estimator = EstimatorCounter(family)
        groups: list[tuple[str, list[str]]] = [
            (lang, [p.text for p in long_pieces if p.lang == lang]) for lang in LANGS
        ]
        groups.append((f"short (<{MIN_PIECE_CHARS} chars)", [p.text for p in short_pieces]))
        for source in sorted({c.source for c in conversations}):
            texts = [c.text for c in conversations if c.source == source]
            groups.append((f"whole conv: {source}", texts))
        for group, texts in groups:
            stats = error_stats(estimator.count_batch(texts), real.count_batch(texts))
            accuracy.append({"tokenizer": REAL_NAMES[family], "estimator": estimator.name,
                             "group": group, **stats})
            rows.append([REAL_NAMES[family], group, f"{stats['mean']:.1f}%",
                         f"{stats['worst']:.1f}%", f"{stats['bias']:+.1f}%", stats["n"]])
    print_table(["tokenizer", "text", "mean err", "worst err", "bias", "n"], rows,
                title="estimator vs real tokenizer, held-out half "
                      f"(pieces >= {MIN_PIECE_CHARS} chars unless noted)")

    speed: list[dict[str, Any]] = []
    speed_rows = []
    estimator = EstimatorCounter("o200k")
    for lang in LANGS:
        texts = [p.text for p in long_pieces if p.lang == lang]
        mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
        figures = {"estimate": _throughput(estimator.count, texts, args.repeat)}
        for family, real in counters.items():
            figures[REAL_NAMES[family]] = _throughput(real.count, texts, args.repeat)
        speed.append({"lang": lang, "mb": mb, "mb_per_s": figures})
        speed_rows.append([lang, mb, *(figures[k] for k in figures)])
    print()
    print_table(["text", "MB", "estimate MB/s", *(f"{REAL_NAMES[f]} MB/s" for f in counters)],
                speed_rows, title=f"count() throughput, one piece at a time (best of "
                                  f"{args.repeat})")
    write_json(args.json, {"accuracy": accuracy, "throughput": speed,
                           "min_piece_chars": MIN_PIECE_CHARS})


if __name__ == "__main__":
    main()
