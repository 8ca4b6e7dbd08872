"""Information-loss check (seed 000 section 7): what the compacted output kept of the exact
facts (URLs, paths, commands, identifiers, numbers, error names) and of the HIGH fragments
of the messages it summarized.

Each distinct fact is counted once; it counts as kept when its exact text appears in the
output; a HIGH fragment counts as kept when a summary item cites it. When retention falls
below the configured floor, the compressor re-fits the summary with priority for the
fragments whose facts were lost.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from precis.compact._facts import FACT_KINDS

__all__ = ["Presence", "Retention", "measure_retention"]

_MISSING_SHOWN = 20
_SEPARATORS = re.compile(r"[\s`'\"(),;:=|\[\]{}<>，。；：（）、！？\u3400-\u9fff]+")
_TRAILING = ".:!?…"  # (a line cut at a word boundary ends in "…")
_TRAILING_ENDS = tuple(_TRAILING)


_WITH_UNIT = re.compile(r"^(\d[\d.,:]*\d|\d)[A-Za-z]{1,3}$")


class Presence:
    """``fact in Presence(text)``: whether the fact's exact text appears in ``text``.

    Facts without separators (most paths, numbers, ids) are looked up in a set of the
    text's separator-delimited pieces (linear in the text, constant per fact) instead of
    scanning the text once per fact, which would be quadratic on long outputs; only a fact
    holding separators itself (a command with spaces) is searched as a substring. A fact
    shown only inside a longer piece (``db.py`` within ``app/db.py``) does not count.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        pieces = set(_SEPARATORS.split(text))
        pieces.update([p.rstrip(_TRAILING) for p in pieces if p.endswith(_TRAILING_ENDS)])
        # the number of a flag (``comm -23``) or a negative number shows the number
        pieces.update([p.lstrip("-") for p in pieces if p[:1] == "-" and p[1:2].isdigit()])
        # a number with its unit ("0.42s", "100ms") shows the number, as the facts read it
        pieces.update([m.group(1) for p in pieces if p[:1].isdigit()
                       and (m := _WITH_UNIT.match(p)) is not None])
        self.pieces = pieces

    def __contains__(self, fact: object) -> bool:
        if not isinstance(fact, str):
            return False
        if fact in self.pieces:
            return True
        return _SEPARATORS.search(fact) is not None and fact in self.text


@dataclass(frozen=True)
class Retention:
    """Kept / total per fact kind, overall, and for HIGH fragments."""

    by_kind: dict[str, tuple[int, int]]
    high_kept: int
    high_total: int
    missing: tuple[str, ...] = ()
    # fragment id -> its facts that were lost (used by the re-fit)
    lost_in: dict[str, int] = field(default_factory=dict, compare=False, repr=False)

    @property
    def facts_kept(self) -> int:
        return sum(k for k, _ in self.by_kind.values())

    @property
    def facts_total(self) -> int:
        return sum(t for _, t in self.by_kind.values())

    @property
    def facts(self) -> float:
        """Share of exact facts kept (1.0 when there were none)."""
        total = self.facts_total
        return self.facts_kept / total if total else 1.0

    @property
    def high(self) -> float:
        return self.high_kept / self.high_total if self.high_total else 1.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "facts": round(self.facts, 4),
            "facts_kept": self.facts_kept,
            "facts_total": self.facts_total,
            "by_kind": {
                kind: {"kept": kept, "total": total,
                       "share": round(kept / total, 4) if total else 1.0}
                for kind, (kept, total) in self.by_kind.items()
            },
            "high_fragments": round(self.high, 4),
            "high_kept": self.high_kept,
            "high_total": self.high_total,
            "missing": list(self.missing),
        }


def measure_retention(
    high_facts: Iterable[tuple[str, str, str]],
    high_ids: Iterable[str],
    output: str,
    cited: set[str],
) -> Retention:
    """Retention in ``output`` (the whole output text) of ``high_facts`` (fact text, kind,
    id of the HIGH fragment holding it; each fact once) and of the HIGH fragments
    ``high_ids`` (kept when ``cited``)."""
    shown = Presence(output)
    counts = {kind: [0, 0] for kind in FACT_KINDS}
    missing: list[str] = []
    lost_in: dict[str, int] = {}
    for text, kind, fragment_id in high_facts:
        slot = counts[kind]
        slot[1] += 1
        if text in shown:
            slot[0] += 1
        else:
            lost_in[fragment_id] = lost_in.get(fragment_id, 0) + 1
            if len(missing) < _MISSING_SHOWN:
                missing.append(text)
    ids = list(high_ids)
    return Retention(
        by_kind={k: (v[0], v[1]) for k, v in counts.items() if v[1]},
        high_kept=sum(1 for i in ids if i in cited),
        high_total=len(ids),
        missing=tuple(missing),
        lost_in=lost_in,
    )
