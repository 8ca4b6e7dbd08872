"""``import precis`` time, measured in fresh interpreters (median of N runs).

    python bench/import_bench.py [--runs 15] [--json OUT]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import parser, print_table, write_json

PROBE = (
    "import time; t = time.perf_counter(); import {module}; "
    "print(time.perf_counter() - t)"
)


def measure(module: str, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", PROBE.format(module=module)],
                             capture_output=True, text=True, check=True)
        times.append(float(out.stdout.strip()) * 1000)
    return times


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--runs", type=int, default=15)
    args = p.parse_args()
    rows = []
    figures = {}
    for module in ("precis", "precis.cli._app", "json"):
        times = measure(module, args.runs)
        figures[module] = {"median_ms": statistics.median(times), "min_ms": min(times),
                           "max_ms": max(times)}
        rows.append([f"import {module}", statistics.median(times), min(times), max(times)])
    print(f"fresh interpreter, {args.runs} runs each ({sys.version.split()[0]})")
    print_table(["import", "median ms", "min ms", "max ms"], rows)
    ok = figures["precis"]["median_ms"] < 150
    print(f"target: import precis under 150 ms -> {figures['precis']['median_ms']:.1f} ms "
          f"({'met' if ok else 'NOT met'})")
    write_json(args.json, {"benchmark": "import_time", "runs": args.runs, "figures": figures})


if __name__ == "__main__":
    main()
