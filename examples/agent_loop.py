"""A plain-Python agent loop kept under a small budget by ``ContextMemory`` (no network).

A scripted stand-in for the model reads files and runs commands whose outputs are large,
answers each request, and at the end asks for an offloaded tool output back through
precis's ``context_reload`` tool. Before every model call the loop calls
``compress_if_needed()``; the context it sends never exceeds the budget, and every tool call
keeps its result. At the end it prints the event log and the reload.

    python examples/agent_loop.py
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from precis.runtime import (
    RELOAD_TOOL_NAME,
    RELOAD_TOOL_OPENAI,
    ContextConfig,
    ContextMemory,
    handle_tool_call,
)

__all__ = ["ScriptedModel", "dispatch", "main", "read_file", "run_command"]

Msg = dict[str, Any]

TOOLS: list[Msg] = [
    {"type": "function", "function": {
        "name": "read_file", "description": "Read a file of the project.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                       "required": ["path"]}}},
    {"type": "function", "function": {
        "name": "run_command", "description": "Run a shell command in the project.",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}},
                       "required": ["command"]}}},
    RELOAD_TOOL_OPENAI,
]

# (request, [(tool, arguments), ...], answer)
TASKS: list[tuple[str, list[tuple[str, Msg]], str]] = [
    ("Why does the test suite fail? Start with src/billing/invoice.py.",
     [("read_file", {"path": "src/billing/invoice.py"}),
      ("run_command", {"command": "pytest tests/billing -x -q"})],
     "The failure is in Invoice.total(): the discount is applied after tax."),
    ("Look at the tax rules too.",
     [("read_file", {"path": "src/billing/tax.py"}),
      ("run_command", {"command": "grep -rn 'round(' src/billing"})],
     "tax.py rounds each line to 2 places; total() should round once at the end."),
    ("Fix it and run the tests again.",
     [("run_command", {"command": "sed -i 's/round(line, 2)/line/' src/billing/tax.py"}),
      ("run_command", {"command": "pytest tests/billing -q"}),
      ("read_file", {"path": "CHANGELOG.md"})],
     "Fixed: the suite passes (212 tests); CHANGELOG.md has no entry yet."),
    *[(f"Now review src/billing/{module}.py and run its tests.",
       [("read_file", {"path": f"src/billing/{module}.py"}),
        ("run_command", {"command": f"pytest tests/billing/test_{module}.py -q"}),
        ("run_command", {"command": f"grep -rn 'round(' src/billing/{module}.py"})],
       f"{module}.py has the same per-line rounding; its tests pass.")
      for module in ("refunds", "payments", "ledger", "reports", "currency", "exports")],
    ("What exactly did the first failing test print? Quote it.",
     [("context_reload", {})],  # the id comes from the offload note in the context
     "The first failing test printed: {quote}"),
]


# -- the tools -----------------------------------------------------------------------------


def read_file(path: str) -> str:
    """A made-up source file of about 8,000 characters."""
    name = path.rsplit("/", 1)[-1].split(".")[0]
    lines = [f"# {path}", "from decimal import Decimal", ""]
    for n in range(60):
        lines.append(f"def {name}_rule_{n}(amount: Decimal) -> Decimal:")
        lines.append(f"    return round(amount * Decimal('1.{n:02d}'), 2)  # rule {n}")
    return "\n".join(lines)


def run_command(command: str) -> str:
    """A made-up command output; pytest prints a long log with one failure."""
    if command.startswith("pytest"):
        passed = 212 if "-x" not in command else 57
        out = [f"tests/billing/test_case_{n}.py::test_total_{n} PASSED" for n in range(passed)]
        if "-x" in command:
            out += ["tests/billing/test_invoice.py::test_discount_before_tax FAILED",
                    "E   AssertionError: assert Decimal('107.99') == Decimal('108.00')",
                    "FAILED tests/billing/test_invoice.py::test_discount_before_tax"]
        return "\n".join(out)
    if command.startswith("grep"):
        return "\n".join(f"src/billing/tax.py:{n}:    return round(line, 2)"
                         for n in range(10, 400, 3))
    return ""


def dispatch(memory: ContextMemory, name: str, arguments: str) -> str:
    """Run one tool call: precis answers ``context_reload``, the project tools the rest."""
    reloaded = handle_tool_call(memory, name, arguments)
    if reloaded is not None:
        return reloaded
    args = json.loads(arguments)
    if name == "read_file":
        return read_file(args["path"])
    if name == "run_command":
        return run_command(args["command"])
    return f"error: unknown tool {name!r}"


# -- the model -----------------------------------------------------------------------------

_OFFLOAD_ID = re.compile(r"id=(ctx-[0-9a-f]+)")


class ScriptedModel:
    """Plays ``TASKS``: the tool calls of each request one by one, then the answer.

    Like a real model it only sees the request it is sent: it finds the offload id to
    reload in the offload notes of that context.
    """

    def __init__(self) -> None:
        self._steps: Iterator[tuple[str, Msg] | str] = self._script()
        self._calls = 0

    def _script(self) -> Iterator[tuple[str, Msg] | str]:
        for _request, calls, answer in TASKS:
            yield from calls
            yield answer

    def __call__(self, messages: list[Msg], tools: list[Msg]) -> Msg:
        assert {t["function"]["name"] for t in tools} >= {RELOAD_TOOL_NAME}
        step = next(self._steps)
        if isinstance(step, str):
            last = messages[-1]
            quote = next((line.strip() for line in str(last.get("content")).splitlines()
                          if "Error" in line), "(nothing found)")
            return {"role": "assistant", "content": step.replace("{quote}", quote)}
        name, args = step
        if name == RELOAD_TOOL_NAME:
            args = {"offload_id": _offload_of(messages, "-x"), "contains": "-x"}
        self._calls += 1
        return {"role": "assistant", "content": None, "tool_calls": [{
            "id": f"call_{self._calls}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}]}


def _offload_of(messages: list[Msg], needle: str) -> str:
    """The offload id of the output of the call whose arguments hold ``needle``: from the
    note left in its result, or, when the whole exchange was folded into a summary, from
    the note of the summary that mentions it."""
    wanted = {c["id"] for m in messages for c in m.get("tool_calls") or []
              if needle in c["function"]["arguments"]}
    for m in messages:
        content = m.get("content")
        text = content if isinstance(content, str) else ""
        ids: list[str] = _OFFLOAD_ID.findall(text)
        if ids and (m.get("tool_call_id") in wanted or needle in text):
            return ids[-1]
    # folded into a summary of earlier rounds: the latest summary's offload holds every
    # message before it (earlier summaries and offloads expanded), so reload that one
    summaries = [i for m in messages if isinstance(m.get("content"), str)
                 and "earlier messages" in m["content"]
                 for i in _OFFLOAD_ID.findall(m["content"])]
    return summaries[-1] if summaries else "ctx-none"


# -- the loop ------------------------------------------------------------------------------


def main() -> int:
    memory = ContextMemory(config=ContextConfig(max_tokens=4000, last_keep=6,
                                                min_consecutive_tool=4))
    budget = memory.config.budget
    model = ScriptedModel()
    memory.add({"role": "system", "content": "You are a coding agent working on a billing "
                                             "service. Use the tools; answer briefly."})
    peak = 0
    reload_text = ""
    for request, _calls, _answer in TASKS:
        memory.add({"role": "user", "content": request})
        print(f"user: {request}")
        while True:
            memory.compress_if_needed()  # the pre-model-call hook
            sent = memory.to_openai()
            peak = max(peak, memory.token_count())
            assert memory.token_count() <= budget, "over budget at a model call"
            reply = model(sent, TOOLS)
            memory.add(reply)
            if not reply.get("tool_calls"):
                print(f"assistant: {reply['content']}")
                break
            for call in reply["tool_calls"]:
                fn = call["function"]
                result = dispatch(memory, fn["name"], fn["arguments"])
                print(f"  tool {fn['name']}({fn['arguments']}) -> {len(result):,} characters")
                if fn["name"] == RELOAD_TOOL_NAME:
                    reload_text = result
                memory.add({"role": "tool", "tool_call_id": call["id"], "content": result})

    print()
    print(f"budget {budget:,} tokens; peak at a model call {peak:,}; now "
          f"{memory.token_count():,} tokens in {len(memory.messages())} messages "
          f"(full history: {len(memory.original())} messages)")
    print("event log:")
    for e in memory.events():
        print(f"  {e.strategy:<18} {e.messages_before:>3} -> {e.messages_after:<3} messages  "
              f"{e.tokens_before:>6,} -> {e.tokens_after:<6,} tokens  {e.elapsed_ms:6.1f} ms  "
              f"offloads {', '.join(e.offload_ids) or '-'}")
    print(f"offloaded ids: {', '.join(memory.offloaded()) or '-'}")
    ok = bool(reload_text) and not reload_text.startswith("error")
    print()
    print(f"reload {'ok' if ok else 'FAILED'}: {len(reload_text):,} characters back; "
          "first lines:")
    for line in reload_text.splitlines()[:4]:
        print(f"  | {line}")
    return 0 if ok and memory.events() else 1


if __name__ == "__main__":
    raise SystemExit(main())
