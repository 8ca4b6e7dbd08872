"""Every operation of the service, once. :mod:`precis.service.rest` makes a REST route of
each; :mod:`precis.service.mcp` makes an MCP tool of those with a ``tool`` name. An
operation is its argument model (validation, JSON schema, descriptions), a handler over the
library (``handler(ctx, args)``), where it lives under ``/v1``, and whether it is heavy
(compaction: run in the compaction thread pool, off the event loop and off the pool the
light calls use)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from precis.service import ops_conversation, ops_memory, ops_sessions
from precis.service.models import (
    AddMemoryArgs,
    CompressArgs,
    ContextArgs,
    CreateSessionArgs,
    DeleteMemoriesArgs,
    GetMemoryArgs,
    InspectArgs,
    ListConversationsArgs,
    ListMemoriesArgs,
    MemoryIdArgs,
    NoArgs,
    OffloadArgs,
    PatchMemoryArgs,
    SearchArgs,
    SessionIdArgs,
    SessionMessagesArgs,
)

__all__ = ["OPERATIONS", "Operation"]


@dataclass(frozen=True)
class Operation:
    """One operation (see the module docstring). ``path`` names its path parameters as
    ``{field}`` of ``args``; the other fields are the query string (GET, DELETE) or the JSON
    body (POST, PATCH)."""

    name: str
    method: str
    path: str
    args: type[BaseModel]
    handler: Callable[[Any, Any], Any]
    summary: str
    tag: str
    status: int = 200
    heavy: bool = False
    tool: str | None = None  # the MCP tool's name, if it is one
    tool_description: str = ""
    read_only: bool = True


OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "compress", "POST", "/v1/compress", CompressArgs, ops_conversation.compress_op,
        "Compact a conversation to a level or a token budget", "compaction", heavy=True,
        tool="compress_context",
        tool_description=(
            "Compact a long conversation (a list of OpenAI or Anthropic messages, or a "
            "transcript) to fit a token budget, without an LLM. Returns the system prompt, a "
            "structured summary whose every line cites the fragments it came from ([S12]), "
            "and the recent messages kept verbatim; tool calls and results stay paired. Use "
            "output='openai' or 'anthropic' for just the message list to send, 'markdown' "
            "for a readable report, 'json' (default) for everything with the figures.")),
    Operation(
        "inspect", "POST", "/v1/inspect", InspectArgs, ops_conversation.inspect_op,
        "Segment and analyse a conversation: fragments with type, level and why",
        "compaction", heavy=True),
    Operation(
        "inspect.conversations", "POST", "/v1/inspect/conversations", ListConversationsArgs,
        ops_conversation.conversations_op,
        "List the conversations an input holds, to pick one", "compaction", heavy=True,
        tool="list_conversations",
        tool_description=(
            "List the conversations in an input that holds several (a tau-bench or "
            "SWE-agent trajectory file, ShareGPT, a JSONL of sessions ...): each one's "
            "index, id, title, first user message, message count and tokens. Give one's "
            "index or id as compress_context's pick to compact that one.")),
    Operation(
        "memories.add", "POST", "/v1/memories", AddMemoryArgs, ops_memory.add_op,
        "Add memories from messages, a conversation or a text", "memories", status=201,
        tool="add_memory", read_only=False,
        tool_description=(
            "Remember something for later: give a text (one statement, e.g. 'Ana prefers "
            "PostgreSQL over MySQL') or messages of a conversation; precis extracts typed "
            "memory cards (requirements, decisions, facts, preferences, errors and fixes ...) "
            "with their sources, and a session summary card (what was asked, done, pending). "
            "Adding the same conversation again adds nothing; adding it again grown updates "
            "its summary. Scope them with user_id / agent_id / session_id.")),
    Operation(
        "memories.list", "GET", "/v1/memories", ListMemoriesArgs, ops_memory.list_op,
        "List memories in time order, filtered, a page at a time", "memories",
        tool="list_memories",
        tool_description=(
            "List stored memories in time order, filtered by user_id, agent_id, session_id, "
            "type, speaker, since / until (ISO dates); pages with limit and the returned "
            "next_cursor.")),
    Operation(
        "memories.delete_many", "DELETE", "/v1/memories", DeleteMemoriesArgs,
        ops_memory.delete_many_op,
        "Delete every memory of a user, an agent or a session (one must be given)",
        "memories", read_only=False),
    Operation(
        "memories.search", "POST", "/v1/memories/search", SearchArgs, ops_memory.search_op,
        "Search memories by keywords and meaning", "memories", tool="search_memory",
        tool_description=(
            "Search long-term memory by keywords and meaning (English and Chinese). Returns "
            "hits best first, each with its score, why it ranked, the memory card and the "
            "original messages it came from. Time words in the query ('last week', '上周') "
            "filter by time; filters narrow by user, agent, session, type or dates (type "
            "'summary': one digest per session, for 'what did we do in ...').")),
    Operation(
        "memories.get", "GET", "/v1/memories/{id}", GetMemoryArgs, ops_memory.get_op,
        "One memory with its source messages and their neighbours", "memories",
        tool="get_memory",
        tool_description="One memory card by id, with the messages it came from and their "
                         "neighbours (context each side)."),
    Operation(
        "memories.history", "GET", "/v1/memories/{id}/history", MemoryIdArgs,
        ops_memory.history_op, "A memory's versions: created, updated, superseded, deleted",
        "memories"),
    Operation(
        "memories.patch", "PATCH", "/v1/memories/{id}", PatchMemoryArgs, ops_memory.patch_op,
        "Change a memory (its old version stays in the history)", "memories",
        read_only=False),
    Operation(
        "memories.delete", "DELETE", "/v1/memories/{id}", MemoryIdArgs, ops_memory.delete_op,
        "Delete a memory (its history keeps what it said)", "memories",
        tool="delete_memory", read_only=False,
        tool_description="Delete one memory card by id (its history keeps what it said)."),
    Operation(
        "sessions.create", "POST", "/v1/sessions", CreateSessionArgs, ops_sessions.create_op,
        "Start a ContextMemory session kept in the store", "sessions", status=201,
        read_only=False),
    Operation(
        "sessions.list", "GET", "/v1/sessions", NoArgs, ops_sessions.list_op,
        "The sessions of this tenant", "sessions"),
    Operation(
        "sessions.get", "GET", "/v1/sessions/{session_id}", SessionIdArgs, ops_sessions.get_op,
        "A session's settings and figures", "sessions"),
    Operation(
        "sessions.messages", "POST", "/v1/sessions/{session_id}/messages",
        SessionMessagesArgs, ops_sessions.messages_op,
        "Append messages (OpenAI or Anthropic dicts) to a session", "sessions",
        read_only=False),
    Operation(
        "sessions.context", "GET", "/v1/sessions/{session_id}/context", ContextArgs,
        ops_sessions.context_op,
        "The working context to send, compacted first when it is over its thresholds",
        "sessions", heavy=True, read_only=False),
    Operation(
        "sessions.events", "GET", "/v1/sessions/{session_id}/events", SessionIdArgs,
        ops_sessions.events_op, "The session's compaction events", "sessions"),
    Operation(
        "sessions.offload", "GET", "/v1/sessions/{session_id}/offloads/{offload_id}",
        OffloadArgs, ops_sessions.offload_op,
        "What the session offloaded under an id (as the context_reload tool returns it)",
        "sessions", tool="context_reload",
        tool_description=(
            "Get back the original content a precis session offloaded to save room: give "
            "the session id and the id shown in an offload note like [... offloaded, "
            "id=ctx-1a2b3c4d5e6f ...]; contains= keeps only the messages holding a text.")),
    Operation(
        "sessions.delete", "DELETE", "/v1/sessions/{session_id}", SessionIdArgs,
        ops_sessions.delete_op, "Delete a session, its state and offloads", "sessions",
        read_only=False),
)
