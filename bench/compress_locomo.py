"""LoCoMo answer retention: precis against three baselines at 25%, 10% and 5% budgets.

Every LoCoMo dev conversation (all sessions, with their dates) is compressed to a share of
its tokens (the rendered conversation, see ``_compress_common.render``, counted with
o200k_base from the shared tokenizers, else the estimator) by precis
(``precis.compact.compress(conv, budget=N, tokenizer=counter)``, output ``result.text()``)
and by the baselines of ``_baselines.py`` (keep the most recent messages, uniform sampling,
a sumy TextRank summary). A question of category 1-4 is retained when every content word of
its gold answer is a word of the output. ``full`` is the uncompressed conversation: the
ceiling of this measure. Targets: precis >= 3x keep_recent at 10%, >= 2x at 25%. Output
tokens / budget must stay <= 1.0 for every method.

    python bench/compress_locomo.py [--budgets 0.25,0.10,0.05] [--json OUT]
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import precis
from _baselines import BASELINES, Rendering
from _common import parser, print_table, write_outputs
from _compress_common import (
    CATEGORIES,
    counter,
    load_compress,
    locomo_conversations,
    locomo_questions,
    pct,
    retained,
)

TARGETS = {0.10: 3.0, 0.25: 2.0}


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--budgets", default="0.25,0.10,0.05",
                   help="shares of each conversation's tokens (comma-separated)")
    args = p.parse_args()
    shares = [float(s) for s in args.budgets.split(",")]
    convs = locomo_conversations(args.data)
    tok = counter()
    compress = load_compress()
    methods = (["precis"] if compress else []) + list(BASELINES)

    # (share, method) -> counts; share 1.0 / "full" is the uncompressed conversation
    kept: dict[tuple[float, str], dict[int, int]] = defaultdict(lambda: defaultdict(int))
    usage: dict[tuple[float, str], list[float]] = defaultdict(list)
    seconds: dict[tuple[float, str], float] = defaultdict(float)
    asked: dict[int, int] = defaultdict(int)
    per_conv: list[dict[str, Any]] = []
    errors: list[str] = []
    for conv in convs:
        questions = locomo_questions(conv)
        for q in questions:
            asked[q.category] += 1
        rendering = Rendering.of(conv, tok)
        total = rendering.tokens
        by_index = {q.index: q for q in questions}
        full = retained(questions, rendering.text)
        for i in full:
            kept[1.0, "full"][by_index[i].category] += 1
        record: dict[str, Any] = {"id": conv.id, "messages": len(conv), "tokens": total,
                                  "questions": len(questions), "full": len(full), "runs": []}
        for share in shares:
            budget = int(total * share)
            for method in methods:
                start = time.perf_counter()
                reported = None
                if method == "precis":
                    assert compress is not None
                    try:
                        result = compress(conv, budget=budget, tokenizer=tok)
                    except precis.PrecisError as exc:
                        errors.append(f"{conv.id} at {share:.0%}: {exc}")
                        continue
                    text = result.text()
                    reported = result.compressed_tokens
                else:
                    text = BASELINES[method](rendering, budget)
                seconds[share, method] += time.perf_counter() - start
                # precis's guarantee is on the message list it returns (what is sent);
                # a baseline's output is its text
                out_tokens = reported if reported is not None else tok.count(text)
                usage[share, method].append(out_tokens / budget)
                hits = retained(questions, text)
                for i in hits:
                    kept[share, method][by_index[i].category] += 1
                record["runs"].append({"share": share, "method": method, "budget": budget,
                                       "output_tokens": out_tokens, "reported_tokens": reported,
                                       "retained": len(hits)})
        per_conv.append(record)
        print(f"{conv.id}: {len(conv)} messages, {total:,} tokens, {len(questions)} questions")

    n = sum(asked.values())

    def share_of(key: tuple[float, str], category: int | None = None) -> float:
        counts = kept[key]
        if category is None:
            return sum(counts.values()) / n if n else 0.0
        return counts[category] / asked[category] if asked[category] else 0.0

    rows, figures = [], []
    for share, method in [(1.0, "full")] + [(s, m) for s in shares for m in methods]:
        key = (share, method)
        use = usage.get(key, [])
        rows.append([f"{share:.0%}", method, pct(share_of(key), 1)]
                    + [pct(share_of(key, c), 1) for c in CATEGORIES]
                    + [f"{max(use):.3f}" if use else "-", f"{seconds[key]:.2f}"])
        figures.append({"share": share, "method": method, "retention": share_of(key),
                        "by_category": {CATEGORIES[c]: share_of(key, c) for c in CATEGORIES},
                        "max_output_over_budget": max(use) if use else None,
                        "mean_output_over_budget": sum(use) / len(use) if use else None,
                        "seconds": seconds[key]})
    print(f"\ntokenizer {tok.name}; {len(convs)} conversations, {n} questions "
          f"(categories 1-4: {', '.join(f'{asked[c]} {CATEGORIES[c]}' for c in CATEGORIES)})")
    print_table(["budget", "method", "retained"] + [CATEGORIES[c] for c in CATEGORIES]
                + ["max out/budget", "seconds"], rows)

    ratios = {}
    if compress:
        print()
        ratio_rows = []
        for share in shares:
            base = share_of((share, "keep_recent"))
            ratio = share_of((share, "precis")) / base if base else float("inf")
            ratios[share] = ratio
            target = TARGETS.get(share)
            verdict = ("-" if target is None
                       else f">= {target:.0f}x: {'met' if ratio >= target else 'NOT met'}")
            ratio_rows.append([f"{share:.0%}", f"{ratio:.2f}x", verdict])
        print_table(["budget", "precis / keep_recent", "target"], ratio_rows)
    over = [f for f in figures if (f["max_output_over_budget"] or 0) > 1.0]
    if over:
        print("OVER BUDGET: " + ", ".join(f"{f['method']} at {f['share']:.0%}" for f in over))
    for line in errors:
        print(f"precis error: {line}")
    write_outputs(args, {
        "benchmark": "compress_locomo", "tokenizer": tok.name, "questions": n,
        "questions_by_category": {CATEGORIES[c]: asked[c] for c in CATEGORIES},
        "precis_available": compress is not None, "results": figures,
        "precis_over_keep_recent": {f"{s:.2f}": r for s, r in ratios.items()},
        "errors": errors, "conversations": per_conv,
    })


if __name__ == "__main__":
    main()
