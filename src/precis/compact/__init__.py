"""Compaction: a long conversation -> system prompt + cited structured summary + recent turns.

    from precis.compact import compress
    result = compress(conversation, budget=8000, tokenizer="o200k_base")
    result.messages          # send these (valid for the OpenAI and Anthropic APIs)
    result.summary.render()  # the summary text, every line citing fragment ids [S12, S40]
    result.to_json()         # CompressionResult (schema: compression_result.schema.json)
    compress(conversation, budget=8000, llm=ChatClient())  # the summary as an LLM's prose,
                                                           # checked, or the rules' on failure

See :func:`compress` for the steps, :mod:`precis.compact.levels` for the levels and
:mod:`precis.compact.templates` for the summary layouts.
"""

from __future__ import annotations

from precis.compact._compress import DEFAULT_QUALITY_FLOOR, compress
from precis.compact._rewrite import LLMRewrite
from precis.compact.levels import LEVELS, LevelPreset
from precis.compact.quality import Retention
from precis.compact.result import CompressionResult, render_messages, result_schema
from precis.compact.summary import Summary, SummaryItem, SummarySection
from precis.compact.templates import (
    SectionSpec,
    Template,
    builtin_templates,
    get_template,
    load_template,
)

__all__ = [
    "DEFAULT_QUALITY_FLOOR",
    "LEVELS",
    "CompressionResult",
    "LLMRewrite",
    "LevelPreset",
    "Retention",
    "SectionSpec",
    "Summary",
    "SummaryItem",
    "SummarySection",
    "Template",
    "builtin_templates",
    "compress",
    "get_template",
    "load_template",
    "render_messages",
    "result_schema",
]
