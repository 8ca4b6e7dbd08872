"""The note that stands where precis took content out of a working context (an *offload*),
and how to find one again: the runtime writes it (:mod:`precis.runtime.strategies`), a later
compaction must carry it, or the original could no longer be reloaded."""

from __future__ import annotations

import re

__all__ = ["OFFLOAD_NOTE", "offload_note"]

# ``[… offloaded, id=ctx-…; call context_reload("ctx-…") …]`` / ``[已卸载 …，id=ctx-…；…]``
OFFLOAD_NOTE = re.compile(r"\[[^\[\]\n]*context_reload\(\"([^\"]+)\"\)[^\[\]\n]*\]")


def offload_note(language: str, offload_id: str, what: str) -> str:
    """The note for ``what`` (e.g. ``12 earlier messages``) offloaded as ``offload_id``."""
    if language == "zh":
        return f"[已卸载 {what}，id={offload_id}；需要原文时调用 context_reload(\"{offload_id}\")]"
    return (f"[{what} offloaded, id={offload_id}; call context_reload(\"{offload_id}\") "
            "for the original]")
