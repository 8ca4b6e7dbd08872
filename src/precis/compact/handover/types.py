"""A section of the fragments of some types (a user template's ``types`` source): each in
the speaker's own words, by importance. The user's goal, rules and background come only
from what the user wrote."""

from __future__ import annotations

from precis.compact._digest import code_stub
from precis.compact.handover._fit import Entry
from precis.compact.handover._story import Story, clip

__all__ = ["build_types"]

_USER_ONLY = frozenset({"goal", "constraint", "background"})
_SPOKEN = frozenset({"sentence", "paragraph", "list_item", "heading"})
_CODE = frozenset({"code", "sql", "json", "table"})
_MAX = 20


def build_types(story: Story, key: str, types: tuple[str, ...]) -> list[Entry]:
    a = story.analysis
    frags = a.segmentation.fragments
    cons = a.consolidation
    picked: list[tuple[float, int]] = []
    for i in story.range:
        f = frags[i]
        kind = a.classifications[i].type
        if kind not in types or f.id in cons.superseded_by or f.id in cons.folded:
            continue
        if kind in _USER_ONLY and f.role != "user":
            continue
        if f.kind not in _SPOKEN and f.kind not in _CODE:
            continue
        if a.importance[i].level == "LOW" or len(f.text.strip()) < story.chars(16):
            continue  # ("Final day." is no decision)
        picked.append((a.importance[i].score, i))
    picked.sort(reverse=True)
    out: list[Entry] = []
    for score, i in picked[:_MAX]:
        f = frags[i]
        if f.kind in _CODE:
            variants: tuple[str, ...] = (code_stub(f.text, f.kind, f.lang_hint, story.language),)
        else:
            variants = tuple(dict.fromkeys((story.core(f.text, 300), clip(f.text, 120))))
        out.append(Entry(key, f.provenance.message + i / 1e6, 2.0 + score, variants, (f.id,),
                         kind=a.classifications[i].type,
                         why=f"a {a.classifications[i].type} the {f.role} wrote"))
    return out
