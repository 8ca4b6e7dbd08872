"""Analysis throughput (classification + consolidation + scoring) and its growth curve.

Sessions of 10k to 1M tokens are built reproducibly (``bench/session.py``), segmented once,
and analysed; the time excludes reading and segmentation (measured by parse_bench.py).
Single process, single thread: the figures are for one core.

    python bench/analysis_speed.py [--sizes 10000,50000,200000,1000000] [--json OUT]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import precis
from _common import parser, print_table, write_json
from precis.analysis import analyze
from session import _counter, build_session


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--sizes", default="10000,50000,100000,200000,500000,1000000")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    counter = _counter()
    rows, figures = [], []
    for size in (int(s) for s in args.sizes.split(",")):
        conv = precis.Conversation(messages=build_session(args.data, size))
        tokens = counter.count_messages(conv.messages)
        seg = precis.segment(conv)
        best: dict[str, float] = {}
        for _ in range(args.repeat):
            start = time.perf_counter()
            result = analyze(seg, conversation=conv)
            total = time.perf_counter() - start
            if not best or total < best["total"]:
                best = dict(result.timings, total=total)
        analysis_s = best["classify"] + best["consolidate"] + best["score"]
        rows.append([f"{tokens:,}", len(seg.fragments), best["classify"] * 1000,
                     best["consolidate"] * 1000, best["score"] * 1000, analysis_s * 1000,
                     tokens / analysis_s, analysis_s / tokens * 1e9])
        figures.append({"tokens": tokens, "fragments": len(seg.fragments),
                        "seconds": {k: best[k] for k in ("classify", "consolidate", "score")},
                        "analysis_seconds": analysis_s, "tokens_per_second": tokens / analysis_s})
    print(f"tokenizer {counter.name}; best of {args.repeat}; one core")
    print_table(["tokens", "fragments", "classify ms", "consolidate ms", "score ms",
                 "analysis ms", "tokens/s", "ns/token"], rows)
    per_token = [f["analysis_seconds"] / f["tokens"] for f in figures]
    print(f"growth: ns/token from {per_token[0] * 1e9:.0f} (smallest) to "
          f"{per_token[-1] * 1e9:.0f} (largest); flat = linear")
    write_json(args.json, {"benchmark": "analysis_speed", "sizes": figures})


if __name__ == "__main__":
    main()
