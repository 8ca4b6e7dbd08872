"""Pin the public API of precis.subagents and keep ``import precis`` light."""

from __future__ import annotations

import subprocess
import sys

import precis.subagents


def test_exported_names() -> None:
    assert sorted(precis.subagents.__all__) == sorted([
        "ANCHOR_KINDS", "ANCHOR_NAMES", "COMPACT_CHARS", "DEFAULT_PROMPT_CHARS", "LEVELS",
        "NORMAL_CHARS", "STATUSES", "TYPE_ANCHORS", "AnchorItem", "AnchorKind", "Compressed",
        "ContextSnapshot", "Mark", "MergedMark", "ResultAggregator", "Status", "TaskPrompt",
        "TaskResult", "anchors_from_analysis", "compress_by_importance", "mark",
    ])
    for name in precis.subagents.__all__:
        assert hasattr(precis.subagents, name), name


def test_anchor_letters_and_defaults() -> None:
    assert precis.subagents.ANCHOR_KINDS == ("P", "C", "M", "D", "I")
    assert dict(precis.subagents.ANCHOR_NAMES) == {
        "P": "problem", "C": "constraint", "M": "pattern", "D": "decision", "I": "interface"}
    assert (precis.subagents.NORMAL_CHARS, precis.subagents.COMPACT_CHARS) == (2000, 500)


def test_import_precis_does_not_load_subagents() -> None:
    code = "import sys, precis; print('precis.subagents' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False"
