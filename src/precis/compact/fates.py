"""Where each fragment of the input went, read from a CompressionResult's JSON.

A compaction keeps some messages verbatim (``origin``), summarizes fragments into summary
items that cite them (``summary.short`` / ``summary.sections[].items[].sources``) and
drops others with a reason (``dropped``). :func:`fragment_fate` tells one fragment's fate
from those published fields alone; :func:`explain_result` does it for every fragment of the
conversation, with the fragment's type, importance and the factors behind them, and adds
the token flow: tokens before and after for each summary section, for the recent messages
kept verbatim and for what was dropped. ``precis explain``, the service's ``/v1/compress``
(with ``explain``) and the web page all read fates from here, so none depends on how the
summary is built.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from precis.analysis import Analysis, explain
from precis.model import Conversation
from precis.tokens import TokenCounter

__all__ = ["explain_result", "fragment_fate"]

Result = Mapping[str, Any]


def _items(result: Result) -> list[tuple[str, str, int, dict[str, Any]]]:
    """(section key, title, index, item) of every summary item, the short ones first."""
    summary = result.get("summary") or {}
    out = [("short", "short", i, item) for i, item in enumerate(summary.get("short") or [])]
    for section in summary.get("sections") or []:
        out.extend((section["key"], section["title"], i, item)
                   for i, item in enumerate(section.get("items") or []))
    return out


class _Index:
    """The fields of a result that fates are read from, indexed once."""

    def __init__(self, result: Result) -> None:
        self.output = {m: i for i, m in reversed(list(enumerate(result.get("origin") or [])))
                       if m is not None}
        prompt = result.get("compressed_prompt")
        self.prompt = prompt if isinstance(prompt, str) else None
        self.into: dict[str, list[dict[str, Any]]] = {}
        for key, title, i, item in _items(result):
            for sid in dict.fromkeys(item.get("sources") or []):
                self.into.setdefault(sid, []).append(
                    {"section": key, "title": title, "item": i, "text": item.get("text", ""),
                     **({"why": item["why"]} if item.get("why") else {})})
        self.reason: dict[str, str] = {}
        for reason, ids in (result.get("dropped") or {}).items():
            for sid in ids:
                self.reason.setdefault(sid, reason)

    def fate(self, fragment_id: str, message: int, role: str, text: str | None
             ) -> dict[str, Any]:
        if message in self.output:
            where = self.output[message]
            if text and self.prompt is not None and text not in self.prompt:
                return {"status": "shortened", "output_message": where}
            return {"status": "kept", "output_message": where}
        fate: dict[str, Any] = {}
        if fragment_id in self.into:
            fate = {"status": "summarized", "into": self.into[fragment_id]}
        if fragment_id in self.reason:
            fate.setdefault("status", "dropped")
            fate["reason"] = self.reason[fragment_id]
        return fate or {"status": "system" if role == "system" else "omitted"}


def fragment_fate(result: Result, fragment_id: str, message: int, role: str,
                  text: str | None = None) -> dict[str, Any]:
    """Where fragment ``fragment_id`` (of input message ``message``, said by ``role``) went.

    ``status`` is ``kept`` (its message is in the output verbatim: ``output_message``),
    ``shortened`` (its message is in the output, cut to fit the budget, without this
    part: ``text`` tells), ``summarized`` (``into``: the summary items that cite it, as
    ``{"section", "title", "item", "text"}``), ``dropped`` (``reason``), ``system`` (a
    system prompt) or ``omitted`` (in none of these). A fragment both cited and dropped
    for a reason (a repeat) is ``summarized`` and keeps the ``reason``.
    """
    return _Index(result).fate(fragment_id, message, role, text)


def _cite(sources: Sequence[str]) -> str:
    return f" [{', '.join(sources)}]" if sources else ""


def explain_result(result: Result, analysis: Analysis, counter: TokenCounter) -> dict[str, Any]:
    """Every fragment of ``analysis`` (the compressed conversation's) with its fate, and the
    token flow by summary section, verbatim tail and dropped fragments (``counter``: the
    result's tokenizer).

    ``fragments``: ``{"id", "message", "role", "kind", "text", "tokens", "type", "level",
    "score", "factors", "why", "status", ...}`` with the fate's fields (see
    :func:`fragment_fate`). ``flow``: ``{"sections": [{"key", "title", "before", "after",
    "items"}], "tail": {"messages", "before", "after"}, "dropped": {"fragments",
    "before"}, "system": {...}}``: ``before`` counts the fragments involved (each fragment
    once per section that cites it), ``after`` the section's lines as the summary renders
    them (``## title`` and ``- text [S1, S2]``).
    """
    index = _Index(result)
    fragments: list[dict[str, Any]] = []
    tokens: dict[str, int] = {}
    for analyzed in analysis.items():
        frag = analyzed.fragment
        p = frag.provenance
        tokens[analyzed.id] = counter.count(frag.text)
        row: dict[str, Any] = {
            "id": analyzed.id, "message": p.message, "role": frag.role, "kind": frag.kind,
            "text": frag.text, "tokens": tokens[analyzed.id], "type": analyzed.type,
            "level": analyzed.level, "score": round(analyzed.importance.score, 4),
            "factors": {k: round(v, 4) for k, v in analyzed.importance.factors.items()},
            "why": explain(analyzed),
        }
        row.update(index.fate(analyzed.id, p.message, frag.role, frag.text))
        fragments.append(row)

    sections: list[dict[str, Any]] = []
    for key, title, _, item in _items(result):
        if not sections or sections[-1]["key"] != key:
            sections.append({"key": key, "title": title, "before": 0, "after":
                             counter.count(f"## {title}") if key != "short" else 0,
                             "items": 0, "_seen": set()})
        section = sections[-1]
        sources = list(item.get("sources") or [])
        section["after"] += counter.count(f"- {item.get('text', '')}{_cite(sources)}")
        section["items"] += 1
        for sid in sources:
            if sid in tokens and sid not in section["_seen"]:
                section["_seen"].add(sid)
                section["before"] += tokens[sid]
    for section in sections:
        del section["_seen"]

    conv = analysis.conversation
    tail = [(i, m) for i, m in zip(result.get("origin") or [], result.get("messages") or [])
            if i is not None and conv.messages[i].role != "system"]
    before = sum(counter.count(_message_text(m)) for i, _ in tail
                 for m in Conversation(messages=[conv.messages[i]]).to_openai())
    flow = {
        "sections": sections,
        "tail": {"messages": len(tail), "before": before,
                 "after": sum(counter.count(_message_text(m)) for _, m in tail)},
        "dropped": {"fragments": sum(1 for f in fragments if f["status"] == "dropped"),
                    "before": sum(f["tokens"] for f in fragments if f["status"] == "dropped")},
    }
    return {"fragments": fragments, "flow": flow}


def _message_text(message: Mapping[str, Any]) -> str:
    """The text of an output message in the OpenAI shape (content and tool-call arguments)."""
    content = message.get("content")
    if isinstance(content, list):
        text = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    else:
        text = str(content or "")
    for call in message.get("tool_calls") or []:
        fn = call.get("function") or {}
        text += f"\n{fn.get('name', '')} {fn.get('arguments', '')}"
    return text
