"""A LangChain tool loop whose history precis keeps under budget (no network, no LLM).

A ``GenericFakeChatModel`` (LangChain's own scripted chat model) asks for large files and
then answers. Part 1 keeps the conversation in a ``PrecisChatMessageHistory`` with a
2,500-token budget; part 2 keeps the whole list itself, as a LangGraph state does, and sends
the model what ``before_model`` returns. Both print the compactions and check that what the
model got stays under budget with every tool call answered.

    pip install 'precis[langchain]'
    python examples/langchain_history.py
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

try:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import (
        AIMessage,
        BaseMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
    )
except ImportError:
    raise SystemExit("this example needs LangChain: pip install 'precis[langchain]'") from None

from precis.adapters.langchain import PrecisChatMessageHistory, before_model
from precis.runtime import CompressionEvent, ContextConfig, ContextMemory

__all__ = ["main", "read_file", "script"]

BUDGET = 2500
MODULES = ("invoice", "tax", "refunds", "payments", "ledger", "reports", "currency")


def read_file(path: str) -> str:
    """A made-up source file of about 2,500 characters."""
    name = path.rsplit("/", 1)[-1].split(".")[0]
    return "\n".join([f"# {path}"] + [f"def {name}_rule_{n}(x): return round(x * 1.{n:02d}, 2)"
                                      for n in range(50)])


def script() -> Iterator[AIMessage]:
    """The model's replies: per module a call of read_file, then an answer."""
    for number, module in enumerate(MODULES):
        yield AIMessage(content="", tool_calls=[{
            "name": "read_file", "args": {"path": f"src/billing/{module}.py"},
            "id": f"call_{number}", "type": "tool_call"}])
        yield AIMessage(content=f"{module}.py rounds every line; it should round once.")


def pairs_ok(messages: Sequence[BaseMessage]) -> bool:
    """Every AI tool call is answered by the ToolMessages right after it, and only those."""
    pending: set[str] = set()
    for message in messages:
        if isinstance(message, ToolMessage):
            if message.tool_call_id not in pending:
                return False
            pending.discard(message.tool_call_id)
            continue
        if pending:
            return False
        if isinstance(message, AIMessage):
            pending = {str(c["id"]) for c in message.tool_calls}
    return not pending


def report(events: list[CompressionEvent]) -> None:
    for e in events:
        print(f"    compaction: {e.strategy:<18} {e.messages_before:>3} -> {e.messages_after:<3}"
              f" messages, {e.tokens_before:>5} -> {e.tokens_after:<5} tokens")


def with_history() -> bool:
    print("1. PrecisChatMessageHistory")
    model = GenericFakeChatModel(messages=script())
    memory = ContextMemory(config=ContextConfig(max_tokens=BUDGET, last_keep=4,
                                                large_payload=1200))
    history = PrecisChatMessageHistory(memory, on_compress=report)
    history.add_message(SystemMessage("You review billing code."))
    ok = True
    for module in MODULES:
        history.add_user_message(f"Review {module}.py.")
        while True:
            sent = history.messages
            ok = ok and pairs_ok(sent) and memory.token_count() <= BUDGET
            reply = model.invoke(sent)
            history.add_message(reply)
            if not isinstance(reply, AIMessage) or not reply.tool_calls:
                break
            history.add_messages([ToolMessage(read_file(c["args"]["path"]),
                                              tool_call_id=str(c["id"]))
                                  for c in reply.tool_calls])
        print(f"  {module:<9} -> {reply.content!s:<55} ({memory.token_count()} tokens)")
    print(f"  {len(memory.events())} compactions; full history {len(memory.original())} "
          f"messages; working context {len(history.messages)}")
    return ok


def with_hook() -> bool:
    print("2. before_model over a LangGraph-style message list")
    model = GenericFakeChatModel(messages=script())
    memory = ContextMemory(config=ContextConfig(max_tokens=BUDGET, last_keep=4,
                                                large_payload=1200))
    state: list[BaseMessage] = [SystemMessage("You review billing code.")]
    ok = True
    for module in MODULES:
        state.append(HumanMessage(f"Review {module}.py."))
        while True:
            sent = before_model(state, memory, on_compress=report)
            ok = ok and pairs_ok(sent) and memory.token_count() <= BUDGET
            reply = model.invoke(sent)
            state.append(reply)
            if not isinstance(reply, AIMessage) or not reply.tool_calls:
                break
            state.extend(ToolMessage(read_file(c["args"]["path"]), tool_call_id=str(c["id"]))
                         for c in reply.tool_calls)
    print(f"  state: {len(state)} messages; sent at the end: {len(sent)} "
          f"({memory.token_count()} tokens, budget {BUDGET})")
    return ok


def main() -> int:
    ok = with_history()
    ok = with_hook() and ok
    print(f"under budget with every tool call answered: {ok}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
