"""The runnable example works end to end (no network, no LLM)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "subagents_demo.py"


def test_demo_fans_out_and_aggregates() -> None:
    done = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.count("--- prompt for ") == 3
    assert "## Sub-task results: 3 tasks (2 ok, 1 timeout)" in out
    assert "- docs-1 TIMEOUT" in out
    # the finding both sub-agents reported is listed once, naming both
    assert out.count("idx_orders_created_at 索引用不上 (explore-1, review-1)") == 3
