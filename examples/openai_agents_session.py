"""An OpenAI Agents SDK agent whose history precis keeps under budget (no network, no LLM).

A scripted stand-in for the model (an ``agents.Model``) asks for large files, then answers;
``Runner.run`` keeps the conversation in a ``PrecisSession`` with a 3,000-token budget. Before
each run the SDK reads the history from the session, which compacts it first: the script
prints each compaction and what the model was sent, checks that every ``function_call``
the model sees has its ``function_call_output``, and at the end reads an offloaded file
back with precis's ``context_reload`` tool.

    pip install 'precis[openai-agents]'
    python examples/openai_agents_session.py
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Any

try:
    from agents import (
        Agent,
        Model,
        ModelResponse,
        Runner,
        Usage,
        function_tool,
        set_tracing_disabled,
    )
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )
except ImportError:
    raise SystemExit("this example needs the OpenAI Agents SDK: "
                     "pip install 'precis[openai-agents]'") from None

from precis.adapters.openai_agents import PrecisSession
from precis.runtime import CompressionEvent, ContextConfig, ContextMemory, handle_tool_call

__all__ = ["ScriptedModel", "main"]

BUDGET = 3000
MODULES = ("invoice", "tax", "refunds", "payments", "ledger", "reports", "currency", "exports")
memory = ContextMemory(config=ContextConfig(max_tokens=BUDGET, last_keep=4, large_payload=1500))


@function_tool
def read_file(path: str) -> str:
    """Read a file of the project."""
    name = path.rsplit("/", 1)[-1].split(".")[0]
    lines = [f"# {path}"] + [f"def {name}_rule_{n}(amount): return round(amount * 1.{n:02d}, 2)"
                             for n in range(40)]
    return "\n".join(lines)


@function_tool
def context_reload(offload_id: str, contains: str) -> str:
    """Return the original content that the context manager offloaded (by its id), only the
    messages holding ``contains``."""
    arguments = {"offload_id": offload_id, "contains": contains}
    return handle_tool_call(memory, "context_reload", arguments) or ""


class ScriptedModel(Model):
    """Reads the files a request names, then answers; asked to quote, it reloads an offload."""

    def __init__(self) -> None:
        self.sent: list[list[dict[str, Any]]] = []
        self.tools: dict[str, str] = {}  # call id -> tool name

    async def get_response(self, system_instructions: str | None, input: Any,
                           model_settings: Any, tools: Any, output_schema: Any,
                           handoffs: Any, tracing: Any, **kwargs: Any) -> ModelResponse:
        items = [input] if isinstance(input, str) else [dict(i) for i in input]
        self.sent.append(items)
        last = items[-1] if isinstance(items[-1], dict) else {"role": "user", "content": input}
        if last.get("type") == "function_call_output":
            output = str(last.get("output"))
            if self.tools.get(str(last.get("call_id"))) == "context_reload":
                found = re.search(r"def [^\n]*", output)
                return _response([_message("It starts: " + (found[0] if found else output))])
            return _response([_message(f"Reviewed: {len(output)} characters of code read.")])
        request = str(last.get("content"))
        if "quote" in request.lower():
            ids = re.findall(r"id=(ctx-[0-9a-f]+)", json.dumps(items))
            if not ids:
                return _response([_message("Nothing was offloaded.")])
            return _response([self._call("context_reload", {
                "offload_id": ids[0], "contains": "src/billing/invoice.py"})])
        module = request.split()[-1].strip(".")
        return _response([self._call("read_file", {"path": f"src/billing/{module}.py"}),
                          self._call("read_file", {"path": f"tests/billing/test_{module}.py"})])

    def _call(self, name: str, arguments: dict[str, str]) -> ResponseFunctionToolCall:
        number = len(self.tools) + 1
        self.tools[f"call_{number}"] = name
        return ResponseFunctionToolCall(type="function_call", id=f"fc_{number}",
                                        call_id=f"call_{number}", name=name,
                                        arguments=json.dumps(arguments), status="completed")

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("this example does not stream")


def _message(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(id="msg_1", type="message", role="assistant",
                                 status="completed",
                                 content=[ResponseOutputText(type="output_text", text=text,
                                                             annotations=[])])


def _response(output: list[Any]) -> ModelResponse:
    return ModelResponse(output=output, usage=Usage(), response_id=None)


def pairs_ok(items: list[dict[str, Any]]) -> bool:
    """Every function_call has its output later, every output a call before it."""
    calls: set[str] = set()
    answered: set[str] = set()
    for item in items:
        if item.get("type") == "function_call":
            calls.add(item["call_id"])
        elif item.get("type") == "function_call_output":
            if item["call_id"] not in calls:
                return False
            answered.add(item["call_id"])
    return calls == answered


def report(events: list[CompressionEvent]) -> None:
    for e in events:
        print(f"    compaction: {e.strategy:<18} {e.messages_before:>3} -> {e.messages_after:<3}"
              f" messages, {e.tokens_before:>5} -> {e.tokens_after:<5} tokens")


async def main() -> int:
    set_tracing_disabled(True)  # no trace export: nothing leaves the machine
    model = ScriptedModel()
    agent = Agent(name="reviewer", instructions="Review the billing code.", model=model,
                  tools=[read_file, context_reload])
    session = PrecisSession(memory, session_id="billing-review", on_compress=report)
    requests = [f"Review the module {m}." for m in MODULES] + ["Quote the first file you read."]
    ok = True
    for request in requests:
        result = await Runner.run(agent, request, session=session)
        history = await session.get_items()
        ok = ok and pairs_ok([dict(i) for i in history]) and memory.token_count() <= BUDGET
        print(f"{request:<32} -> {result.final_output[:70]}")
        print(f"    session: {len(history)} items, {memory.token_count()} tokens "
              f"(budget {BUDGET}); full history {len(memory.original())} messages")
    ok = ok and all(pairs_ok(sent) for sent in model.sent if isinstance(sent[0], dict))
    print(f"\n{len(memory.events())} compactions, {len(memory.offloaded())} offloads; "
          f"tool pairs valid and under budget: {ok}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
