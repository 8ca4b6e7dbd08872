"""The optional LLM layer: any OpenAI-compatible chat endpoint, used to summarise and to
classify what the rules are unsure about. The rule engine stays the default and the fallback.

* :class:`ChatClient` calls ``POST {base_url}/chat/completions`` (retries, backoff, timeout,
  an injectable ``httpx`` transport); every failure is an :class:`~precis.errors.LLMError`.
* :func:`build_summary_messages` builds the prompt of one of seed 004's four summary slots
  (:class:`SummaryPrompts` overrides the English / Chinese defaults; a :class:`PlanHint`
  goes last); :func:`summarize` asks the model and falls back to the caller's rule engine,
  saying why in a :class:`SummaryOutcome`.
* :func:`build_rewrite_messages` asks for a handover rewritten into prose (``compress(...,
  llm=client)``; the check of the prose is :mod:`precis.compact`'s).
* :class:`LLMTypeVoter` is a :class:`~precis.analysis.classify.TypeVoter` for
  :func:`~precis.analysis.classify_all`.

Needs ``httpx`` (``pip install 'precis[remote]'``) only when a :class:`ChatClient` is built.
"""

from __future__ import annotations

from precis.errors import LLMError
from precis.llm._client import (
    LLM_KEY_ENV,
    LLM_MODEL_ENV,
    LLM_URL_ENV,
    ChatClient,
    ChatModel,
    Completion,
    client_from_env,
)
from precis.llm._prompts import (
    SUMMARY_SLOTS,
    PlanHint,
    Subtask,
    SummaryPrompts,
    SummarySlot,
    build_rewrite_messages,
    build_summary_messages,
    prompt_language,
    rewrite_feedback,
)
from precis.llm._summarize import SummaryOutcome, summarize
from precis.llm._voter import LLMTypeVoter

__all__ = [
    "LLM_KEY_ENV",
    "LLM_MODEL_ENV",
    "LLM_URL_ENV",
    "SUMMARY_SLOTS",
    "ChatClient",
    "ChatModel",
    "Completion",
    "LLMError",
    "LLMTypeVoter",
    "PlanHint",
    "Subtask",
    "SummaryOutcome",
    "SummaryPrompts",
    "SummarySlot",
    "build_rewrite_messages",
    "build_summary_messages",
    "client_from_env",
    "prompt_language",
    "rewrite_feedback",
    "summarize",
]
