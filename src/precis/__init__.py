"""precis: instant, exact, traceable compaction and memory for long LLM-agent conversations.

The public API is what ``__all__`` lists; everything in modules starting with ``_`` is private.
"""

from __future__ import annotations

from precis._version import __version__
from precis.errors import (
    ConfigError,
    EmbeddingError,
    EmptyInputError,
    EncodingError,
    FormatError,
    InputError,
    InputNotFoundError,
    InputTooLargeError,
    JSONSyntaxError,
    LLMError,
    MissingDependencyError,
    NestingTooDeepError,
    NotFoundError,
    PrecisError,
    PrecisWarning,
    QueryError,
    SelectionError,
    StoreError,
    TokenizerError,
    UnknownFormatError,
)
from precis.formats import Collection, load, load_all
from precis.model import (
    Conversation,
    ConversationInfo,
    Image,
    Message,
    Part,
    Text,
    Thinking,
    ToolCall,
    ToolResult,
)
from precis.paths import precis_home
from precis.segment import Fragment, Provenance, Round, Segmentation, segment
from precis.tokens import TokenCounter, get_counter
from precis.trigger import CompactionDecision, TriggerCues, should_compact

__all__ = [
    "Collection",
    "CompactionDecision",
    "ConfigError",
    "Conversation",
    "ConversationInfo",
    "EmbeddingError",
    "EmptyInputError",
    "EncodingError",
    "FormatError",
    "Fragment",
    "Image",
    "InputError",
    "InputNotFoundError",
    "InputTooLargeError",
    "JSONSyntaxError",
    "LLMError",
    "Message",
    "MissingDependencyError",
    "NestingTooDeepError",
    "NotFoundError",
    "Part",
    "PrecisError",
    "PrecisWarning",
    "Provenance",
    "QueryError",
    "Round",
    "Segmentation",
    "SelectionError",
    "StoreError",
    "Text",
    "Thinking",
    "TokenCounter",
    "TokenizerError",
    "ToolCall",
    "ToolResult",
    "TriggerCues",
    "UnknownFormatError",
    "__version__",
    "get_counter",
    "load",
    "load_all",
    "precis_home",
    "segment",
    "should_compact",
]
