"""The arguments of every operation, as pydantic models: they validate REST bodies and query
strings, and MCP tool arguments, and give both their JSON schemas and descriptions.

Unknown fields are refused (``extra="forbid"``), so a misspelt option is a 422 naming it,
never silently ignored.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from precis.memory.card import CARD_TYPES, CardType

__all__ = [
    "AddMemoryArgs",
    "CompressArgs",
    "ContextArgs",
    "CreateSessionArgs",
    "DeleteMemoriesArgs",
    "GetMemoryArgs",
    "InspectArgs",
    "ListConversationsArgs",
    "ListMemoriesArgs",
    "MemoryIdArgs",
    "NoArgs",
    "OffloadArgs",
    "PatchMemoryArgs",
    "SearchArgs",
    "SearchFilters",
    "SessionIdArgs",
    "SessionMessagesArgs",
]

Level = Literal["light", "normal", "heavy", "emergency"]
Output = Literal["json", "openai", "anthropic", "markdown"]


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NoArgs(_Args):
    """No arguments."""


class _Input(_Args):
    conversation: Any = Field(
        description="The conversation: a JSON value in any format precis reads (a list of "
                    "OpenAI / Anthropic messages, a Claude Code or LangChain dump, ShareGPT, "
                    "LoCoMo ...), or a string holding such a file's text or a plain "
                    "'User: ... / Assistant: ...' transcript.")
    format: str | None = Field(None, max_length=40,
                               description="Force the input format instead of detecting it.")


class _Conversation(_Input):
    pick: int | str | None = Field(
        None, description="Which conversation of an input that holds several (0-based "
                          "index or id).")


class CompressArgs(_Conversation):
    """Compact a conversation to a level or a token budget."""

    budget: int | None = Field(None, ge=1, le=10_000_000,
                               description="Token budget the whole output fits (by tokenizer).")
    level: Level = Field("normal", description="How hard to compress when no budget is given.")
    template: str = Field("auto", max_length=40,
                          description="Summary layout: auto (the one the conversation calls "
                                      "for: a handover for agent sessions, service for "
                                      "customer-service dialogues, sections for chats, log "
                                      "for small talk), or one of them by name.")
    tokenizer: str = Field("estimate", max_length=40,
                           description="Token counter: estimate, estimate:cl100k, o200k_base, "
                                       "cl100k_base ...")
    keep_last: int | None = Field(None, ge=0, le=100_000,
                                  description="Recent messages kept verbatim (overrides the "
                                              "level's number).")
    output: Output = Field("json", description="json: the CompressionResult (as the CLI's "
                                               "JSON); openai / anthropic: the message list "
                                               "to send; markdown: a report.")
    timings: bool = Field(True, description="Include timings_ms in the JSON result.")
    llm: bool = Field(False, description="Rewrite the summary into prose with the LLM this "
                                         "server is set up with (PRECIS_LLM_URL where it "
                                         "runs; 501 when none), within the same budget. "
                                         "precis puts back every request and exact value "
                                         "the prose left out and keeps its own summary when "
                                         "the model fails or the prose does not fit; the "
                                         "JSON's 'llm' says which.")
    explain: bool = Field(False, description="Add 'explain' to the JSON result: every input "
                                             "fragment with its type, importance and why, and "
                                             "its fate (kept verbatim, summarized into which "
                                             "summary lines, dropped and why); tokens before "
                                             "and after by summary section, recent messages "
                                             "and dropped fragments.")


class InspectArgs(_Conversation):
    """Segment and analyse a conversation."""

    tokenizers: list[str] = Field(default_factory=lambda: ["estimate"], max_length=8,
                                  description="Token counters to count with.")
    explain: bool = Field(True, description="Give every fragment its type, importance level, "
                                            "score and the factors behind them.")


class ListConversationsArgs(_Input):
    """List the conversations an input holds (a file of several: tau-bench trajectories,
    ShareGPT, a JSONL of sessions ...), to choose one with ``pick``: each one's index, id,
    title, first user message, message count and tokens."""

    tokenizers: list[str] = Field(default_factory=lambda: ["estimate"], min_length=1,
                                  max_length=8, description="Token counters to count with.")


class AddMemoryArgs(_Args):
    """Add memories: the cards extracted from messages, a conversation or a text."""

    messages: list[dict[str, Any]] | None = Field(
        None, description="Messages (OpenAI or Anthropic shape) to extract memories from.")
    conversation: Any = Field(None, description="A conversation in any format precis reads "
                                                "(instead of messages).")
    text: str | None = Field(None, min_length=1, max_length=100_000,
                             description="One statement to remember, as the user's words "
                                         "(instead of messages).")
    format: str | None = Field(None, max_length=40,
                               description="Force the conversation's format.")
    pick: int | str | None = Field(None, description="Which conversation of several.")
    user_id: str | None = Field(None, min_length=1, max_length=200,
                                description="The user the memories belong to.")
    agent_id: str | None = Field(None, min_length=1, max_length=200,
                                 description="The agent they belong to.")
    session_id: str | None = Field(None, min_length=1, max_length=200,
                                   description="Session to file them under (default: the "
                                               "conversation's id or a hash of it).")
    metadata: dict[str, Any] | None = Field(None, description="Stored with every card added.")
    summary: bool | None = Field(
        None, description="The session's summary card (type 'summary': its requests, what was "
                          "done, what is pending), updated in place when the session is added "
                          "again grown. null (default): for a session of 4 messages or more "
                          "that is not small talk; true: small talk too; false: none.")


class SearchFilters(_Args):
    user_id: str | None = Field(None, min_length=1, max_length=200)
    agent_id: str | None = Field(None, min_length=1, max_length=200)
    session_id: str | None = Field(None, min_length=1, max_length=200)
    types: list[CardType] = Field(default_factory=list, max_length=len(CARD_TYPES))
    speaker: str | None = Field(None, min_length=1, max_length=200)
    since: str | None = Field(None, min_length=4, max_length=40,
                              description="ISO date or date-time (inclusive).")
    until: str | None = Field(None, min_length=4, max_length=40,
                              description="ISO date or date-time (inclusive).")
    current: bool = Field(False, description="Leave out superseded memories.")


class SearchArgs(_Args):
    """Search memories by keywords and meaning."""

    query: str = Field(min_length=1, max_length=4000, description="What to look for.")
    filters: SearchFilters = Field(default_factory=lambda: SearchFilters.model_validate({}))
    k: int = Field(10, ge=1, le=1000, description="How many hits.")
    chrono: bool = Field(False, description="Hits in time order instead of by score.")
    context: int = Field(0, ge=0, le=20, description="Neighbouring messages each side.")
    recap: bool = Field(False, description="Add a short recap of the hits.")


class ListMemoriesArgs(_Args):
    """List memories (time order), filtered."""

    user_id: str | None = Field(None, min_length=1, max_length=200)
    agent_id: str | None = Field(None, min_length=1, max_length=200)
    session_id: str | None = Field(None, min_length=1, max_length=200)
    type: list[CardType] = Field(default_factory=list, max_length=len(CARD_TYPES),
                                 description="Only these types (repeatable).")
    speaker: str | None = Field(None, min_length=1, max_length=200)
    since: str | None = Field(None, min_length=4, max_length=40)
    until: str | None = Field(None, min_length=4, max_length=40)
    current: bool = Field(False, description="Leave out superseded memories.")
    limit: int = Field(100, ge=1, le=1000)
    cursor: str | None = Field(None, max_length=20, pattern=r"^[0-9]+$",
                               description="next_cursor of the previous page.")


class MemoryIdArgs(_Args):
    id: str = Field(min_length=1, max_length=200, description="The memory's id (m_...).")


class GetMemoryArgs(MemoryIdArgs):
    """One memory with its sources and neighbouring messages."""

    context: int = Field(1, ge=0, le=20, description="Neighbouring messages each side.")


class PatchMemoryArgs(MemoryIdArgs):
    """Change a memory's fields; the old version stays in its history."""

    content: str | None = Field(None, min_length=1, max_length=100_000)
    type: CardType | None = None
    tags: list[str] | None = Field(None, max_length=100)
    topics: list[str] | None = Field(None, max_length=100)
    entities: list[str] | None = Field(None, max_length=100)
    event_time: str | None = Field(None, min_length=4, max_length=40)
    superseded_by: str | None = Field(None, min_length=1, max_length=200)
    metadata: dict[str, Any] | None = None


class DeleteMemoriesArgs(_Args):
    """Delete every memory of a user, agent or session (at least one must be given)."""

    user_id: str | None = Field(None, min_length=1, max_length=200)
    agent_id: str | None = Field(None, min_length=1, max_length=200)
    session_id: str | None = Field(None, min_length=1, max_length=200)


class CreateSessionArgs(_Args):
    """A ContextMemory session kept in the store (seed 004)."""

    id: str | None = Field(None, min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.:-]+$",
                           description="The session id (default: a new random id).")
    max_tokens: int = Field(128 * 1024, ge=1, le=10_000_000,
                            description="The model's context window.")
    token_ratio: float = Field(0.75, gt=0, le=1,
                               description="Share of max_tokens the context is kept under.")
    msg_threshold: int = Field(100, ge=1, le=100_000,
                               description="Compact when the context holds this many messages.")
    last_keep: int = Field(50, ge=1, le=100_000)
    large_payload: int = Field(5 * 1024, ge=1, le=10_000_000)
    preview_chars: int = Field(200, ge=1, le=100_000)
    min_consecutive_tool: int = Field(6, ge=1, le=100_000)
    current_round_ratio: float = Field(0.3, gt=0, le=1)
    tokenizer: str = Field("estimate", max_length=40)


class SessionIdArgs(_Args):
    session_id: str = Field(min_length=1, max_length=100, description="The session's id.")


class SessionMessagesArgs(SessionIdArgs):
    """Append messages to a session."""

    messages: list[dict[str, Any]] = Field(min_length=1,
                                           description="OpenAI or Anthropic message dicts.")


class ContextArgs(SessionIdArgs):
    """The working context to send (compacted first when over its thresholds)."""

    format: Literal["openai", "anthropic"] = "openai"
    compact: bool = Field(True, description="Compact first when the context is over its "
                                            "thresholds; false: the working context as it "
                                            "is, nothing changed.")


class OffloadArgs(SessionIdArgs):
    """What the session offloaded under an id (the context_reload tool)."""

    offload_id: str = Field(min_length=1, max_length=100,
                            description="The id from the offload note (ctx-...).")
    contains: str | None = Field(None, max_length=1000,
                                 description="Only the messages holding this text.")
