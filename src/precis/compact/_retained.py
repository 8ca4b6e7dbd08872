"""What the quality check measures a summary against: the exact facts of the summarized
range's HIGH fragments (each fact once, where it first appears, fragments by priority)."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence

from precis.analysis import Analysis
from precis.compact._facts import exact_facts
from precis.segment.model import Fragment

__all__ = ["fact_scan", "high_facts", "priority"]

_LEVEL_BONUS = {"HIGH": 2.0, "MEDIUM": 1.0, "LOW": 0.0}
_TOOL_OUTPUT_PENALTY = 1.0
_FACT_SCAN_CHARS = 2000  # exact facts are looked for in the head of long tool output
_CALL_SCAN_CHARS = 8000  # ... and of each argument of a long tool call


def priority(analysis: Analysis, i: int) -> float:
    """Importance without its recency part (a summary covers the whole past; what is recent
    is kept verbatim); raw tool output and pictures a little lower (the talk about them says
    more)."""
    imp = analysis.importance[i]
    value = imp.score - imp.factors.get("recency", 0.0) + _LEVEL_BONUS[imp.level]
    kind = analysis.segmentation.fragments[i].kind
    if kind == "image" or (kind == "tool_result"
                           and analysis.classifications[i].type != "error"):
        value -= _TOOL_OUTPUT_PENALTY
    return value


def fact_scan(fragment: Fragment) -> str:
    """The part of a fragment searched for exact facts: the head of a long text; of a tool
    call's arguments (JSON: what the agent did) a longer head of each string, so that they
    still decode."""
    text = fragment.text
    if len(text) <= _FACT_SCAN_CHARS:
        return text
    if fragment.kind == "tool_call" and text.lstrip()[:1] in ("{", "["):
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if isinstance(value, (dict, list)):
            return json.dumps(_clip_strings(value), ensure_ascii=False)
    return text[:_FACT_SCAN_CHARS]


def _clip_strings(value: object) -> object:
    if isinstance(value, str):
        return value[:_CALL_SCAN_CHARS]
    if isinstance(value, dict):
        return {k: _clip_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clip_strings(v) for v in value]
    return value


def high_facts(analysis: Analysis, fragments_in_range: Sequence[int], prior: Collection[int],
               homes: dict[str, list[int]] | None = None) -> list[tuple[str, str, int]]:
    """``(fact, kind, fragment index)`` for the exact facts of the HIGH fragments of the
    range, each fact once; of an earlier summary (messages ``prior``) only its items count
    (its header and overview are rebuilt). ``homes`` (when given) collects, per fact, every
    HIGH fragment holding it, by priority."""
    frags = analysis.segmentation.fragments
    high = sorted((i for i in fragments_in_range if analysis.importance[i].level == "HIGH"
                   and (frags[i].provenance.message not in prior
                        or frags[i].kind == "list_item")),
                  key=lambda i: (-priority(analysis, i), -i))
    found_in: dict[str, list[int]] = {} if homes is None else homes
    out: list[tuple[str, str, int]] = []
    for i in high:
        for fact in exact_facts(fact_scan(frags[i])):
            if fact.kind == "command" and (fact.text.isalpha() or not any(
                    c.isalnum() for c in fact.text)):
                continue  # a shell keyword (done, fi), a word in backticks, a brace
            found = found_in.get(fact.text)
            if found is None:
                found_in[fact.text] = [i]
                out.append((fact.text, fact.kind, i))
            elif found[-1] != i:
                found.append(i)
    return out
