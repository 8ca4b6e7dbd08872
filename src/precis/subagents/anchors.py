"""Anchors: the few things about the parent conversation a sub-agent must not get wrong.

Seed 003 gives anchors five letters, P/C/M/D/I. Its reference implementation names them
P 问题 (problem), C 约束 (constraint), M 模式 (pattern), D 决策 (decision) and I 接口
(interface); precis reads them as:

* **P problem**: what the work is about: the goal, the open to-dos, the errors to solve.
* **C constraint**: what must (not) be done: rules, limits, requirements in force.
* **M pattern**: what is known and should be followed or reused: facts found, the code as
  it is, background, the reasoning that explains a finding.
* **D decision**: what has been chosen: decisions and the agreed plan / next steps.
* **I interface**: what the work touches: files, paths, URLs, class and function names.

P, C, M and D items come from :func:`precis.analysis.analyze`: each fragment's type picks
its anchor (:data:`TYPE_ANCHORS`); superseded versions, later copies and folded
acknowledgements are left out; a kept duplicate names every copy as its source. I items
are the identifiers precis finds in the fragments (the same extractor the importance
scores use), ranked by how many fragments mention them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from precis.analysis import Analysis, AnalyzedFragment
from precis.analysis.importance import identifiers
from precis.analysis.model import FRAGMENT_TYPES, Level
from precis.errors import ConfigError, InputError
from precis.subagents._checks import (
    LEVELS,
    check_level,
    check_max_chars,
    check_text,
    level_rank,
)
from precis.subagents._text import one_line, truncate

__all__ = [
    "ANCHOR_KINDS",
    "ANCHOR_NAMES",
    "TYPE_ANCHORS",
    "AnchorItem",
    "AnchorKind",
    "anchors_from_analysis",
    "check_kind",
]

AnchorKind = Literal["P", "C", "M", "D", "I"]
ANCHOR_KINDS: tuple[AnchorKind, ...] = ("P", "C", "M", "D", "I")
ANCHOR_NAMES: Mapping[str, str] = {
    "P": "problem", "C": "constraint", "M": "pattern", "D": "decision", "I": "interface",
}

TYPE_ANCHORS: Mapping[str, AnchorKind | None] = {
    "goal": "P",
    "todo": "P",
    "error": "P",
    "constraint": "C",
    "fact": "M",
    "code": "M",
    "background": "M",
    "reasoning": "M",
    "decision": "D",
    "plan": "D",
    "chitchat": None,
}
"""The anchor of each precis fragment type (``None``: never an anchor)."""

# Fragment kinds whose text is not worth quoting as an anchor (their identifiers still
# count for I): tool-call arguments are JSON, images have no text.
_NOT_QUOTED = frozenset({"tool_call", "image"})
# Tool output and blocks (code, SQL, JSON, tables) are quoted at half the length of prose:
# a prompt fragment needs what they say, and their source ids lead to the full text.
_BLOCKS = frozenset({"tool_result", "code", "sql", "json", "table"})
_IDENT_TRIM = ".,;:!?。，；：！？)]}>'\""


def check_kind(value: object, where: str = "kind") -> AnchorKind:
    """``value`` as an anchor kind (``"d"`` is accepted as ``"D"``)."""
    if isinstance(value, str):
        name = value.strip().upper()
        for kind in ANCHOR_KINDS:
            if name == kind:
                return kind
    raise InputError(
        f"unknown anchor kind {value!r} (expected one of P, C, M, D, I: "
        + ", ".join(f"{k} {n}" for k, n in ANCHOR_NAMES.items()) + ")",
        where=where,
    )


@dataclass(frozen=True)
class AnchorItem:
    """One anchor: its kind (P/C/M/D/I), text, level and where it came from.

    ``fragment_ids`` are precis fragment ids (``S12``) and ``messages`` message indices
    of the parent conversation; ``type`` is the precis fragment type it was made from
    (``None`` for explicit items and interfaces).
    """

    kind: AnchorKind
    text: str
    level: Level = "MEDIUM"
    fragment_ids: tuple[str, ...] = ()
    messages: tuple[int, ...] = ()
    type: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", check_kind(self.kind, "anchor.kind"))
        check_text(self.text, "anchor.text", allow_empty=False)
        object.__setattr__(self, "level", check_level(self.level, "anchor.level"))
        ids = self.fragment_ids
        if isinstance(ids, str) or not isinstance(ids, Sequence) or not all(
            isinstance(x, str) for x in ids
        ):
            raise InputError(f"expected a sequence of fragment ids, got {ids!r}",
                             where="anchor.fragment_ids")
        messages = self.messages
        if isinstance(messages, str) or not isinstance(messages, Sequence) or not all(
            isinstance(m, int) and not isinstance(m, bool) and m >= 0 for m in messages
        ):
            raise InputError(f"expected a sequence of message indices >= 0, got {messages!r}",
                             where="anchor.messages")
        object.__setattr__(self, "fragment_ids", tuple(ids))
        object.__setattr__(self, "messages", tuple(messages))
        if self.type is not None:
            check_text(self.type, "anchor.type")

    @property
    def source(self) -> str:
        """Where the item came from, e.g. ``"S25, S29 (messages 13, 16)"``; may be empty."""
        out = ", ".join(self.fragment_ids)
        if self.messages:
            noun = "message" if len(self.messages) == 1 else "messages"
            where = f"{noun} {', '.join(map(str, self.messages))}"
            out = f"{out} ({where})" if out else where
        return out


def _check_mapping(mapping: Mapping[str, str | None]) -> dict[str, AnchorKind | None]:
    if not isinstance(mapping, Mapping):
        raise ConfigError("expected a table fragment type -> anchor kind",
                          where="type_anchors")
    unknown = sorted(set(mapping) - set(FRAGMENT_TYPES), key=str)
    if unknown:
        raise ConfigError(
            f"unknown fragment type(s) {unknown}; known: {', '.join(FRAGMENT_TYPES)}",
            where="type_anchors",
        )
    return {t: None if k is None else check_kind(k, f"type_anchors.{t}")
            for t, k in mapping.items()}


def anchors_from_analysis(
    analysis: Analysis,
    *,
    min_level: Level | str = "MEDIUM",
    type_anchors: Mapping[str, str | None] = TYPE_ANCHORS,
    max_item_chars: int = 240,
    max_interfaces: int = 12,
) -> tuple[AnchorItem, ...]:
    """The anchors of an analysed conversation: P/C/M/D items in conversation order, then
    up to ``max_interfaces`` I items in order of first mention.

    Fragments below ``min_level`` are left out; an item's text is the fragment on one line,
    cut to ``max_item_chars`` at a word boundary (half that for tool output and code
    blocks); its source ids lead to the full text.
    ``type_anchors`` maps fragment types to anchors (a type it leaves out gives none).
    """
    floor = level_rank(check_level(min_level, "min_level"))
    limit = check_max_chars(max_item_chars, "max_item_chars")
    if limit < 16:
        raise ConfigError(f"must be >= 16 characters, got {limit}", where="max_item_chars")
    top = check_max_chars(max_interfaces, "max_interfaces")
    mapping = _check_mapping(type_anchors)
    members: dict[str, tuple[str, ...]] = {}
    for group in analysis.consolidation.duplicates:
        members[group.kept] = group.members
    items = list(analysis.items())
    out: list[AnchorItem] = []
    for it in items:
        kind = mapping.get(it.type)
        if (kind is None or it.superseded_by is not None or it.folded
                or level_rank(it.level) > floor or it.fragment.kind in _NOT_QUOTED):
            continue
        cap = limit // 2 if it.fragment.kind in _BLOCKS else limit
        text = truncate(one_line(it.fragment.text), cap)
        if not text:
            continue
        ids = members.get(it.id, (it.id,))
        msgs = sorted({analysis.item(f).fragment.provenance.message for f in ids})
        out.append(AnchorItem(kind, text, it.importance.level, ids, tuple(msgs), it.type))
    out.extend(_interfaces(items, floor, top))
    return tuple(out)


def _interfaces(items: list[AnalyzedFragment], floor: int, top: int) -> list[AnchorItem]:
    """I items: identifiers mentioned by fragments at or above the level floor."""
    seen: dict[str, list[int]] = {}  # identifier -> positions of the fragments naming it
    shown: dict[str, str] = {}  # identifier -> its spelling in the first fragment
    for pos, it in enumerate(items):
        if it.type == "chitchat" or level_rank(it.level) > floor:
            continue
        text = it.fragment.text
        for ident in sorted(identifiers(text)):
            name = ident.rstrip(_IDENT_TRIM)
            if len(name) < 3:
                continue
            seen.setdefault(name, []).append(pos)
            if name not in shown:
                shown[name] = _spelling(text, name)
    # Most-mentioned first (a longer name before a shorter one it contains). A name inside
    # an accepted one that every fragment naming it also names adds nothing: the longer
    # one is mentioned at least as often, so it is always looked at first.
    sets = {n: set(p) for n, p in seen.items()}
    ranked: list[str] = []
    for n in sorted(seen, key=lambda n: (-len(sets[n]), seen[n][0], -len(n), n)):
        if len(ranked) >= top:
            break
        if not any(n in m and sets[n] <= sets[m] for m in ranked):
            ranked.append(n)
    out: list[AnchorItem] = []
    for name in sorted(ranked, key=lambda n: (seen[n][0], n)):
        positions = sorted(set(seen[name]))
        best = min(level_rank(items[p].level) for p in positions)
        out.append(AnchorItem(
            "I", shown[name], LEVELS[best],
            tuple(items[p].id for p in positions),
            tuple(sorted({items[p].fragment.provenance.message for p in positions})),
        ))
    return out


def _spelling(text: str, lowered: str) -> str:
    """``lowered`` as spelled in ``text`` (identifiers are found lower-cased)."""
    at = text.lower().find(lowered)
    if at >= 0 and text[at:at + len(lowered)].lower() == lowered:
        return text[at:at + len(lowered)]
    return lowered
