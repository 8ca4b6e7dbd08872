"""Offloaded content: a note precis left where it took content out of a working context
(``[… offloaded, id=ctx-…; call context_reload("ctx-…") …]``) is carried by every later
compaction that summarizes it, with the head of what it stood in for: without it the
original could no longer be reloaded."""

from __future__ import annotations

import re

from precis._offload import OFFLOAD_NOTE
from precis.compact.handover._fit import Entry
from precis.compact.handover._story import Story, clip
from precis.model import Part, Text, ToolCall, ToolResult

__all__ = ["KEY", "TITLES", "build_offloads"]

KEY = "offloads"
TITLES = {"en": "Offloaded (reload with context_reload)",
          "zh": "已卸载的内容（用 context_reload 取回）"}
_CALL_OFFLOAD = re.compile(r"\"_offloaded\":\s*\"([^\"]+)\"")


def _text(part: Part) -> str:
    if isinstance(part, (Text, ToolResult)):
        return part.text
    if isinstance(part, ToolCall):
        return part.arguments
    return ""


def build_offloads(story: Story) -> list[Entry]:
    out: list[Entry] = []
    seen: set[str] = set()
    for m in range(story.start, story.end):
        for p, part in enumerate(story.conv.messages[m].parts):
            text = _text(part)
            if "context_reload" not in text and "_offloaded" not in text:
                continue
            found = [(n.group(1), n.group(0), text[: n.start()])
                     for n in OFFLOAD_NOTE.finditer(text)]
            found += [(n.group(1), f'context_reload("{n.group(1)}")', "")
                      for n in _CALL_OFFLOAD.finditer(text)]
            for ident, note, before in found:
                if ident in seen:
                    continue
                seen.add(ident)
                first = before.strip().splitlines()[0].lstrip("-*• ") if before.strip() else ""
                variants = tuple(dict.fromkeys(f"{clip(first, n)} {note}".strip()
                                               for n in (100, 40)))
                sources = tuple(f for f in story.fragments_of.get(m, ())
                                if f in story.part_fragments(m, p)) or tuple(
                    story.fragments_of.get(m, ())[:1])
                if sources:
                    # the shortest still names what was offloaded: what to reload
                    out.append(Entry(KEY, m, 9.0, variants, sources, critical=True,
                                     kind="offload", why="a note that leads to offloaded content"))
    return out
