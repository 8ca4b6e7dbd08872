"""Operations on a conversation sent with the call: compress, inspect."""

from __future__ import annotations

from typing import Any

from precis.errors import ConfigError, InputError, InputTooLargeError
from precis.formats import Collection, load_all
from precis.model import Conversation
from precis.service._context import Ctx
from precis.service.models import CompressArgs, InspectArgs, ListConversationsArgs

__all__ = ["Markdown", "check_tokenizer", "compress_op", "conversations_op", "inspect_op",
           "read_collection"]


class Markdown(str):
    """A result that is a Markdown document, not JSON (``output: markdown``)."""


def read_collection(ctx: Ctx, conversation: Any, format: str | None) -> Collection:
    """Every conversation in ``conversation`` (a JSON value, or a string holding a file's
    text: never a path on the server), checked against the message-count limit."""
    if conversation is None:
        raise InputError("a conversation is required", where="conversation")
    if isinstance(conversation, str):
        source: Any = conversation.encode("utf-8", "surrogatepass")
    elif isinstance(conversation, (list, dict)):
        source = conversation
    else:
        raise InputError("a conversation is a JSON list or object, or a string holding "
                         f"one or a transcript; got {type(conversation).__name__}",
                         where="conversation")
    collection = load_all(source, format, name="conversation")
    limit = ctx.limits.max_messages
    for conv in collection.conversations:
        if len(conv.messages) > limit:
            raise InputTooLargeError(
                f"{len(conv.messages)} messages; this server takes at most {limit} per "
                "conversation", where="conversation")
    return collection


def pick_conversation(ctx: Ctx, conversation: Any, format: str | None,
                      pick: int | str | None) -> tuple[Collection, int, Conversation]:
    collection = read_collection(ctx, conversation, format)
    position = collection.resolve(pick, option="pick ",
                                  lister="POST /v1/inspect/conversations")
    return collection, position, collection.conversations[position]


def check_tokenizer(spec: str) -> str:
    """``spec`` if it names a counter without a file (a service reads no server path)."""
    from precis.tokens import counter_names

    allowed = [n for n in counter_names() if "PATH" not in n]
    if spec not in allowed:
        raise ConfigError(f"unknown tokenizer {spec!r}; this server takes: "
                          f"{', '.join(allowed)}", where="tokenizer")
    return spec


def _check_template(name: str) -> str:
    from precis.compact import builtin_templates

    known = ["auto", *sorted(builtin_templates())]
    if name not in known:
        raise ConfigError(f"unknown template {name!r}; this server takes: {', '.join(known)}",
                          where="template")
    return name


def compress_op(ctx: Ctx, args: CompressArgs) -> Any:
    from precis.compact import compress

    _, position, conversation = pick_conversation(ctx, args.conversation, args.format,
                                                  args.pick)
    from precis.tokens import get_counter

    counter = get_counter(check_tokenizer(args.tokenizer))
    result = compress(conversation, level=args.level, budget=args.budget,
                      template=_check_template(args.template), tokenizer=counter,
                      keep_last=args.keep_last, llm=ctx.service.llm() if args.llm else None)
    ctx.service.metrics.add("compactions")
    ctx.service.metrics.add("tokens_saved", max(0, result.original_tokens
                                                - result.compressed_tokens))
    result.source = {"path": None, "sha256": None, "format": conversation.source_format,
                     "pick": position}
    if args.output == "openai":
        return result.to_openai()
    if args.output == "anthropic":
        return result.to_anthropic()
    if args.output == "markdown":
        return Markdown(result.to_markdown())
    out = result.to_dict(timings=args.timings)
    if args.explain:
        from precis.analysis import analyze
        from precis.compact.fates import explain_result

        out["explain"] = explain_result(out, analyze(conversation), counter)
    return out


def inspect_op(ctx: Ctx, args: InspectArgs) -> dict[str, Any]:
    from precis.cli.inspect import inspect_report

    collection, position, _ = pick_conversation(ctx, args.conversation, args.format, args.pick)
    tokenizers = [check_tokenizer(t) for t in args.tokenizers] or ["estimate"]
    return inspect_report(collection, position, tokenizers, explain=args.explain)


def conversations_op(ctx: Ctx, args: ListConversationsArgs) -> dict[str, Any]:
    from precis.cli.inspect import conversation_listing

    collection = read_collection(ctx, args.conversation, args.format)
    return conversation_listing(collection, [check_tokenizer(t) for t in args.tokenizers])
