"""Replies of a model asked to rewrite a handover into prose (``compress(..., llm=...)``),
for the OpenAI stub server (``stub.reply = prose``)."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["handover_of", "prose"]

_HANDOVER = re.compile(r"<handover>\n(.*?)\n</handover>", re.DOTALL)


def handover_of(body: dict[str, Any]) -> str:
    """The rule handover the request's prompt holds."""
    found = _HANDOVER.search(body["messages"][1]["content"])
    assert found, body["messages"][1]["content"]
    return found.group(1)


def prose(body: dict[str, Any]) -> str:
    """A faithful rewrite: each section one paragraph of its lines (code blocks left out),
    citations kept."""
    paragraphs: list[str] = []
    for block in handover_of(body).split("## ")[1:]:
        title, _, lines = block.partition("\n")
        said = " ".join(line.strip().removeprefix("- ") for line in lines.splitlines()
                        if line.strip() and not line.strip().startswith("```"))
        paragraphs.append(f"{title}: {said}")
    return "\n\n".join(paragraphs)
