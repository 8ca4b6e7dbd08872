"""Idempotence: what one compression keeps, three repeated compressions still keep.

Every agent session (as in ``compress_facts.py``) and every LoCoMo dev conversation is
compressed to 20% of its rendered tokens (pass 1); ``result.messages`` becomes a new
conversation and is compressed again with the same absolute budget, three passes in all.
Tracked items: for agent sessions the exact facts of the HIGH fragments
(``_compress_common.extract_facts``, present verbatim in ``result.text()``); for LoCoMo the
retained answers (categories 1-4, every content word of the gold answer in the output).
Reported per file: items after pass 1, after pass 3, lost (kept by pass 1, gone after pass
3) and gained. Target: nothing lost.

    python bench/compress_idempotence.py [--share 0.2] [--budget-rule all|rest] [--json OUT]
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import precis
from _baselines import BUDGET_RULES, Rendering
from _common import parser, print_table, write_json
from _compress_common import (
    LOCOMO,
    agent_sessions,
    counter,
    fact_present,
    high_facts,
    load_compress,
    locomo_conversations,
    locomo_questions,
    retained,
)

PASSES = 3


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--share", type=float, default=0.2, help="budget as a share of the tokens")
    p.add_argument("--budget-rule", choices=BUDGET_RULES, default="all",
                   help="all: share of all tokens; rest: system prompt + share of the rest")
    args = p.parse_args()
    compress = load_compress()
    if compress is None:
        print("skipped: nothing to measure without precis.compact")
        return
    tok = counter()
    work: list[tuple[str, str, precis.Conversation]] = [
        (s.file, s.label, s.conversation) for s in agent_sessions(args.data)]
    locomo_file = "/".join(LOCOMO)
    work += [(locomo_file, f"{locomo_file}#{c.id}", c) for c in locomo_conversations(args.data)]

    files: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"sessions": 0, "refused": 0, "items": 0, "pass1": 0, "pass3": 0, "lost": [],
                 "gained": 0, "stable_bytes": 0})
    errors: list[str] = []
    for file, label, conv in work:
        info = files[file]
        budget = Rendering.of(conv, tok).budget(args.share, args.budget_rule)
        texts: list[str] = []
        current = conv
        try:
            for _ in range(PASSES):
                result = compress(current, budget=budget, tokenizer=tok)
                texts.append(result.text())
                current = precis.Conversation(messages=list(result.messages))
        except precis.PrecisError as exc:
            errors.append(f"{label} (pass {len(texts) + 1}): {exc}")
            info["refused"] += 1
            continue
        first, last, items = _tracked(file == locomo_file, conv, texts[0], texts[-1])
        lost = sorted(first - last)
        info["sessions"] += 1
        info["items"] += items
        info["pass1"] += len(first)
        info["pass3"] += len(last)
        info["gained"] += len(last - first)
        info["lost"].extend(f"{label.rsplit('#', 1)[-1]}: {x}" if "#" in label else x
                            for x in lost)
        info["stable_bytes"] += texts[1] == texts[2]

    rows = []
    for file, info in files.items():
        rows.append([file, info["sessions"], info["refused"], info["items"], info["pass1"],
                     info["pass3"], len(info["lost"]), info["gained"],
                     f"{info['stable_bytes']}/{info['sessions']}"])
    lost_total = sum(len(i["lost"]) for i in files.values())
    rows.append(["all", sum(i["sessions"] for i in files.values()),
                 sum(i["refused"] for i in files.values()),
                 sum(i["items"] for i in files.values()),
                 sum(i["pass1"] for i in files.values()),
                 sum(i["pass3"] for i in files.values()), lost_total,
                 sum(i["gained"] for i in files.values()),
                 f"{sum(i['stable_bytes'] for i in files.values())}/"
                 f"{sum(i['sessions'] for i in files.values())}"])
    print(f"tokenizer {tok.name}; budget {args.share:.0%} ({args.budget_rule}); "
          f"{PASSES} passes; items: exact facts (agent sessions), retained answers (LoCoMo)")
    print_table(["file", "sessions", "refused", "items", "after pass 1", "after pass 3",
                 "lost", "gained", "pass 2 == pass 3"], rows)
    verdict = "met" if not lost_total else "NOT met"
    print(f"\nlost across passes: {lost_total} (target 0: {verdict})")
    for file, info in files.items():
        if info["lost"]:
            print(f"lost in {file}: " + "; ".join(info["lost"][:10]))
    for line in errors:
        print(f"precis error: {line}")
    write_json(args.json, {
        "benchmark": "compress_idempotence", "tokenizer": tok.name, "share": args.share,
        "budget_rule": args.budget_rule, "passes": PASSES,
        "files": {f: {k: v for k, v in i.items()} for f, i in files.items()},
        "lost_total": lost_total, "errors": errors,
    })


def _tracked(locomo: bool, conv: precis.Conversation, first_text: str,
             last_text: str) -> tuple[set[str], set[str], int]:
    """Items kept after the first and the last pass (named for the report), and how many."""
    if locomo:
        questions = locomo_questions(conv)
        names = {q.index: f"Q{q.index} {q.answer!r}" for q in questions}
        return ({names[i] for i in retained(questions, first_text)},
                {names[i] for i in retained(questions, last_text)}, len(questions))
    facts = high_facts(conv)
    return ({f"{f.kind} {f.value!r}" for f in facts if fact_present(f, first_text)},
            {f"{f.kind} {f.value!r}" for f in facts if fact_present(f, last_text)}, len(facts))


if __name__ == "__main__":
    main()
