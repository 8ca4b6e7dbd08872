"""Summarise with an LLM, or with the rule engine when the LLM cannot.

:func:`summarize` asks the model and checks its answer; when there is no model, the call
fails (endpoint down, timeout, HTTP error, junk answer) or the answer is no shorter than the
input, it returns what the caller's ``fallback`` (the rule engine) gives, with a record of
why. Compaction never fails because the LLM did.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from precis.errors import PrecisError
from precis.llm._client import ChatModel
from precis.llm._prompts import PlanHint, SummaryPrompts, SummarySlot, build_summary_messages

__all__ = ["SummaryOutcome", "spent_tokens", "summarize"]

_MIN_CAP = 64  # the smallest answer cap derived from max_chars, in tokens


@dataclass(frozen=True)
class SummaryOutcome:
    """What :func:`summarize` produced and how.

    ``used_llm`` says whether ``text`` is the model's; ``error`` says why it is not (``None``
    when the model answered, or when there was no model to ask); ``llm_tokens`` counts the
    prompt and completion tokens the endpoint reported, also for a rejected answer (they
    were spent); ``elapsed_s`` is the wall time of the whole call, fallback included.
    """

    text: str
    used_llm: bool
    error: str | None
    llm_tokens: int
    elapsed_s: float


def summarize(
    client: ChatModel | None,
    slot: SummarySlot,
    content: str,
    *,
    fallback: Callable[[], str],
    prompts: SummaryPrompts | None = None,
    plan_hint: PlanHint | str | None = None,
    language: str = "auto",
    max_chars: int | None = None,
    max_tokens: int | None = None,
) -> SummaryOutcome:
    """A summary of ``content`` for ``slot`` by ``client``, else ``fallback()``.

    The prompt is :func:`~precis.llm.build_summary_messages` (``prompts``, ``plan_hint``,
    ``language``, ``max_chars``). ``max_tokens`` caps the answer; by default it is
    ``max_chars`` (a token is at least about one character) or the client's own cap.
    Errors of the caller (an unknown slot, content that is not text) are raised; errors of
    the model never are.
    """
    start = time.perf_counter()
    messages = build_summary_messages(
        slot, content, prompts=prompts, plan_hint=plan_hint, language=language,
        max_chars=max_chars,
    )
    if client is None:
        return _fallback(fallback, None, 0, start)
    if max_tokens is None and max_chars is not None:
        max_tokens = max(_MIN_CAP, max_chars)
    try:
        completion = client.complete(messages, max_tokens=max_tokens)
    except Exception as exc:  # a model (ours or a caller's wrapper) must never break compaction
        problem = str(exc) if isinstance(exc, PrecisError) else f"{type(exc).__name__}: {exc}"
        return _fallback(fallback, problem, 0, start)
    text = getattr(completion, "text", None)
    tokens = spent_tokens(completion)
    if not isinstance(text, str) or not text.strip():
        return _fallback(fallback, "the model gave no text", tokens, start)
    text = text.strip()
    if len(text) >= len(content):
        problem = (f"the model's answer ({len(text)} chars) is not shorter than the input "
                   f"({len(content)} chars)")
        return _fallback(fallback, problem, tokens, start)
    return SummaryOutcome(text, True, None, tokens, time.perf_counter() - start)


def _fallback(
    fallback: Callable[[], str], error: str | None, tokens: int, start: float
) -> SummaryOutcome:
    return SummaryOutcome(fallback(), False, error, tokens, time.perf_counter() - start)


def spent_tokens(completion: object) -> int:
    """The prompt plus completion tokens an answer (a :class:`Completion` or a wrapper's
    look-alike) reports; 0 for what is missing or not a count."""
    total = 0
    for key in ("prompt_tokens", "completion_tokens"):
        value = getattr(completion, key, 0)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            total += value
    return total
