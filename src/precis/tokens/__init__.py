"""Token counting: exact tokenizers when their files are at hand, a fast estimator always.

::

    from precis.tokens import get_counter

    get_counter()                    # the estimator (o200k coefficients), no dependencies
    get_counter("estimate:qwen")     # estimator calibrated on Qwen's tokenizer
    get_counter("o200k_base")        # exact, needs tiktoken + a local BPE file
    get_counter("hf:/models/qwen3/tokenizer.json")   # exact, needs `tokenizers`

Every counter has ``count(text)``, ``count_batch(texts)``, ``count_message(message)`` and
``count_messages(messages)`` (see :mod:`precis.tokens.base` for the overhead model).
Importing this package loads neither tiktoken nor tokenizers; a counter loads its backend
when it is created.
"""

from __future__ import annotations

from precis.tokens._estimate import EstimatorCounter
from precis.tokens._hf import HFTokenizerCounter
from precis.tokens._registry import (
    available_counters,
    counter_names,
    get_counter,
    register_counter,
)
from precis.tokens._tiktoken import TOKENIZER_DIR_ENV, TiktokenCounter
from precis.tokens.base import OPENAI_OVERHEAD, MessageOverhead, TokenCounter

__all__ = [
    "OPENAI_OVERHEAD",
    "TOKENIZER_DIR_ENV",
    "EstimatorCounter",
    "HFTokenizerCounter",
    "MessageOverhead",
    "TiktokenCounter",
    "TokenCounter",
    "available_counters",
    "counter_names",
    "get_counter",
    "register_counter",
]
