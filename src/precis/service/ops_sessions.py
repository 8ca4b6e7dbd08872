"""ContextMemory as a service (seed 004 for any language): a session's whole state lives in
the store, so any worker serves any call. A call loads the state, acts, and saves it only if
no other call saved meanwhile (:meth:`~precis.memory.store.base.Store.swap_state`);
otherwise it answers 409 and changes nothing."""

from __future__ import annotations

import json
import secrets
from typing import Any

from precis.errors import ConflictError, NotFoundError
from precis.service._context import Ctx
from precis.service.models import (
    ContextArgs,
    CreateSessionArgs,
    NoArgs,
    OffloadArgs,
    SessionIdArgs,
    SessionMessagesArgs,
)
from precis.service.ops_conversation import check_tokenizer

__all__ = ["context_op", "create_op", "delete_op", "events_op", "get_op", "list_op",
           "messages_op", "offload_op"]


def _summary(memory: Any) -> dict[str, Any]:
    return {"id": memory.session, "config": dict(memory.config.__dict__),
            "tokenizer": getattr(memory.counter, "name", "estimate"),
            "messages": len(memory.messages()), "original_messages": len(memory.original()),
            "tokens": memory.token_count(), "budget": memory.config.budget,
            "over": memory.over(), "events": len(memory.events()),
            "offloads": memory.store.offload_ids(memory.session) if memory.store else []}


class _Session:
    """``with _Session(ctx, id) as memory:`` loads a session and saves it on a clean exit
    (refusing with 409 if another worker saved it meanwhile)."""

    def __init__(self, ctx: Ctx, session_id: str, *, save: bool = True) -> None:
        self.ctx, self.id, self.save = ctx, session_id, save
        self.lock = ctx.service.session_lock(ctx.tenant, session_id)

    def __enter__(self) -> Any:
        from precis.runtime import ContextMemory

        self.lock.acquire()
        try:
            store = self.ctx.store
            self.before = store.load_state(self.id)
            if self.before is None:
                raise NotFoundError(f"no session {self.id!r}", where="session_id")
            self.memory = ContextMemory.load(store, self.id)
        except BaseException:
            self.lock.release()
            raise
        return self.memory

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        try:
            if kind is None and self.save:
                after = json.dumps(self.memory.state(), ensure_ascii=False)
                if after != self.before and not self.ctx.store.swap_state(
                        self.id, self.before, after):
                    raise ConflictError(f"session {self.id!r} was changed by another call "
                                        "meanwhile; nothing was saved, try again",
                                        where="session_id")
        finally:
            self.lock.release()


def create_op(ctx: Ctx, args: CreateSessionArgs) -> dict[str, Any]:
    from precis.runtime import ContextConfig, ContextMemory

    config = ContextConfig(**args.model_dump(exclude={"id", "tokenizer"}))
    session_id = args.id or f"cs_{secrets.token_hex(8)}"
    memory = ContextMemory(config=config, tokenizer=check_tokenizer(args.tokenizer),
                           session=session_id, store=ctx.store)
    if not ctx.store.swap_state(session_id, None, json.dumps(memory.state(),
                                                             ensure_ascii=False)):
        raise ConflictError(f"a session {session_id!r} exists already", where="id")
    return _summary(memory)


def list_op(ctx: Ctx, args: NoArgs) -> dict[str, Any]:
    return {"sessions": ctx.store.state_ids()}


def get_op(ctx: Ctx, args: SessionIdArgs) -> dict[str, Any]:
    with _Session(ctx, args.session_id, save=False) as memory:
        return _summary(memory)


def messages_op(ctx: Ctx, args: SessionMessagesArgs) -> dict[str, Any]:
    limit = ctx.limits.max_messages
    if len(args.messages) > limit:
        from precis.errors import InputTooLargeError

        raise InputTooLargeError(f"{len(args.messages)} messages; this server takes at most "
                                 f"{limit} per call", where="messages")
    with _Session(ctx, args.session_id) as memory:
        memory.extend(args.messages)
        return {**_summary(memory), "added": len(args.messages)}


def context_op(ctx: Ctx, args: ContextArgs) -> dict[str, Any]:
    with _Session(ctx, args.session_id) as memory:
        events = memory.compress_if_needed() if args.compact else []
        if events:
            metrics = ctx.service.metrics
            metrics.add("compactions", len(events))
            metrics.add("tokens_saved", sum(max(0, e.tokens_before - e.tokens_after)
                                            for e in events))
        context = memory.to_openai() if args.format == "openai" else memory.to_anthropic()
        return {"id": args.session_id, "format": args.format, "context": context,
                "tokens": memory.token_count(), "budget": memory.config.budget,
                "events": [e.to_dict() for e in events]}


def events_op(ctx: Ctx, args: SessionIdArgs) -> dict[str, Any]:
    with _Session(ctx, args.session_id, save=False) as memory:
        return {"id": args.session_id, "events": [e.to_dict() for e in memory.events()]}


def offload_op(ctx: Ctx, args: OffloadArgs) -> dict[str, Any]:
    from precis.formats.export import to_openai
    from precis.runtime import ContextMemory
    from precis.runtime.tools import context_reload

    store = ctx.store
    if args.offload_id not in store.offload_ids(args.session_id):
        raise NotFoundError(f"no offload {args.offload_id!r} in session {args.session_id!r}",
                            where="offload_id")
    memory = ContextMemory(session=args.session_id, store=store)
    return {"id": args.offload_id, "session_id": args.session_id,
            "text": context_reload(memory, args.offload_id, args.contains),
            "messages": to_openai(memory.reload(args.offload_id))}


def delete_op(ctx: Ctx, args: SessionIdArgs) -> dict[str, Any]:
    with ctx.service.session_lock(ctx.tenant, args.session_id):
        if not ctx.store.delete_state(args.session_id):
            raise NotFoundError(f"no session {args.session_id!r}", where="session_id")
    return {"deleted": args.session_id}
