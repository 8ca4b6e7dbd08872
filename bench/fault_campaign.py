"""The fault campaign: hostile input against every promise precis makes (issue 18).

Areas (each counts cases, expected errors, and bugs; the target is 0 bugs):

- ``parsers``: every field of every format's fixtures (and of the shared samples) replaced
  by each hostile value (a list or an object where text is expected, null, numbers, a lone
  surrogate, long text), through ``load`` -> ``segment`` -> both exporters; then inputs with
  one to three random fields made hostile, also compressed to a random budget and checked
  against both APIs' rules (``bench/_fault_parsers.py``);
- ``cli``: bad command lines run as real processes: exit code 2 with one line on stderr,
  never a traceback (``bench/_fault_cli.py``);
- ``compress``: generated histories (parallel calls, orphans, missing results, reused ids,
  thinking, images, Chinese) compressed at a level and to budgets for every output form:
  accepted by both APIs, every emitted form within its budget (``bench/_fault_compress.py``);
- ``runtime``: ``ContextMemory`` over generated agent sessions whose parallel results arrive
  one by one: paired after every ``add()``, within budget after every
  ``compress_if_needed()``, no stub beside a real result, ``context_reload`` always
  answering with text (``bench/_fault_runtime.py``);
- ``memory api``: every Memory method with arguments of every wrong type;
  ``search``: hostile queries (search syntax, SQL, control characters, surrogates);
  ``store``: writers killed with SIGKILL (every committed card kept, file intact) and 2-4
  concurrent writers (no write lost) (``bench/_fault_memory.py``).

A bug's first example is printed under the table. ``--quick`` runs a small version (the
test suite runs it); the default is the long one.

    python bench/fault_campaign.py [--quick] [--seed N] [--areas parsers,cli,...] [--json OUT]
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _fault_cli
import _fault_compress
import _fault_memory
import _fault_parsers
import _fault_runtime
from _common import api_rules, parser, print_table, write_json

AREAS = ("parsers", "cli", "compress", "runtime", "memory api", "search", "store")
LONG = {"parser_values": len(_fault_parsers.HOSTILE), "parser_random": 12_000,
        "histories": 2_400, "sessions": 500, "queries": 3_400, "kills": 30, "writers": 10,
        "cli_every": 1}
QUICK = {"parser_values": 1, "parser_random": 150, "histories": 20, "sessions": 6,
         "queries": 200, "kills": 1, "writers": 1, "cli_every": 8}


class Tally:
    """Cases, expected errors and bugs of one area, with the first example of each bug."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.examples: dict[str, str] = {}
        self.started = time.perf_counter()

    def add(self, outcome: str, detail: str = "", kind: str = "") -> None:
        self.counts["cases"] += 1
        if outcome == "expected":
            self.counts["expected"] += 1
        elif outcome == "bug":
            self.counts["bugs"] += 1
            self.examples.setdefault(kind or detail[:60], detail)

    def merge(self, counts: Counter[str], examples: dict[str, str], cases: str) -> None:
        self.counts["cases"] += counts[cases]
        self.counts["expected"] += counts["expected errors"]
        self.counts["bugs"] += counts["bugs"] + sum(
            v for k, v in counts.items() if k in ("over budget", "stub kept", "crash",
                                                  "result lost")
            or k.startswith("unpaired"))
        for kind, text in examples.items():
            if kind != "expected errors":
                self.examples.setdefault(kind, text)


def _parsers(sizes: dict[str, int], rng: random.Random, data: Path) -> Tally:
    tally = Tally()
    quick = sizes["parser_values"] < len(_fault_parsers.HOSTILE)
    pool = _fault_parsers.seeds(data if data.is_dir() and not quick else None)
    values = _fault_parsers.HOSTILE[: sizes["parser_values"]]
    for _, doc in _fault_parsers.every_field_cases(pool, values):
        outcome, detail = _fault_parsers.check_document(doc, budget=None)
        tally.add(outcome, detail)
    rules = api_rules()

    def api(openai: Any, anthropic: Any) -> list[str]:
        # a rule an input broke itself (a function name the API refuses, an empty system
        # prompt) is kept as written: only what precis makes (pairs, order, ids) counts
        errors = [*rules.openai_errors(openai), *rules.anthropic_errors(anthropic)]
        return [e for e in errors if "function name" not in e and not (
            "content is an empty string" in e or "tool_use without a name" in e)]

    for _, doc in _fault_parsers.random_cases(pool, sizes["parser_random"], rng):
        budget = rng.choice([None, 120, 300, 1000, 4000])
        outcome, detail = _fault_parsers.check_document(doc, budget=budget, api_errors=api)
        tally.add(outcome, detail)
    return tally


def _cli(sizes: dict[str, int], rng: random.Random, data: Path) -> Tally:
    tally = Tally()
    with tempfile.TemporaryDirectory() as tmp:
        cases = _fault_cli.cli_cases(Path(tmp))
        for n, (argv, expect) in enumerate(cases):
            if expect == "error" and n % sizes["cli_every"]:
                continue  # --quick: every n-th bad command line, and every good one
            outcome, detail = _fault_cli.run_case(argv, expect)
            tally.add(outcome, detail)
    return tally


def _compress(sizes: dict[str, int], rng: random.Random, data: Path) -> Tally:
    tally = Tally()
    base = rng.randrange(1 << 30)
    for n in range(sizes["histories"]):
        counts, examples = _fault_compress.check_history(base + n)
        tally.merge(counts, examples, "compress calls")
    return tally


def _runtime(sizes: dict[str, int], rng: random.Random, data: Path) -> Tally:
    tally = Tally()
    base = rng.randrange(1 << 30)
    for n in range(sizes["sessions"]):
        counts, examples = _fault_runtime.run_session(base + n, every_add=n % 2 == 0)
        counts["steps"] = counts["pairing checks"] + counts["budget checks"]
        tally.merge(counts, examples, "steps")
    from precis.runtime import ContextConfig, ContextMemory

    for n in range(max(1, sizes["sessions"] // 10)):  # context_reload, with offloads
        memory = ContextMemory(config=ContextConfig(max_tokens=2000, large_payload=500))
        for item in _fault_runtime.session(random.Random(base + n)):
            memory.add(item)
            memory.compress_if_needed()
        bad = _fault_runtime.check_reload(memory)
        for _ in _fault_runtime.reload_cases(memory):
            tally.add("expected")
        for detail in bad:
            tally.counts["bugs"] += 1
            tally.examples.setdefault("context_reload", detail)
    return tally


def _memory_api(sizes: dict[str, int], rng: random.Random, data: Path) -> Tally:
    from precis.memory import Memory

    tally = Tally()
    with tempfile.TemporaryDirectory() as tmp:
        memory = Memory(Path(tmp) / "api.sqlite3", embedder="none")
        memory.ingest(_fault_memory.EXAMPLE)
        for label, call in _fault_memory.api_cases():
            outcome, detail = _fault_memory.run_api_case(memory, call)
            tally.add(outcome, f"{label}: {detail}", label.split("(")[0])
        memory.close()
    return tally


def _search(sizes: dict[str, int], rng: random.Random, data: Path) -> Tally:
    from precis.memory import Memory

    tally = Tally()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "search.sqlite3"
        memory = Memory(path, embedder="none")
        memory.ingest(_fault_memory.EXAMPLE)
        before = memory.stats()["cards"]
        for query in _fault_memory.hostile_queries(sizes["queries"], rng):
            outcome, detail = _fault_memory.run_api_case(memory, lambda m, q=query: m.search(q))
            tally.add(outcome, f"{query!r:.40}: {detail}", "search")
        if memory.stats()["cards"] != before:
            tally.counts["bugs"] += 1
            tally.examples.setdefault("store changed", "a search changed the store")
        memory.close()
    return tally


def _store(sizes: dict[str, int], rng: random.Random, data: Path) -> Tally:
    tally = Tally()
    with tempfile.TemporaryDirectory() as tmp:
        for counts, examples in (
                _fault_memory.kill_during_ingest(Path(tmp), sizes["kills"], rng),
                _fault_memory.concurrent_writers(Path(tmp), sizes["writers"], rng)):
            tally.merge(counts, examples, "cases")
    return tally


RUNNERS = {"parsers": _parsers, "cli": _cli, "compress": _compress, "runtime": _runtime,
           "memory api": _memory_api, "search": _search, "store": _store}


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a small version (seconds)")
    p.add_argument("--seed", type=int, default=18)
    p.add_argument("--areas", default=",".join(AREAS),
                   help=f"comma-separated, of: {', '.join(AREAS)}")
    args = p.parse_args()
    areas = [a.strip() for a in args.areas.split(",") if a.strip()]
    unknown = [a for a in areas if a not in RUNNERS]
    if unknown:
        p.error(f"unknown area(s): {', '.join(unknown)}")
    sizes = QUICK if args.quick else LONG
    rng = random.Random(args.seed)
    rows: list[list[Any]] = []
    report: dict[str, Any] = {"seed": args.seed, "quick": args.quick, "areas": {}}
    for area in areas:
        tally = RUNNERS[area](sizes, random.Random(rng.randrange(1 << 30)), args.data)
        seconds = time.perf_counter() - tally.started
        c = tally.counts
        rows.append([area, c["cases"], c["expected"], c["bugs"], round(seconds, 1)])
        report["areas"][area] = {"cases": c["cases"], "expected_errors": c["expected"],
                                 "bugs": c["bugs"], "seconds": round(seconds, 1),
                                 "examples": tally.examples}
        print(f"{area}: {c['cases']} cases, {c['bugs']} bugs ({seconds:.0f} s)", flush=True)
    total = [sum(r[i] for r in rows) for i in (1, 2, 3, 4)]
    rows.append(["all", *total[:3], round(total[3], 1)])
    print()
    print_table(["area", "cases", "expected errors", "bugs", "seconds"], rows,
                title=f"fault campaign ({'quick' if args.quick else 'long'}, seed {args.seed})")
    for area, data in report["areas"].items():
        for kind, text in list(data["examples"].items())[:5]:
            print(f"bug in {area} ({kind}): {text}")
    report["bugs"] = total[2]
    write_json(args.json, report)
    return 1 if total[2] else 0


if __name__ == "__main__":
    sys.exit(main())
