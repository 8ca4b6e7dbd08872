"""The specification the work follows, as the agent read it: the text an issue tracker
showed for the items of this work (``bd show X``, ``gh issue view N``): the item in progress
first, then the open ones and their parent. Its rules and acceptance criteria (lines that
say must / never / only / keep, or stand under a heading that names constraints,
acceptance, requirements or no-gos) go first; then what it says to build."""

from __future__ import annotations

import re

from precis.compact.handover._fit import Entry
from precis.compact.handover._story import Story, clip, output_of
from precis.compact.handover.work import relevant_items
from precis.events import Action, TaskItem

__all__ = ["build_spec"]

_RULE = re.compile(r"\b(?:must|must not|never|don't|do not|no |only|keep|should|shall|"
                   r"required?|forbidden|avoid|without|not allowed|exactly)\b|"
                   r"不要|不能|必须|只能|禁止|保持", re.IGNORECASE)
_RULE_HEADING = re.compile(r"constraint|acceptance|requirement|no-go|rule|rabbit|edge case|"
                           r"definition of done|spec|goal|problem|约束|验收|要求|目标",
                           re.IGNORECASE)
_SKIP_HEADING = re.compile(r"source reference|children|parent|blocks|depends|owner|created",
                           re.IGNORECASE)
_HEADING = re.compile(r"^\s*(?:#+\s*(.+)|([A-Z][A-Za-z /-]{2,40}):\s*$|([A-Z][A-Z /-]{3,40})\s*$)")
_META = re.compile(r"^\s*(?:Owner|Created|Updated|Type|Status|Priority|Assignee)\b.*:", re.I)


def _spec_lines(text: str, skip_title: bool = True) -> list[tuple[float, int, str]]:
    """(weight, position, line) for the lines of a tracker item's text worth keeping (the
    first line is the item's title, which is shown apart)."""
    out: list[tuple[float, int, str]] = []
    heading = ""
    first = 1 if skip_title else 0
    lead = 0.0  # weight the lines under a rule take from it
    for k, raw in enumerate(text.splitlines()[first:], start=first):
        line = raw.strip()
        if not line or _META.match(line) or re.match(r"^[↳↑←→]", line):
            continue
        m = _HEADING.match(line)
        if m:
            heading = next(g for g in m.groups() if g)
            lead = 0.0
            if _RULE.search(heading):  # "Render button text exactly:" is a rule, not a title
                out.append((2.5, k, line.lstrip("#").strip()))
                lead = 1.5
            continue
        if _SKIP_HEADING.search(heading):
            continue
        body = line.lstrip("-*• ").strip()
        if len(body) < 8 and not lead:
            continue
        weight = 1.0 + lead
        if _RULE_HEADING.search(heading):
            weight += 2.0
        if _RULE.search(body):
            weight += 1.5
        if body.startswith(("GIVEN", "Given", "WHEN")):
            weight += 1.0
        out.append((weight, k, body))
        # a rule that ends with a colon is spelled out by the lines under it
        if body.endswith((":", "：")) and weight >= 2.5:
            lead = 1.5
        elif not raw.startswith((" ", "\t")) and not line.startswith(("-", "*", "•")):
            lead = 0.0
    return out


def digest_lines(text: str, limit: int, skip_title: bool = True) -> str:
    """The lines of a structured text (a tracker item, a plan) worth keeping within
    ``limit`` characters: rules and acceptance criteria first (see the module docs), in
    their order, joined by `` · ``."""
    return _digest(text, limit, skip_title)


def _digest(text: str, limit: int, skip_title: bool = True) -> str:
    picked: list[tuple[int, str]] = []
    used = 0
    for _, k, line in sorted(_spec_lines(text, skip_title), key=lambda t: (-t[0], t[1])):
        cost = len(line) + 3
        if used + cost > limit:
            continue
        picked.append((k, line))
        used += cost
    return " · ".join(line for _, line in sorted(picked))


_TITLE = r"^[^\w\n]*{id}\s+[·:|-]"
_ANY_TITLE = re.compile(_TITLE.format(id=r"[A-Za-z][\w]*-[a-z0-9]{2,}(?:\.\d+)*") + r"|^=+\s*$",
                        re.MULTILINE)


def _own_part(text: str, ident: str) -> str:
    """The part of a tracker's output that shows item ``ident`` (a command may show several
    items, one after another): from its title line to the next item's title or a ``===``
    separator; the whole text when no title line names it."""
    m = re.search(_TITLE.format(id=re.escape(ident)), text, re.MULTILINE)
    if m is None:
        return text
    nxt = _ANY_TITLE.search(text, m.end())
    return text[m.start(): nxt.start() if nxt else None]


def _shown(story: Story) -> dict[str, Action]:
    """Item id -> the last tracker command that showed that item's own text."""
    out: dict[str, Action] = {}
    for a in story.actions:
        if a.kind != "tracker" or a.status == "failed":
            continue
        words = a.target.split()
        for ident in re.findall(r"[A-Za-z][\w]*-[a-z0-9]{2,}(?:\.\d+)*|#\d+", a.target):
            if any(w in ("show", "view") for w in words):
                out[ident] = a
    return out


def build_spec(story: Story, key: str) -> list[Entry]:
    out: list[Entry] = []
    shown = _shown(story)
    items: list[TaskItem] = relevant_items(story)
    for k, item in enumerate(items):
        if not item.id or item.id not in shown:
            continue
        a = shown[item.id]
        text = output_of(story.conv, a)
        text = _own_part(text, item.id)
        if not text.strip():
            continue
        if item.done:
            priority = 3.5
        elif item.status == "in_progress":
            priority = 7.5 if "." in item.id else 6.0
        else:
            priority = 6.5 if "." in item.id else 6.0
        title = clip(item.text, 90)
        sizes = (320, 160) if item.done else (1400, 700, 320)  # a done item matters less
        variants = tuple(dict.fromkeys(
            f"{item.id} ({title}): {_digest(text, n)}".rstrip(": ") for n in sizes))
        sources = a.result_fragments or a.call_fragments[:1]
        if sources:
            out.append(Entry(key, k, priority, variants, sources, kind="spec",
                             why=f"what the tracker says {item.id} must do"))
    return out
