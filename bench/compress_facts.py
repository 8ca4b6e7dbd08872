"""Exact-fact retention on the agent sessions at a 20% budget: precis against keep_recent.

Facts are the paths, shell commands, numbers (two digits or more, or a decimal point), ids
(ticket ids, hex ids of 7+ characters, UUIDs, codes like ``ZFA04Y``) and URLs found by this
benchmark's own regular expressions (``_compress_common.extract_facts``) in the fragments
``precis.analysis.analyze`` rates HIGH. Each session (a file holding several conversations
gives several; tau-bench: the first 20) is compressed to 20% of its rendered tokens
(o200k_base from the shared tokenizers, else the estimator; ``--budget-rule rest``: the
system prompt plus 20% of the other tokens). Score: the share of the facts present
verbatim in ``result.text()`` (or JSON-escaped, as inside tool-call arguments), and the
same for the keep_recent baseline at the same budget. A session whose budget precis refuses
(smaller than the system prompt it always keeps) is left out for both methods and counted
as refused. Target: precis >= 95%.

    python bench/compress_facts.py [--share 0.2] [--budget-rule all|rest] [--json OUT]
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import precis
from _baselines import BUDGET_RULES, Rendering, keep_recent
from _common import parser, print_table, write_json
from _compress_common import (
    FACT_KINDS,
    Fact,
    agent_sessions,
    counter,
    fact_present,
    high_facts,
    load_compress,
    pct,
)

TARGET = 0.95
METHODS = ("precis", "keep_recent")


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--share", type=float, default=0.2, help="budget as a share of the tokens")
    p.add_argument("--budget-rule", choices=BUDGET_RULES, default="all",
                   help="all: share of all tokens; rest: system prompt + share of the rest")
    p.add_argument("--show-missing", type=int, default=10, metavar="N",
                   help="print up to N facts precis lost per file")
    args = p.parse_args()
    sessions = agent_sessions(args.data)
    tok = counter()
    compress = load_compress()
    methods = [m for m in METHODS if m != "precis" or compress]
    if not sessions:
        print("skipped: no agent sessions found")
        return

    # file -> method -> kind -> [present, total]
    tally: dict[str, dict[str, dict[str, list[int]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(lambda: [0, 0])))
    files: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"sessions": 0, "refused": 0, "tokens": 0, "facts": 0, "usage": defaultdict(list),
                 "missing": [], "seconds": defaultdict(float)})
    errors: list[str] = []
    for session in sessions:
        conv = session.conversation
        facts = sorted(high_facts(conv))
        rendering = Rendering.of(conv, tok)
        total = rendering.tokens
        budget = rendering.budget(args.share, args.budget_rule)
        info = files[session.file]
        outputs: dict[str, tuple[str, int]] = {}
        if compress:
            start = time.perf_counter()
            try:
                result = compress(conv, budget=budget, tokenizer=tok)
            except precis.PrecisError as exc:
                errors.append(f"{session.label}: {exc}")
                info["refused"] += 1
                continue
            info["seconds"]["precis"] += time.perf_counter() - start
            outputs["precis"] = (result.text(), result.compressed_tokens)
        start = time.perf_counter()
        outputs["keep_recent"] = (keep_recent(rendering, budget), 0)
        info["seconds"]["keep_recent"] += time.perf_counter() - start
        info["sessions"] += 1
        info["tokens"] += total
        info["facts"] += len(facts)
        for method, (text, reported) in outputs.items():
            info["usage"][method].append(max(tok.count(text), reported) / budget)
            for fact in facts:
                present = fact_present(fact, text)
                counts = tally[session.file][method][fact.kind]
                counts[0] += present
                counts[1] += 1
                if method == "precis" and not present:
                    info["missing"].append(_describe(session.label, fact))

    def share(file: str | None, method: str, kind: str | None = None) -> tuple[int, int]:
        present = total = 0
        for f, by_method in tally.items():
            if file is not None and f != file:
                continue
            for k, (hit, n) in by_method[method].items():
                if kind is None or k == kind:
                    present += hit
                    total += n
        return present, total

    rows = []
    for file, info in files.items():
        row = [file, info["sessions"], info["refused"], info["tokens"], info["facts"]]
        for method in methods:
            row.append(pct(*share(file, method)))
        for method in methods:
            use = info["usage"][method]
            row.append(f"{max(use):.3f}" if use else "-")
        rows.append(row)
    all_row: list[Any] = ["all", sum(i["sessions"] for i in files.values()),
                          sum(i["refused"] for i in files.values()),
                          sum(i["tokens"] for i in files.values()),
                          sum(i["facts"] for i in files.values())]
    all_row += [pct(*share(None, m)) for m in methods]
    all_row += [f"{max(u for i in files.values() for u in i['usage'][m]):.3f}"
                if any(i["usage"][m] for i in files.values()) else "-" for m in methods]
    rows.append(all_row)
    rule = ("of each session's rendered tokens" if args.budget_rule == "all"
            else "of each session's non-system tokens + the system prompt")
    print(f"tokenizer {tok.name}; budget {args.share:.0%} {rule}")
    print_table(["file", "sessions", "refused", "tokens", "facts"] + [f"{m} kept" for m in methods]
                + [f"{m} max out/budget" for m in methods], rows)
    print()
    print_table(["fact kind", "facts"] + [f"{m} kept" for m in methods],
                [[kind, share(None, methods[0], kind)[1]]
                 + [pct(*share(None, m, kind)) for m in methods] for kind in FACT_KINDS])
    if compress:
        hit, n = share(None, "precis")
        rate = hit / n if n else 0.0
        print(f"\nprecis exact-fact retention {rate:.1%} (target >= {TARGET:.0%}: "
              f"{'met' if rate >= TARGET else 'NOT met'})")
        for file, info in files.items():
            if info["missing"] and args.show_missing:
                print(f"lost in {file} ({len(info['missing'])}): "
                      + "; ".join(info["missing"][:args.show_missing]))
    for line in errors:
        print(f"precis error: {line}")
    write_json(args.json, {
        "benchmark": "compress_facts", "tokenizer": tok.name, "share": args.share,
        "budget_rule": args.budget_rule,
        "precis_available": compress is not None, "target": TARGET,
        "overall": {m: dict(zip(("present", "total"), share(None, m))) for m in methods},
        "by_kind": {k: {m: dict(zip(("present", "total"), share(None, m, k))) for m in methods}
                    for k in FACT_KINDS},
        "files": {
            f: {"sessions": i["sessions"], "refused": i["refused"], "tokens": i["tokens"],
                "facts": i["facts"],
                "kept": {m: dict(zip(("present", "total"), share(f, m))) for m in methods},
                "max_output_over_budget": {m: max(i["usage"][m], default=None)
                                           for m in methods},
                "seconds": dict(i["seconds"]), "precis_missing": i["missing"][:200]}
            for f, i in files.items()},
        "errors": errors,
    })


def _describe(label: str, fact: Fact) -> str:
    value = fact.value if len(fact.value) <= 80 else fact.value[:77] + "..."
    return f"{fact.kind} {value!r}" + (f" ({label.rsplit('#', 1)[1]})" if "#" in label else "")


if __name__ == "__main__":
    main()
