"""The progressive compaction strategies of seed 004, lightest first, plus a last resort.

Each strategy looks at the working messages and either returns a :class:`Step` (the new
list, what it replaced, what it offloaded) or ``None`` when it has nothing to do. They never
touch system messages, the latest final assistant reply, or the user message that opened the
current round, and the context manager repairs tool pairs after every step. Summaries come
from the rule engine (precis's own digests and compaction); when an LLM is configured, the
``summarize`` callback asks it first and falls back to the rule text.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, partial

from precis._offload import offload_note
from precis.compact._digest import _tool_result_digest, core_text, tool_call_digest
from precis.errors import ConfigError
from precis.model import Conversation, Message, Part, Text, ToolCall, ToolResult
from precis.runtime.config import ContextConfig
from precis.tokens import TokenCounter

__all__ = ["STRATEGY_FUNCTIONS", "Outcome", "Step", "Summarize", "View"]


@dataclass(frozen=True)
class Outcome:
    """A summary and how it was made (the LLM's, or the rule engine's)."""

    text: str
    used_llm: bool = False
    llm_tokens: int = 0
    error: str | None = None


# summarize(slot, content, rule_text) -> Outcome; slot is one of seed 004's four prompts
Summarize = Callable[[str, str, Callable[[], str]], Outcome]


@dataclass
class Step:
    """What one strategy did."""

    messages: list[Message]
    first: int  # first index of the rewritten range in the old list
    last: int  # last index (inclusive)
    replaced: int
    offloads: dict[str, list[Message]] = field(default_factory=dict)
    outcomes: list[Outcome] = field(default_factory=list)
    note: str = ""


@dataclass(frozen=True)
class View:
    """The working messages and the regions the strategies may touch (each region is
    worked out once per view)."""

    messages: list[Message]
    config: ContextConfig
    counter: TokenCounter
    language: str
    summarize: Summarize

    @cached_property
    def first(self) -> int:
        """The first message after the leading system messages."""
        i = 0
        while i < len(self.messages) and self.messages[i].role == "system":
            i += 1
        return i

    @cached_property
    def round_start(self) -> int:
        """The latest user message that is not tool output (the current round starts)."""
        for i in range(len(self.messages) - 1, -1, -1):
            m = self.messages[i]
            if m.role == "user" and not m.tool_results:
                return i
        return self.first

    @cached_property
    def reply(self) -> int | None:
        """The latest final assistant reply (text, no tool calls)."""
        for i in range(len(self.messages) - 1, -1, -1):
            m = self.messages[i]
            if m.role == "assistant" and not m.tool_calls and m.text.strip():
                return i
        return None

    @cached_property
    def requested(self) -> frozenset[int]:
        """Messages holding the answer to a ``context_reload`` call: the agent asked for
        that text back, so the current-round strategies leave it whole."""
        reload_ids = {c.id for m in self.messages for c in m.tool_calls
                      if c.name == "context_reload"}
        return frozenset(i for i, m in enumerate(self.messages)
                         if any(r.call_id in reload_ids for r in m.tool_results))

    def history_end(self, keep_last: int) -> int:
        """End of the history region: before the latest reply and the current round, and
        before the last ``keep_last`` messages."""
        end = self.round_start
        if self.reply is not None:
            end = min(end, self.reply)
        return max(self.first, min(end, len(self.messages) - keep_last))


def _new_id() -> str:
    return "ctx-" + uuid.uuid4().hex[:12]


def _is_tool_message(m: Message) -> bool:
    return m.role == "tool" or (m.role == "assistant" and bool(m.tool_calls))


def _closed(messages: Sequence[Message], start: int, end: int) -> bool:
    """Whether every call in ``messages[start:end]`` is answered inside it and every result
    there answers a call inside it."""
    calls = {c.id for m in messages[start:end] for c in m.tool_calls}
    results = {r.call_id for m in messages[start:end] for r in m.tool_results}
    return calls == results


def _rule_tool_digest(messages: Sequence[Message], language: str) -> str:
    names = {c.id: c.name for m in messages for c in m.tool_calls}
    lines: list[str] = []
    for m in messages:
        for part in m.parts:
            if isinstance(part, ToolCall):
                lines.append("- " + tool_call_digest(part, 160, language))
            elif isinstance(part, ToolResult):
                lines.append("  → " + _tool_result_digest(part, part.content, 160, language,
                                                          names.get(part.call_id)))
            elif isinstance(part, Text) and part.text.strip():
                lines.append("  " + core_text(part.text, 160, language))
    return "\n".join(lines)


def tool_runs(view: View) -> Step | None:
    """1. Runs of at least ``min_consecutive_tool`` historical tool messages become one
    assistant message with what was called and what came back."""
    msgs = view.messages
    end = view.history_end(view.config.last_keep)
    i = view.first
    while i < end:
        if not _is_tool_message(msgs[i]):
            i += 1
            continue
        j = i
        while j < end and _is_tool_message(msgs[j]):
            j += 1
        while j > i and not _closed(msgs, i, j):  # never split a call from its result
            j -= 1
        if j - i >= view.config.min_consecutive_tool:
            run = msgs[i:j]
            offload_id = _new_id()
            outcome = view.summarize("tool_runs", _plain(run),
                                     partial(_rule_tool_digest, run, view.language))
            note = offload_note(view.language, offload_id, f"{len(run)} tool messages")
            text = f"{outcome.text}\n{note}"
            summary = Message("assistant", [Text(text)],
                              metadata={"precis": "tool_runs", "offload_id": offload_id})
            return Step([*msgs[:i], summary, *msgs[j:]], i, j - 1, len(run),
                        {offload_id: run}, [outcome])
        i = max(j, i + 1)
    return None


def _offload_large(view: View, region: Sequence[int], label: str) -> Step | None:
    msgs = list(view.messages)
    cfg = view.config
    offloads: dict[str, list[Message]] = {}
    touched: list[int] = []
    for i in region:
        m = msgs[i]
        if _size(m) <= cfg.large_payload or m.metadata.get("precis"):
            continue
        offload_id = _new_id()
        offloads[offload_id] = [m]
        msgs[i] = _with_preview(m, offload_id, cfg.preview_chars, view.language)
        touched.append(i)
    if not touched:
        return None
    return Step(msgs, touched[0], touched[-1], len(touched), offloads, note=label)


def offload_protected(view: View) -> Step | None:
    """2. Large historical messages are offloaded; the latest reply, the current round and
    the last ``last_keep`` messages stay."""
    return _offload_large(view, range(view.first, view.history_end(view.config.last_keep)),
                          "recent messages protected")


def offload(view: View) -> Step | None:
    """3. Large messages of the history are offloaded, the last ``last_keep`` too; only the
    latest reply (and the current round, which strategies 5 and 6 handle) stay."""
    return _offload_large(
        view, [i for i in range(view.first, view.round_start) if i != view.reply],
        "only the latest reply protected",
    )


def summarize_rounds(view: View) -> Step | None:
    """4. Everything before the latest reply becomes one summary (precis's compaction of
    those rounds; the LLM's summary when one is configured)."""
    msgs = view.messages
    start, end = view.first, view.history_end(0)
    while end > start and not _closed(msgs, start, end):
        end -= 1
    if end - start < 2:
        return None
    rounds = msgs[start:end]
    tokens = view.counter.count_messages(rounds)
    budget = max(96, min(int(tokens * view.config.current_round_ratio),
                         view.config.budget // 4))

    def rule() -> str:
        from precis.compact import compress

        result = compress(Conversation(messages=list(rounds)), budget=budget + 64,
                          keep_last=0, tokenizer=view.counter)
        return "\n\n".join(m.text for m in result.messages if m.role != "system")

    outcome = view.summarize("summarize_rounds", _plain(rounds), rule)
    offload_id = _new_id()
    note = offload_note(view.language, offload_id, f"{len(rounds)} earlier messages")
    text = f"{outcome.text}\n{note}"
    summary = Message("user", [Text(text)],
                      metadata={"precis": "summary", "offload_id": offload_id})
    return Step([*msgs[:start], summary, *msgs[end:]], start, end - 1, len(rounds),
                {offload_id: rounds}, [outcome])


def current_large(view: View) -> Step | None:
    """5. Large messages of the current round are summarized; originals offloaded."""
    cfg = view.config
    return _shrink_round(view, "current_large", lambda i, m: (
        _size(m) > cfg.large_payload and i != view.reply and not m.metadata.get("precis")))


def current_round(view: View) -> Step | None:
    """6. Every message of the current round after the request is cut to
    ``current_round_ratio`` of its size (tool results and texts alike)."""
    cfg = view.config
    return _shrink_round(view, "current_round", lambda i, m: (
        _size(m) > cfg.preview_chars * 2 and m.metadata.get("precis") != "shrunk"))


def _shrink_round(view: View, slot: str, wanted: Callable[[int, Message], bool]
                  ) -> Step | None:
    """Summarize the ``wanted`` messages of the current round to ``current_round_ratio``
    of their size, offloading the originals (a requested reload is never cut)."""
    msgs = list(view.messages)
    offloads: dict[str, list[Message]] = {}
    outcomes: list[Outcome] = []
    touched: list[int] = []
    for i in range(view.round_start + 1, len(msgs)):
        m = msgs[i]
        if i in view.requested or not wanted(i, m):
            continue
        limit = max(view.config.preview_chars, int(_size(m) * view.config.current_round_ratio))
        offload_id = _new_id()
        offloads[offload_id] = [m]
        msgs[i], outcome = _shrunk(m, limit, offload_id, view, slot)
        outcomes.append(outcome)
        touched.append(i)
    if not touched:
        return None
    return Step(msgs, touched[0], touched[-1], len(touched), offloads, outcomes)


def fit(view: View) -> Step | None:
    """Last resort: precis compacts the whole working context to the budget (kept recent
    messages verbatim, the rest as a cited summary), so the context always fits. The note
    that names the offloaded originals is part of what fits: the compaction is asked for
    the budget less the note's tokens (and less again in the rare case that is not
    enough)."""
    msgs = view.messages
    budget = view.config.budget
    # keep few enough recent messages verbatim that the message threshold is met too; when
    # only the count is over, a smaller budget makes the older messages one summary
    keep = max(1, min(view.config.last_keep, view.config.msg_threshold // 2))
    if len(msgs) >= view.config.msg_threshold:
        budget = min(budget, max(128, int(view.counter.count_messages(msgs) * 0.6)))
    offload_id = _new_id()
    widest = offload_note(view.language, offload_id, f"{len(msgs)} earlier messages")
    # the recent messages kept with their long parts cut get a preview and an offload id
    # of their own; when those previews do not fit, the cut messages stay as compress made
    # them (they fit by construction)
    for previews in (True, False):
        reserve = view.counter.count(widest) + 1
        for _ in range(3):
            try:
                out, replaced, cut = _fit_once(view, budget - reserve, keep, offload_id,
                                               previews)
            except ConfigError:  # too small a budget for a summary and the note: no note
                out, replaced, cut = _fit_once(view, budget, keep, None, previews)
            over = view.counter.count_messages(out) - budget
            if over <= 0:
                break
            reserve += over + 4
        if over <= 0:
            break
    offloads = {**cut, **({offload_id: replaced} if replaced else {})}
    return Step(out, view.first, len(msgs) - 1, len(replaced), offloads,
                note=f"compacted to {budget} tokens")


def _fit_once(view: View, budget: int, keep: int, offload_id: str | None, previews: bool
              ) -> tuple[list[Message], list[Message], dict[str, list[Message]]]:
    """The working context compacted to ``budget`` with the offload note (when
    ``offload_id`` is given) added to the summary; the messages it replaced; and the
    originals of the recent messages it kept with their long parts cut, by offload id."""
    from precis.compact import compress

    msgs = view.messages
    result = compress(Conversation(messages=list(msgs)), budget=budget, keep_last=keep,
                      tokenizer=view.counter)
    out = list(result.messages)
    body = [m for m in msgs if m.role != "system"]
    replaced = body[: max(0, len(body) - result.kept_messages)]
    cut: dict[str, list[Message]] = {}
    for j, (m, o) in enumerate(zip(out, result.origin)):
        if previews and o is not None and m.metadata.get("precis") == "shortened":
            # a recent message kept with its long parts cut: the original stays reloadable
            cut_id = _new_id()
            cut[cut_id] = [msgs[o]]
            out[j] = _with_preview(msgs[o], cut_id, view.config.preview_chars, view.language)
    first = next((i for i, m in enumerate(out) if m.role != "system"), None)
    if offload_id and replaced and first is not None and result.summarized_count:
        note = offload_note(view.language, offload_id, f"{len(replaced)} earlier messages")
        summary = out[first]
        out[first] = Message(summary.role, [*summary.parts, Text(note)],
                             metadata={**summary.metadata, "precis": "summary",
                                       "offload_id": offload_id})
    return out, replaced, cut


STRATEGY_FUNCTIONS: dict[str, Callable[[View], Step | None]] = {
    "tool_runs": tool_runs,
    "offload_protected": offload_protected,
    "offload": offload,
    "summarize_rounds": summarize_rounds,
    "current_large": current_large,
    "current_round": current_round,
    "fit": fit,
}


# -- helpers ------------------------------------------------------------------------------


def _size(m: Message) -> int:
    return sum(len(_part_text(p)) for p in m.parts)


def _part_text(part: Part) -> str:
    if isinstance(part, ToolCall):
        return part.arguments
    if isinstance(part, ToolResult):
        return part.content
    return getattr(part, "text", "") or ""


def _plain(messages: Sequence[Message]) -> str:
    lines = []
    for m in messages:
        for p in m.parts:
            if isinstance(p, ToolCall):
                lines.append(f"[{m.role} calls {p.name}] {p.arguments}")
            elif isinstance(p, ToolResult):
                lines.append(f"[tool result{' (error)' if p.is_error else ''}] {p.content}")
            elif isinstance(p, Text):
                lines.append(f"[{m.role}] {p.text}")
    return "\n".join(lines)


def _preview(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[:chars].rstrip() + "…"


def _with_preview(m: Message, offload_id: str, chars: int, language: str) -> Message:
    """``m`` with each large part cut to a preview plus the offload note; calls keep their
    ids and names (results stay paired)."""
    note = offload_note(language, offload_id, f"{_size(m):,} characters")
    parts: list[Part] = []
    for p in m.parts:
        if isinstance(p, ToolResult):
            parts.append(ToolResult(p.call_id, f"{_preview(p.content, chars)}\n{note}",
                                    p.is_error, p.name))
        elif isinstance(p, ToolCall) and len(p.arguments) > chars:
            parts.append(ToolCall(p.id, p.name, json.dumps(
                {"_offloaded": offload_id, "preview": _preview(p.arguments, chars)},
                ensure_ascii=False)))
        elif isinstance(p, Text) and len(p.text) > chars:
            parts.append(Text(f"{_preview(p.text, chars)}\n{note}"))
        else:
            parts.append(p)
    return Message(m.role, parts, id=m.id, name=m.name, timestamp=m.timestamp,
                   metadata={**m.metadata, "precis": "offloaded", "offload_id": offload_id})


def _shrunk(m: Message, limit: int, offload_id: str, view: View, slot: str
            ) -> tuple[Message, Outcome]:
    """``m`` with its text cut to about ``limit`` characters by a summary."""
    note = offload_note(view.language, offload_id, f"{_size(m):,} characters")
    names = {c.id: c.name for c in m.tool_calls}

    def rule() -> str:
        pieces = []
        for p in m.parts:
            if isinstance(p, ToolResult):
                pieces.append(_tool_result_digest(p, p.content, limit, view.language,
                                                  names.get(p.call_id) or p.name))
            elif isinstance(p, Text):
                pieces.append(core_text(p.text, limit, view.language))
        return "\n".join(x for x in pieces if x)

    outcome = view.summarize(slot, _plain([m]), rule)
    text = f"{outcome.text}\n{note}"
    parts: list[Part] = []
    placed = False
    for p in m.parts:
        if isinstance(p, ToolResult):
            parts.append(ToolResult(p.call_id, text if not placed else note, p.is_error, p.name))
            placed = True
        elif isinstance(p, ToolCall):
            parts.append(p if len(p.arguments) <= limit else ToolCall(p.id, p.name, json.dumps(
                {"_offloaded": offload_id, "preview": _preview(p.arguments, limit)},
                ensure_ascii=False)))
        elif isinstance(p, Text) and not placed:
            parts.append(Text(text))
            placed = True
    if not placed:
        parts.append(Text(text))
    return (Message(m.role, parts, id=m.id, name=m.name, timestamp=m.timestamp,
                    metadata={**m.metadata, "precis": "shrunk", "offload_id": offload_id}),
            outcome)
