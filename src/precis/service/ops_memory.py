"""Memory operations, in the shape mem0 users know: add, list, get (with sources and
neighbours), history, patch, delete (one, or all of a user / agent / session), search."""

from __future__ import annotations

from typing import Any

from precis.errors import InputError, InputTooLargeError
from precis.memory.search import _message_dict
from precis.memory.store.base import Filters
from precis.service._context import Ctx
from precis.service.models import (
    AddMemoryArgs,
    DeleteMemoriesArgs,
    GetMemoryArgs,
    ListMemoriesArgs,
    MemoryIdArgs,
    PatchMemoryArgs,
    SearchArgs,
)
from precis.service.ops_conversation import pick_conversation

__all__ = ["add_op", "delete_many_op", "delete_op", "get_op", "history_op", "list_op",
           "patch_op", "search_op"]


def add_op(ctx: Ctx, args: AddMemoryArgs) -> dict[str, Any]:
    given = [name for name in ("messages", "conversation", "text")
             if getattr(args, name) is not None]
    if len(given) != 1:
        raise InputError("give exactly one of messages, conversation or text"
                         + (f" (got {', '.join(given)})" if given else ""), where="body")
    if args.text is not None:
        source: Any = [{"role": "user", "content": args.text}]
    elif args.messages is not None:
        if len(args.messages) > ctx.limits.max_messages:
            raise InputTooLargeError(f"{len(args.messages)} messages; this server takes at "
                                     f"most {ctx.limits.max_messages}", where="messages")
        if not args.messages:
            raise InputError("messages is empty", where="messages")
        source = args.messages
    else:
        source = args.conversation
    _, _, conversation = pick_conversation(ctx, source, args.format, args.pick)
    memory = ctx.memory
    report = memory.ingest(conversation, session=args.session_id, user=args.user_id,
                           agent=args.agent_id, metadata=args.metadata, summary=args.summary)
    ctx.service.metrics.add("memories_added", report.added)
    added = memory.store.get_many(list(report.added_ids))
    updated = memory.store.get_many(list(report.updated_ids))
    return {"session_id": report.session_id, "extracted": report.cards,
            "added": [c.to_dict() for c in added], "updated": [c.to_dict() for c in updated],
            "summary_id": report.summary_id, "skipped": report.skipped}


def list_op(ctx: Ctx, args: ListMemoriesArgs) -> dict[str, Any]:
    filters = Filters(user=args.user_id, agent=args.agent_id, session=args.session_id,
                      types=tuple(args.type), speaker=args.speaker, since=args.since,
                      until=args.until, include_superseded=not args.current)
    offset = int(args.cursor or 0)
    cards = list(ctx.memory.cards(filters, limit=args.limit + 1, offset=offset))
    more = len(cards) > args.limit
    return {"memories": [c.to_dict() for c in cards[:args.limit]],
            "next_cursor": str(offset + args.limit) if more else None,
            "total": ctx.store.count(filters)}


def get_op(ctx: Ctx, args: GetMemoryArgs) -> dict[str, Any]:
    memory = ctx.memory
    card = memory.get(args.id)
    around = memory.sources(card, context=args.context)
    own = set(card.message_indexes)
    return {"memory": card.to_dict(),
            "sources": [_message_dict(m) for m in around if m.index in own],
            "neighbours": [_message_dict(m) for m in around if m.index not in own]}


def history_op(ctx: Ctx, args: MemoryIdArgs) -> dict[str, Any]:
    versions = ctx.memory.history(args.id)
    return {"id": args.id, "history": [
        {"version": v.version, "action": v.action, "at": v.at,
         "memory": v.card.to_dict() if v.card is not None else None} for v in versions]}


def patch_op(ctx: Ctx, args: PatchMemoryArgs) -> dict[str, Any]:
    changes = args.model_dump(exclude_unset=True, exclude={"id"})
    changes = {k: v for k, v in changes.items() if v is not None}
    if not changes:
        raise InputError("nothing to change: give content, type, tags, topics, entities, "
                         "event_time, superseded_by or metadata", where="body")
    if "superseded_by" in changes:
        ctx.memory.get(changes["superseded_by"])  # the successor must exist (in this tenant)
    return {"memory": ctx.memory.update(args.id, **changes).to_dict()}


def delete_op(ctx: Ctx, args: MemoryIdArgs) -> dict[str, Any]:
    ctx.memory.delete(args.id)
    return {"deleted": [args.id]}


def delete_many_op(ctx: Ctx, args: DeleteMemoriesArgs) -> dict[str, Any]:
    if args.user_id is None and args.agent_id is None and args.session_id is None:
        raise InputError("deleting in bulk needs user_id, agent_id or session_id (each "
                         "memory alone: DELETE /v1/memories/{id})", where="query")
    filters = Filters(user=args.user_id, agent=args.agent_id, session=args.session_id)
    memory = ctx.memory
    ids = [c.id for c in memory.cards(filters)]
    for card_id in ids:
        memory.delete(card_id)
    return {"deleted": ids}


def search_op(ctx: Ctx, args: SearchArgs) -> dict[str, Any]:
    f = args.filters
    result = ctx.memory.search(
        args.query, k=args.k, user=f.user_id, agent=f.agent_id, session=f.session_id,
        types=tuple(f.types), speaker=f.speaker, since=f.since, until=f.until,
        current_only=f.current, chronological=args.chrono, context=args.context,
        recap=args.recap)
    return result.to_dict()
