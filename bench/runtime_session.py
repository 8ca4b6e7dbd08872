"""A long simulated agent session through ``ContextMemory``: overhead, budget, facts kept.

Real agent transcripts from the shared data (Claude Code sessions, a SWE-agent trajectory,
OpenHands runs, tau-bench airline dialogues, Anthropic bashkit evals; system prompts left
out, thinking blocks dropped, unanswered calls removed) are concatenated after one system
prompt and repeated, each pass with its own suffix on the tool-call ids so every id stays
unique, until the session holds ``--tokens`` tokens (o200k_base from the shared tokenizers,
else the estimator). The messages are fed one by one into
``ContextMemory(config=ContextConfig(max_tokens=--budget, token_ratio=1.0))`` with the same
tokenizer, and ``compress_if_needed()`` runs before every assistant message, as an agent
loop does before each model call.

Reported: the time of each ``compress_if_needed()`` call (p50 / p95 / max, and the calls
that compacted); the largest working context at a model call against the budget (it must
never be over) and before compaction; the events per strategy (count, mean ms, tokens
saved); whether the working context is valid for the OpenAI and Anthropic APIs (the
independent validators of ``tests/compact/_api_rules.py``) at every ``--check-every``-th
model call and at the end; and exact-fact retention at the end: the distinct facts
(``precis.compact._facts.facts``: URLs, paths, commands, identifiers, numbers, error names)
of the fragments ``precis.analysis.analyze`` rates HIGH over the full history, and the
share of them present verbatim in the final working context, then in the working context
plus everything offloaded (what ``context_reload`` can bring back).

    python bench/runtime_session.py [--tokens 500000] [--budget 64000] [--json OUT]
"""

from __future__ import annotations

import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import precis
from _common import api_rules, parser, print_table, require_data, write_json
from precis.model import Conversation, Message, Part, Text, ToolCall, ToolResult
from precis.runtime import STRATEGIES, CompressionEvent, ContextConfig, ContextMemory
from session import _counter, _paired

__all__ = ["FACT_KINDS", "build_session", "fact_retention", "main", "message_text", "replay"]

FACT_KINDS = ("url", "path", "command", "identifier", "number", "error")
TARGET_P95_MS = 20.0
SYSTEM_PROMPT = ("You are a coding agent. Use the tools to inspect and change the project; "
                 "call context_reload with an offload id when you need offloaded content back.")
# (folder, file, conversations to take: None for a single-conversation file)
SOURCES: tuple[tuple[str, str, tuple[int, ...] | None], ...] = (
    ("claude-code", "python-to-rust-port.transcript.jsonl", None),
    ("openai", "swe-agent-marshmallow-1867.traj", None),
    ("claude-code", "marot-spotter.subagent-aa84377.jsonl", None),
    ("openai", "openhands-multi-swe-bench.output.jsonl", (0, 1, 2)),
    ("anthropic", "bashkit-eval-claude-opus-4-7.json", tuple(range(8))),
    ("openai", "tau-bench-gpt-4o-airline-first100.json", tuple(range(6))),
)


# -- the session ---------------------------------------------------------------------------


def _source_blocks(data: Path) -> list[tuple[str, list[Message]]]:
    """Each source conversation without system prompts, thinking or unanswered calls."""
    blocks: list[tuple[str, list[Message]]] = []
    for folder, name, picks in SOURCES:
        path = require_data(data, "transcripts", folder, name)
        convs = [precis.load(path)] if picks is None else [precis.load(path, pick=i)
                                                            for i in picks]
        for n, conv in enumerate(convs):
            body = _paired([m for m in conv.messages if m.role != "system"])
            if body:
                blocks.append((f"{name}#{n}" if picks else name, body))
    return blocks


def _shifted(messages: list[Message], suffix: str, start: int) -> list[Message]:
    """The messages with ``suffix`` on every tool-call id and ids ``m<start>``, ...

    A few sources reuse a call id within one conversation (tau-bench, SWE-agent), so an id
    that comes back also gets its occurrence number; a result answers the latest call of
    its id.
    """
    out: list[Message] = []
    seen: Counter[str] = Counter()
    current: dict[str, str] = {}
    for n, m in enumerate(messages):
        parts: list[Part] = []
        for p in m.parts:
            if isinstance(p, ToolCall):
                seen[p.id] += 1
                again = f"x{seen[p.id]}" if seen[p.id] > 1 else ""
                tail = f"{again}{suffix}"
                current[p.id] = new_id = p.id[: 40 - len(tail)] + tail
                parts.append(ToolCall(id=new_id, name=p.name, arguments=p.arguments))
            elif isinstance(p, ToolResult):
                parts.append(ToolResult(call_id=current.get(p.call_id, p.call_id + suffix),
                                        content=p.content, is_error=p.is_error, name=p.name))
            else:
                parts.append(p)
        out.append(Message(role=m.role, parts=parts, id=f"m{start + n}", name=m.name))
    return out


def build_session(data: Path, tokens: int, counter: precis.TokenCounter
                  ) -> tuple[list[Message], list[str]]:
    """The session of about ``tokens`` tokens, and the names of the sources it holds."""
    blocks = _source_blocks(data)
    session = [Message("system", [Text(SYSTEM_PROMPT)], id="m0")]
    total = counter.count_messages(session)
    used: list[str] = []
    passes = 0
    while total < tokens:
        for b, (name, block) in enumerate(blocks):
            # some ids repeat across a file's conversations (bashkit's toolu_01, ...)
            shifted = _shifted(block, f"_{passes}_{b}", len(session))
            session.extend(shifted)
            total += sum(counter.count_message(m) for m in shifted)
            if passes == 0:
                used.append(name)
            if total >= tokens:
                break
        passes += 1
    return session, used


# -- the replay ----------------------------------------------------------------------------


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def _api_errors(memory: ContextMemory, rules: ModuleType) -> tuple[list[str], list[str]]:
    return (list(rules.openai_errors(memory.to_openai())),
            list(rules.anthropic_errors(memory.to_anthropic())))


def replay(session: list[Message], memory: ContextMemory, rules: ModuleType,
           check_every: int) -> dict[str, Any]:
    """Feed ``session`` into ``memory``, compacting before every assistant message."""
    budget = memory.config.budget
    times: list[float] = []
    compacted: list[bool] = []
    peak_call = peak_before = 0
    over_budget: list[int] = []
    over_count = 0  # calls still at msg_threshold messages after compaction
    checks = openai_bad = anthropic_bad = 0
    first_errors: list[str] = []
    events: list[CompressionEvent] = []
    for n, message in enumerate(session):
        if message.role == "assistant":
            before = memory.token_count()
            peak_before = max(peak_before, before)
            start = time.perf_counter()
            done = memory.compress_if_needed()
            times.append((time.perf_counter() - start) * 1000)
            events.extend(done)
            compacted.append(bool(done))
            tokens = memory.token_count()
            peak_call = max(peak_call, tokens)
            if tokens > budget:
                over_budget.append(n)
            over_count += len(memory.messages()) >= memory.config.msg_threshold
            if check_every and len(times) % check_every == 0:
                checks += 1
                oa, an = _api_errors(memory, rules)
                openai_bad += bool(oa)
                anthropic_bad += bool(an)
                first_errors.extend(f"call {len(times)}: {e}" for e in (oa + an)[:2]
                                    if len(first_errors) < 6)
        memory.add(message)
    oa, an = _api_errors(memory, rules)
    return {
        "model_calls": len(times),
        "compacting_calls": sum(compacted),
        "overhead_ms": {
            "p50": _percentile(times, 0.50),
            "p95": _percentile(times, 0.95),
            "max": max(times, default=0.0),
            "mean": statistics.fmean(times) if times else 0.0,
            "p95_quiet": _percentile([t for t, c in zip(times, compacted) if not c], 0.95),
            "p50_compacting": _percentile([t for t, c in zip(times, compacted) if c], 0.5),
        },
        "budget": budget,
        "peak_tokens_at_call": peak_call,
        "peak_tokens_before_compaction": peak_before,
        "calls_over_budget": len(over_budget),
        "calls_at_msg_threshold": over_count,
        "final_tokens": memory.token_count(),
        "final_messages": len(memory.messages()),
        "api_checks": checks,
        "openai_invalid_checks": openai_bad,
        "anthropic_invalid_checks": anthropic_bad,
        "final_openai_errors": oa[:5],
        "final_anthropic_errors": an[:5],
        "first_check_errors": first_errors,
        "events": events,
    }


def strategy_rows(events: list[CompressionEvent]) -> list[dict[str, Any]]:
    by: dict[str, list[CompressionEvent]] = defaultdict(list)
    for e in events:
        by[e.strategy].append(e)
    rows = []
    for name in STRATEGIES:
        found = by.get(name, [])
        rows.append({
            "strategy": name,
            "events": len(found),
            "mean_ms": statistics.fmean(e.elapsed_ms for e in found) if found else 0.0,
            "max_ms": max((e.elapsed_ms for e in found), default=0.0),
            "tokens_saved": sum(e.tokens_before - e.tokens_after for e in found),
            "messages_replaced": sum(e.replaced for e in found),
        })
    return rows


# -- exact facts ---------------------------------------------------------------------------


def message_text(messages: list[Message]) -> str:
    """Every text, tool-call argument and tool result of ``messages``, one per line."""
    lines: list[str] = []
    for m in messages:
        for p in m.parts:
            if isinstance(p, ToolCall):
                lines.append(p.name)
                lines.append(p.arguments)
            elif isinstance(p, ToolResult):
                lines.append(p.content)
            else:
                text = getattr(p, "text", None)
                if isinstance(text, str):
                    lines.append(text)
    return "\n".join(lines)


def fact_retention(memory: ContextMemory) -> dict[str, Any]:
    """Distinct exact facts of the HIGH fragments of the full history, and the share of
    them found verbatim in the working context, and in it plus the offloaded content."""
    from precis.analysis import analyze
    from precis.compact._facts import facts

    start = time.perf_counter()
    analysis = analyze(Conversation(messages=memory.original()))
    analyze_s = time.perf_counter() - start
    wanted: set[tuple[str, str]] = set()
    high = 0
    for item in analysis.items():
        if item.importance.level != "HIGH":
            continue
        high += 1
        wanted.update((f.kind, f.text) for f in facts(item.fragment.text)
                      if f.kind in FACT_KINDS)
    working = message_text(memory.messages())
    offloaded = "\n".join(message_text(ms) for ms in memory.offloaded().values())
    reloadable = working + "\n" + offloaded
    per_kind: dict[str, Counter[str]] = {k: Counter() for k in FACT_KINDS}
    for kind, text in wanted:
        row = per_kind[kind]
        row["facts"] += 1
        row["working"] += text in working
        row["reloadable"] += text in reloadable
    total = len(wanted)
    in_working = sum(r["working"] for r in per_kind.values())
    in_reload = sum(r["reloadable"] for r in per_kind.values())
    return {
        "fragments": len(analysis),
        "high_fragments": high,
        "facts": total,
        "in_working": in_working,
        "in_reloadable": in_reload,
        "working_share": in_working / total if total else 0.0,
        "reloadable_share": in_reload / total if total else 0.0,
        "per_kind": {k: dict(v) for k, v in per_kind.items()},
        "analyze_s": analyze_s,
    }


# -- main ----------------------------------------------------------------------------------


def _pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--tokens", type=int, default=500_000, help="session length in tokens")
    p.add_argument("--budget", type=int, default=64_000,
                   help="working-context budget in tokens (ContextConfig.max_tokens, "
                        "token_ratio 1.0)")
    p.add_argument("--msg-threshold", type=int, default=ContextConfig.msg_threshold,
                   help="ContextConfig.msg_threshold (seed 004's default: 100)")
    p.add_argument("--check-every", type=int, default=25, metavar="N",
                   help="validate the working context for both APIs every N model calls "
                        "(0: only at the end)")
    args = p.parse_args()
    counter = _counter()
    session, used = build_session(args.data, args.tokens, counter)
    session_tokens = counter.count_messages(session)
    print(f"session: {len(session):,} messages, {session_tokens:,} tokens ({counter.name}) "
          f"from {len(used)} source conversations, repeated with shifted tool-call ids")
    config = ContextConfig(max_tokens=args.budget, token_ratio=1.0,
                           msg_threshold=args.msg_threshold)
    memory = ContextMemory(config=config, tokenizer=counter)
    started = time.perf_counter()
    run = replay(session, memory, api_rules(), args.check_every)
    wall = time.perf_counter() - started
    events: list[CompressionEvent] = run.pop("events")
    ms = run["overhead_ms"]
    print()
    print_table(
        ["model calls", "compacting", "p50 ms", "p95 ms", "max ms", "mean ms", "target p95"],
        [[run["model_calls"], run["compacting_calls"], ms["p50"], ms["p95"], ms["max"],
          ms["mean"], f"< {TARGET_P95_MS:.0f} ms"]],
        title="compress_if_needed() before each assistant message",
    )
    print()
    print_table(
        ["budget", "peak at call", "peak before compaction", "calls over budget",
         "calls >= msg threshold", "final tokens", "final messages"],
        [[run["budget"], f"{run['peak_tokens_at_call']:,} "
          f"({_pct(run['peak_tokens_at_call'], run['budget'])})",
          run["peak_tokens_before_compaction"], run["calls_over_budget"],
          run["calls_at_msg_threshold"], run["final_tokens"], run["final_messages"]]],
        title="working context (tokens)",
    )
    rows = strategy_rows(events)
    print()
    print_table(["strategy", "events", "mean ms", "max ms", "tokens saved", "msgs replaced"],
                [[r["strategy"], r["events"], r["mean_ms"], r["max_ms"], r["tokens_saved"],
                  r["messages_replaced"]] for r in rows],
                title="events per strategy")
    print()
    print(f"API validity: {run['api_checks']} checks during the run, OpenAI invalid "
          f"{run['openai_invalid_checks']}, Anthropic invalid {run['anthropic_invalid_checks']}; "
          f"final context: OpenAI {'valid' if not run['final_openai_errors'] else 'INVALID'}, "
          f"Anthropic {'valid' if not run['final_anthropic_errors'] else 'INVALID'}")
    for error in run["final_openai_errors"] + run["final_anthropic_errors"] + \
            run["first_check_errors"]:
        print(f"  {error}")
    facts = fact_retention(memory)
    print()
    print_table(
        ["kind", "facts", "in working", "in working + offloaded"],
        [[k, v.get("facts", 0), _pct(v.get("working", 0), v.get("facts", 0)),
          _pct(v.get("reloadable", 0), v.get("facts", 0))]
         for k, v in facts["per_kind"].items()]
        + [["all", facts["facts"], _pct(facts["in_working"], facts["facts"]),
            _pct(facts["in_reloadable"], facts["facts"])]],
        title=f"exact facts of the {facts['high_fragments']:,} HIGH fragments "
              f"(of {facts['fragments']:,}; analyze took {facts['analyze_s']:.1f} s)",
    )
    ok = run["calls_over_budget"] == 0 and ms["p95"] < TARGET_P95_MS
    print()
    print(f"replay {wall:.1f} s; targets (p95 < {TARGET_P95_MS:.0f} ms, never over budget): "
          f"{'met' if ok else 'NOT met'}")
    write_json(args.json, {
        "benchmark": "runtime_session",
        "tokenizer": counter.name,
        "session": {"messages": len(session), "tokens": session_tokens, "sources": used},
        "config": {"max_tokens": config.max_tokens, "token_ratio": config.token_ratio,
                   "msg_threshold": config.msg_threshold, "budget": config.budget},
        "replay_s": wall,
        **run,
        "strategies": rows,
        "facts": facts,
        "targets": {"p95_ms": TARGET_P95_MS, "met": ok},
    })


if __name__ == "__main__":
    main()
