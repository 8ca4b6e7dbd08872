"""Emitted output against the budget (issue 18, item 6): ``precis compress FILE -b N -t TOK
-O FORM -o OUT`` on the shared real transcripts, for every ``--output``; what was written is
counted the way a user would (a message list read back by precis and counted with its
framing, a report as text; the JSON's message list and its text, the larger) and compared
with the budget and with the figure precis reported on stderr.

    python bench/emitted_budget.py [--budgets 8000,2000] [--tokenizer o200k_base] [--json OUT]

A run is *over* when what was written counts more than the budget, *under-reported* when
precis said fewer tokens than it wrote. Target: 0 of either.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import precis
from _common import parser, print_table, require_data, write_json

FORMS = ("openai", "anthropic", "markdown", "json")
# collections: the conversation picked (the same for every run)
PICKS = {"bashkit-eval-claude-opus-4-7.json": 2, "openhands-multi-swe-bench.output.jsonl": 2,
         "tau-bench-gpt-4o-airline-first100.json": 2, "sharegpt-zh-first500.jsonl": 2}


def written_tokens(path: Path, form: str, counter: precis.TokenCounter) -> int:
    text = path.read_text(encoding="utf-8")
    if form == "markdown":
        return counter.count(text)
    if form == "json":
        data = json.loads(text)
        return max(counter.count_messages(precis.load(data["messages"]).messages),
                   counter.count(data["compressed_prompt"]))
    return counter.count_messages(precis.load(path, format=form).messages)


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--budgets", default="8000,2000")
    p.add_argument("--tokenizer", default="o200k_base")
    args = p.parse_args()
    root = require_data(args.data, "transcripts")
    files = sorted(f for f in root.glob("*/*") if f.suffix in (".json", ".jsonl", ".traj"))
    counter = precis.get_counter(args.tokenizer)
    budgets = [int(b) for b in args.budgets.split(",")]
    rows: list[list[Any]] = []
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for form in FORMS:
            over = under = done = 0
            worst = 0
            for file in files:
                for budget in budgets:
                    out = Path(tmp) / f"out.{form}"
                    pick = ["--pick", str(PICKS[file.name])] if file.name in PICKS else []
                    proc = subprocess.run(
                        [sys.executable, "-m", "precis", "compress", str(file), "-b",
                         str(budget), "-t", args.tokenizer, "-O", form, "-o", str(out), *pick],
                        capture_output=True, text=True, env=dict(os.environ))
                    if proc.returncode != 0:
                        runs.append({"file": file.name, "budget": budget, "form": form,
                                     "error": proc.stderr.strip()})
                        continue
                    done += 1
                    n = written_tokens(out, form, counter)
                    reported = int(proc.stderr.split(" -> ")[1].split(" tokens")[0])
                    over += n > budget
                    under += n > reported
                    worst = max(worst, n - budget)
                    runs.append({"file": file.name, "budget": budget, "form": form,
                                 "written": n, "reported": reported})
            rows.append([form, done, over, under, worst])
    print_table(["--output", "runs", "over budget", "under-reported", "most over (tokens)"],
                rows, title=f"emitted output vs budget ({args.tokenizer}, budgets "
                            f"{args.budgets}, {len(files)} transcripts)")
    write_json(args.json, {"tokenizer": args.tokenizer, "budgets": budgets, "runs": runs})
    return 0


if __name__ == "__main__":
    sys.exit(main())
