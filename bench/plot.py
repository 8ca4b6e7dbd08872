"""Draw the PNG chart of benchmark results written with ``--json``.

    python bench/plot.py RESULT.json [RESULT.json ...] [-o DIR]

Each file's chart goes to ``DIR/<benchmark>.png`` (default ``docs/img``, where README's
charts live). The same chart as the benchmark's own ``--plot PNG``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT
from _plot import CHARTS, plot


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("results", nargs="+", type=Path, metavar="RESULT.json")
    p.add_argument("-o", "--out", type=Path, default=ROOT / "docs" / "img", metavar="DIR")
    args = p.parse_args()
    for path in args.results:
        try:
            payload = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError) as exc:
            p.error(f"{path}: {exc}")
        name = payload.get("benchmark") if isinstance(payload, dict) else None
        if name not in CHARTS:
            charts = ", ".join(sorted(CHARTS))
            p.error(f"{path}: no chart for benchmark {name!r} (charts: {charts})")
        plot(payload, args.out / f"{name}.png")


if __name__ == "__main__":
    main()
