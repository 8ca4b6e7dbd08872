"""The verbatim tail of a compaction: which recent messages are kept word for word within
their share of the budget, their long tool outputs and call arguments cut to their heads
before a message is left out, and how a tail grows into room the summary leaves."""

from __future__ import annotations

import json
from dataclasses import replace

from precis.compact._digest import core_text
from precis.compact._pairs import valid_starts, window_start
from precis.compact.levels import LevelPreset
from precis.model import Message, Part, Text, Thinking, ToolCall, ToolResult
from precis.tokens import TokenCounter

__all__ = ["SUMMARY_MIN", "choose_tail", "grow_tail"]

SUMMARY_MIN = 48  # tokens the summary message needs at the least (header and a line)


def choose_tail(
    messages: list[Message],
    sizes: list[int],
    dialog: list[int],
    preset: LevelPreset,
    budget: int | None,
    fixed: int,
    counter: TokenCounter,
    share: float,
    limit: int | None = None,
) -> tuple[int, list[Message], int]:
    """Where the verbatim tail starts, its messages and their tokens; with a budget, they
    take at most ``share`` of it (or ``limit`` tokens, when given). Before a message is
    left out of the tail, the long tool output and call arguments of the tail are cut to
    their heads (:func:`_headed`); the last message alone may be cut to its core."""
    n = len(messages)
    if not dialog or preset.keep_last == 0:
        return n, [], 0
    keep = min(preset.keep_last, len(dialog))
    start = window_start(messages, dialog[-keep])
    suffix = [0] * (n + 1)  # suffix[s]: tokens of messages[s:]
    for i in range(n - 1, -1, -1):
        suffix[i] = suffix[i + 1] + sizes[i]
    if budget is None:
        return start, messages[start:], suffix[start]
    if limit is None:
        limit = int((budget - fixed - SUMMARY_MIN) * share)
    if suffix[start] <= limit:
        return start, messages[start:], suffix[start]
    headed: dict[int, tuple[Message, int]] = {}

    def cut(i: int) -> tuple[Message, int]:
        if i not in headed:
            m = _headed(messages[i])
            headed[i] = (m, sizes[i] if m is messages[i] else counter.count_message(m))
        return headed[i]

    valid = valid_starts(messages)
    cut_suffix = 0
    best: int | None = None
    for s in range(n - 1, start - 1, -1):  # the longest valid tail of cut messages that fits
        cut_suffix += cut(s)[1]
        if cut_suffix > limit:
            break
        if valid[s]:
            best = s
    if best is not None:
        tail = [cut(i)[0] for i in range(best, n)]
        return best, tail, sum(cut(i)[1] for i in range(best, n))
    # Not even the last exchange fits: keep it with its long parts cut to their core.
    start = window_start(messages, dialog[-1])
    tail = [_shrink(cut(i)[0], max(1, limit // max(1, n - start)), counter)
            for i in range(start, n)]
    tokens = sum(counter.count_message(m) for m in tail)
    if tokens > limit:  # even cut to its core it takes more than its share: summarize it
        return n, [], 0
    return start, tail, tokens


_HEAD_CHARS = 240  # a tool output or call argument in the tail keeps this head when cut


def _headed(message: Message) -> Message:
    """``message`` with its tool output and long call arguments cut to their heads (a note
    says how much was cut; call arguments stay valid JSON), or itself when nothing is
    long."""
    parts: list[Part] = []
    changed = False
    for part in message.parts:
        if isinstance(part, ToolResult) and len(part.content) > _HEAD_CHARS * 1.5:
            rest = len(part.content) - _HEAD_CHARS
            parts.append(replace(part, content=part.content[:_HEAD_CHARS]
                                 + f"\n[… {rest} more characters cut by precis]"))
            changed = True
        elif isinstance(part, ToolCall) and len(part.arguments) > _HEAD_CHARS * 1.5:
            arguments = _cut_arguments(part.arguments)
            changed = changed or arguments != part.arguments
            parts.append(replace(part, arguments=arguments))
        else:
            parts.append(part)
    if not changed:
        return message
    return replace(message, parts=parts, metadata={**message.metadata, "precis": "shortened"})


def _cut_arguments(arguments: str) -> str:
    try:
        value = json.loads(arguments)
    except ValueError:
        return arguments

    def cut(v: object) -> object:
        if isinstance(v, str) and len(v) > _HEAD_CHARS:
            return v[:_HEAD_CHARS] + f"[… {len(v) - _HEAD_CHARS} more characters cut by precis]"
        if isinstance(v, dict):
            return {k: cut(x) for k, x in v.items()}
        if isinstance(v, list):
            return [cut(x) for x in v]
        return v

    return json.dumps(cut(value), ensure_ascii=False)


def _shrink(message: Message, tokens: int, counter: TokenCounter) -> Message:
    """``message`` with its text, reasoning and tool output cut to fit about ``tokens``."""
    if counter.count_message(message) <= tokens:
        return message
    chars = max(80, tokens * 3)
    for _ in range(8):
        parts: list[Part] = []
        for part in message.parts:
            if isinstance(part, Text):
                parts.append(Text(core_text(part.text, chars)))
            elif isinstance(part, Thinking):
                continue
            elif isinstance(part, ToolResult):
                parts.append(replace(part, content=core_text(part.content, chars)))
            else:
                parts.append(part)
        shrunk = replace(message, parts=parts,
                         metadata={**message.metadata, "precis": "shortened"})
        if counter.count_message(shrunk) <= tokens or chars <= 80:
            return shrunk
        chars = max(80, chars // 2)
    return shrunk


def grow_tail(messages: list[Message], sizes: list[int], first: int, start: int,
              tail: list[Message], tokens: int, limit: int, counter: TokenCounter
              ) -> tuple[int, list[Message], int]:
    """The tail ``tail`` (from ``start``, ``tokens`` tokens) with earlier messages put
    before it, their long parts cut to their heads, while the whole stays within ``limit``
    and starts where no tool call is parted from its result, after ``first`` (the
    summary keeps at least that message).
    (For a tail whose last message alone is too long to keep whole: the rest of the room
    goes to the messages before it.)"""
    valid = valid_starts(messages)
    before: list[tuple[Message, int]] = []
    best: int | None = None
    used = tokens
    for s in range(start - 1, first, -1):
        m = _headed(messages[s])
        size = sizes[s] if m is messages[s] else counter.count_message(m)
        used += size
        if used > limit:
            break
        before.append((m, size))
        if valid[s]:
            best = s
    if best is None:
        return start, tail, tokens
    taken = before[: start - best]
    return (best, [m for m, _ in reversed(taken)] + tail,
            tokens + sum(size for _, size in taken))


