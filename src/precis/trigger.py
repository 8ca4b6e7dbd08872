"""When to compact: seed 002's three triggers, for callers that run their own loop.

Compaction is due when the conversation has more than ``max_rounds`` exchanges (user
requests), when it takes more than ``max_tokens`` tokens, or when the user asks for it in
the latest message ("这阶段总结一下", "帮我整理一下刚才的内容", "summarize what we have so
far", "let's recap")::

    decision = precis.should_compact(messages, max_rounds=20, max_tokens=24_000)
    if decision:                       # decision.reasons: ("request",), ("tokens",), ...
        result = compress(messages, budget=...)

The cues of an explicit request are data (``precis/data/trigger_cues.json``, Chinese and
English), extendable with :meth:`TriggerCues.extended`. Every cue names the conversation
("so far", "our discussion", "刚才", "这阶段"), so a question about summarizing something
else ("how do I summarize a table?") is no trigger. ``ContextMemory`` uses the same cues.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from precis.errors import ConfigError
from precis.model import Conversation, Message
from precis.tokens import TokenCounter, get_counter

__all__ = ["CompactionDecision", "TriggerCues", "requested_compaction", "should_compact"]

@dataclass(frozen=True)
class TriggerCues:
    """The cues that make a user message a request to compact: regular expressions
    (matched case-insensitively anywhere in the message) and literal phrases."""

    patterns: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()
    _compiled: tuple[re.Pattern[str], ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("patterns", "phrases"):
            value = getattr(self, name)
            if isinstance(value, str) or not all(isinstance(v, str) and v.strip()
                                                 for v in value):
                raise ConfigError(f"{name} must be a list of non-empty texts, got {value!r}",
                                  where=f"trigger_cues.{name}")
            object.__setattr__(self, name, tuple(value))
        compiled = []
        for pattern in self.patterns:
            try:
                compiled.append(re.compile(pattern, re.IGNORECASE))
            except re.error as err:
                raise ConfigError(f"{pattern!r} is not a regular expression ({err})",
                                  where="trigger_cues.patterns") from None
        object.__setattr__(self, "_compiled", tuple(compiled))

    @classmethod
    def default(cls) -> TriggerCues:
        """precis's own cues, Chinese and English (``precis/data/trigger_cues.json``)."""
        return _default()

    @classmethod
    def none(cls) -> TriggerCues:
        """No cues: no message is a request (to switch the explicit trigger off)."""
        return cls()

    def extended(self, phrases: Iterable[str] = (), patterns: Iterable[str] = ()
                 ) -> TriggerCues:
        """These cues and more: literal ``phrases`` and regular expression ``patterns``."""
        return TriggerCues(patterns=(*self.patterns, *patterns),
                           phrases=(*self.phrases, *phrases))

    def match(self, text: str) -> str | None:
        """The part of ``text`` that asks for a compaction, or None."""
        if not isinstance(text, str) or not text.strip():
            return None
        flat = " ".join(text.split())
        lowered = flat.lower()
        for phrase in self.phrases:
            at = lowered.find(phrase.lower())
            if at >= 0:
                return flat[at:at + len(phrase)]
        for pattern in self._compiled:
            found = pattern.search(flat)
            if found:
                return found.group(0).strip() or flat
        return None


@cache
def _default() -> TriggerCues:
    import json
    from importlib import resources

    data = json.loads(resources.files("precis").joinpath("data/trigger_cues.json")
                      .read_text("utf-8"))
    patterns = [p for language in ("zh", "en") for p in data[language]["patterns"]]
    phrases = [p for language in ("zh", "en") for p in data[language]["phrases"]]
    return TriggerCues(patterns=tuple(patterns), phrases=tuple(phrases))


@dataclass(frozen=True)
class CompactionDecision:
    """Whether to compact now and why; true when any condition holds."""

    reasons: tuple[str, ...]  # of "rounds", "tokens", "request", in that order
    rounds: int  # exchanges: user messages with text (tool results are not exchanges)
    tokens: int | None  # of the whole conversation (None when no max_tokens was given)
    request: str | None = None  # the words of the latest user message that asked for it

    def __bool__(self) -> bool:
        return bool(self.reasons)


def requested_compaction(message: Message, cues: TriggerCues | None = None) -> str | None:
    """The words of a user ``message`` that ask for a compaction (None for any other
    message, and for tool output)."""
    if message.role != "user" or message.tool_results:
        return None
    return (cues if cues is not None else _default()).match(message.text)


def should_compact(
    conversation: Conversation | Sequence[Message] | Sequence[dict[str, Any]],
    *,
    max_rounds: int | None = 20,
    max_tokens: int | None = None,
    tokenizer: str | TokenCounter = "estimate",
    cues: TriggerCues | None = None,
) -> CompactionDecision:
    """Seed 002's three triggers (see the module docs): more than ``max_rounds`` exchanges,
    more than ``max_tokens`` tokens (counted by ``tokenizer``; not checked when None), or
    a request in the latest user message (``cues``, precis's own by default).

    ``conversation`` is a :class:`Conversation`, a list of precis messages, or OpenAI /
    Anthropic message dicts."""
    for name, limit in (("max_rounds", max_rounds), ("max_tokens", max_tokens)):
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)
                                  or limit < 1):
            raise ConfigError(f"must be a whole number >= 1 or None, got {limit!r}",
                              where=name)
    if cues is not None and not isinstance(cues, TriggerCues):
        raise ConfigError(f"must be a precis.TriggerCues or None, got {type(cues).__name__}",
                          where="cues")
    messages = _messages(conversation)
    user_turns = [m for m in messages if m.role == "user" and not m.tool_results
                  and m.text.strip()]
    rounds = len(user_turns)
    tokens = None
    if max_tokens is not None:
        counter = get_counter(tokenizer) if isinstance(tokenizer, str) else tokenizer
        tokens = counter.count_messages(messages)
    request = requested_compaction(user_turns[-1], cues) if user_turns else None
    reasons = tuple(reason for reason, due in (
        ("rounds", max_rounds is not None and rounds > max_rounds),
        ("tokens", tokens is not None and max_tokens is not None and tokens > max_tokens),
        ("request", request is not None)) if due)
    return CompactionDecision(reasons, rounds, tokens, request)


def _messages(conversation: Any) -> list[Message]:
    if isinstance(conversation, Conversation):
        return list(conversation.messages)
    if isinstance(conversation, (list, tuple)):
        if all(isinstance(m, Message) for m in conversation):
            return list(conversation)
        if not conversation:
            return []
        from precis.formats import load

        return list(load(list(conversation)).messages)
    raise ConfigError(f"a conversation must be a Conversation or a list of messages, got "
                      f"{type(conversation).__name__}", where="conversation")
