"""``CompressionResult``: the compacted message list, its summary, figures and records;
as JSON (schema: ``compression_result.schema.json``), Markdown, or an API message list.

JSON output is deterministic: the same input gives the same bytes, except ``timings``
(left out with ``timings=False``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from precis.compact._rewrite import LLMRewrite
from precis.compact.handover.check import HandoverCheck
from precis.compact.quality import Retention
from precis.compact.summary import Summary
from precis.formats.export import to_anthropic, to_openai
from precis.model import Message, ToolCall, ToolResult

__all__ = ["SCHEMA_VERSION", "CompressionResult", "render_messages", "result_schema"]

SCHEMA_VERSION = "1"


def render_messages(messages: list[Message]) -> str:
    """The messages as plain text, the way a model reads them: ``role: text`` blocks, tool
    calls as ``name(arguments)``, tool results with their call id."""
    blocks: list[str] = []
    for message in messages:
        speaker = message.role + (f" ({message.name})" if message.name else "")
        lines: list[str] = []
        for part in message.parts:
            if isinstance(part, ToolCall):
                lines.append(f"-> {part.name}({part.arguments})")
            elif isinstance(part, ToolResult):
                lines.append(f"<- {part.name or part.call_id}: {part.content}")
            else:
                lines.append(part.text)
        blocks.append(f"{speaker}: " + "\n".join(lines))
    return "\n\n".join(blocks)


@dataclass
class CompressionResult:
    """What :func:`precis.compact.compress` returns.

    ``messages`` is the list to send (system prompt, summary message, recent messages); it
    is valid for the OpenAI and Anthropic APIs. ``origin[i]`` is the index in the input of
    ``messages[i]`` (``None`` for the summary and for messages precis inserted).
    ``dropped`` maps a reason to the ids of fragments that are in neither the summary nor
    the kept messages. ``handover`` is the handover's check of what matters (every user
    message in it, current work, next step, exact values verbatim; None for a timeline).
    ``llm`` says what the model asked to rewrite the summary into prose did (None when no
    model was given).
    """

    messages: list[Message]
    origin: list[int | None]
    summary: Summary | None
    original_tokens: int
    compressed_tokens: int
    level: str
    budget: int | None
    template: str
    tokenizer: str
    language: str
    kept_messages: int
    summarized_count: int
    dropped_count: int
    system_prompt_preserved: bool
    timestamp: str | None
    retention: Retention | None
    dropped: dict[str, list[str]] = field(default_factory=dict)
    repairs: list[str] = field(default_factory=list)
    fragments_total: int = 0
    input_messages: int = 0
    source: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    handover: HandoverCheck | None = None
    llm: LLMRewrite | None = None

    @property
    def ratio(self) -> float:
        """original / compressed tokens (``5.6`` means 5.6 times smaller)."""
        return round(self.original_tokens / self.compressed_tokens, 2) if self.compressed_tokens \
            else 0.0

    def text(self) -> str:
        """The whole compacted context as text (``compressed_prompt``)."""
        return render_messages(self.messages)

    def to_openai(self) -> list[dict[str, Any]]:
        return to_openai(self.messages)

    def to_anthropic(self) -> dict[str, Any]:
        return to_anthropic(self.messages)

    def to_dict(self, *, timings: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "compressed_prompt": self.text(),
            "original_tokens": self.original_tokens,
            "compressed_tokens": self.compressed_tokens,
            "ratio": self.ratio,
            "kept_messages": self.kept_messages,
            "summarized_count": self.summarized_count,
            "dropped_count": self.dropped_count,
            "compression_level": self.level,
            "budget": self.budget,
            "system_prompt_preserved": self.system_prompt_preserved,
            "timestamp": self.timestamp,
            "messages": self.to_openai(),
            "origin": self.origin,
            "template": self.template,
            "tokenizer": self.tokenizer,
            "language": self.language,
            "input_messages": self.input_messages,
            "fragments_total": self.fragments_total,
            "summary": self.summary.to_dict() if self.summary else None,
            "retention": self.retention.to_dict() if self.retention else None,
            "dropped": {reason: ids for reason, ids in sorted(self.dropped.items())},
            "repairs": self.repairs,
            "source": self.source,
        }
        if self.handover is not None:
            out["handover"] = self.handover.to_dict()
        if self.llm is not None:
            out["llm"] = self.llm.to_dict()
        if timings:
            out["timings_ms"] = {k: round(v * 1000, 3) for k, v in self.timings.items()}
        return out

    def to_json(self, *, timings: bool = True, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(timings=timings), ensure_ascii=False, indent=indent)

    def to_markdown(self) -> str:
        """A report for people: figures, the system prompt, the summary, and the recent
        messages kept (headings in the conversation's language)."""
        kept = [m for m, o in zip(self.messages, self.origin) if o is not None]
        system = [m for m in kept if m.role == "system"]
        recent = [m for m in kept if m.role != "system"]
        headings = _HEADINGS["zh" if self.language == "zh" else "en"]
        lines = [
            "# precis compaction",
            "",
            f"- level: {self.level}" + (f", budget {self.budget} tokens" if self.budget else ""),
            f"- tokens: {self.original_tokens} -> {self.compressed_tokens} "
            f"({self.ratio}x, {self.tokenizer})",
            f"- messages: {self.input_messages} in; {self.kept_messages} kept verbatim, "
            f"{self.summarized_count} summarized, {self.dropped_count} dropped",
            "- system prompt: " + (f"kept ({len(system)} message{'s' * (len(system) != 1)})"
                                   if self.system_prompt_preserved else "none in the input"),
        ]
        if self.retention:
            r = self.retention
            lines.append(
                f"- retention: exact facts {r.facts_kept}/{r.facts_total} ({r.facts:.0%}), "
                f"HIGH fragments cited {r.high_kept}/{r.high_total} ({r.high:.0%})"
            )
        if self.handover:
            lines.append(f"- handover check: {self.handover.describe()}")
        if self.llm:
            lines.append(f"- llm rewrite: {self.llm.describe()}")
        if system:
            lines += ["", headings["system"], ""]
            lines += ["\n\n".join(render_messages([m]).split(": ", 1)[1] for m in system)]
        if self.summary:
            lines += ["", self.summary.render()]
        if recent:
            lines += ["", "---", "", headings["recent"].format(n=len(recent))]
            for message in recent:
                lines += ["", f"**{message.role}**" + (f" ({message.name})" if message.name
                                                        else ""), "",
                          render_messages([message]).split(": ", 1)[1]]
        return "\n".join(lines) + "\n"


_HEADINGS = {
    "en": {"system": "## System prompt", "recent": "## Recent messages ({n})"},
    "zh": {"system": "## 系统提示", "recent": "## 最近消息（{n} 条）"},
}


def result_schema() -> dict[str, Any]:
    """The JSON schema of :meth:`CompressionResult.to_dict` (draft 2020-12)."""
    from importlib import resources

    text = resources.files("precis.compact").joinpath("compression_result.schema.json")
    schema: dict[str, Any] = json.loads(text.read_text("utf-8"))
    return schema
