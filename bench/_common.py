"""Shared benchmark plumbing: data location, tables, JSON output, timing."""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data"


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--data", type=Path, default=DEFAULT_DATA,
                   help=f"the shared data folder (default: {DEFAULT_DATA})")
    p.add_argument("--json", type=Path, default=None, metavar="OUT",
                   help="also write the figures as JSON to OUT")
    p.add_argument("--plot", type=Path, default=None, metavar="PNG",
                   help="also draw the figures as a PNG chart (benchmarks that have one; "
                        "needs matplotlib from the bench extra)")
    return p


def require_data(data: Path, *parts: str) -> Path:
    path = data.joinpath(*parts)
    if not path.exists():
        print(f"skipped: {path} not found (pass --data PATH to the shared data folder)")
        sys.exit(0)
    return path


def best_of(fn: Callable[[], Any], repeat: int) -> tuple[float, list[float]]:
    """Best and all wall-clock times of ``repeat`` calls, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), times


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str = "") -> None:
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    if title:
        print(title)
    for n, row in enumerate(cells):
        print("  ".join(c.rjust(w) if n and _numeric(c) else c.ljust(w)
                        for c, w in zip(row, widths)))
        if n == 0:
            print("  ".join("-" * w for w in widths))


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 100 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _numeric(cell: str) -> bool:
    return cell.replace(",", "").replace(".", "").replace("%", "").replace("x", "").lstrip(
        "-").isdigit()


def write_json(path: Path | None, payload: dict[str, Any]) -> None:
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path}")


def write_outputs(args: argparse.Namespace, payload: dict[str, Any]) -> None:
    """The figures as JSON (``--json``) and as a chart (``--plot``, see ``_plot.py``)."""
    write_json(args.json, payload)
    if getattr(args, "plot", None) is not None:
        from _plot import plot

        plot(payload, args.plot)


def api_rules() -> ModuleType:
    """The independent OpenAI / Anthropic validators of tests/compact/_api_rules.py."""
    path = ROOT / "tests" / "compact" / "_api_rules.py"
    spec = importlib.util.spec_from_file_location("_api_rules_bench", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
