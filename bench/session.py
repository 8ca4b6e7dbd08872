"""Build the benchmark session: a ~200k-token mixed Chinese / English agent session.

Reproducible (no randomness): it interleaves, in a fixed order, Chinese user / assistant
dialogues from ShareGPT-zh with stretches of a real Claude Code session (English, tool calls
and tool results) and SWE-agent steps, renumbering tool-call ids so every pair stays valid,
until the session holds the requested number of tokens (o200k_base when available, else the
estimator). Written as an OpenAI Chat Completions JSON file.

    python bench/session.py --tokens 200000 -o bench/results/session_200k.json
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import precis
from precis.model import Message, Text, ToolCall, ToolResult

try:  # run as a script or imported by another benchmark
    from _common import DEFAULT_DATA, ROOT, parser, require_data
except ImportError:  # pragma: no cover
    from bench._common import DEFAULT_DATA, ROOT, parser, require_data

DEFAULT_OUT = ROOT / "bench" / "results"


def _counter() -> precis.TokenCounter:
    """o200k_base from the shared tokenizer files when present, else the estimator."""
    tokenizers = DEFAULT_DATA / "tokenizers"
    if tokenizers.is_dir():
        os.environ.setdefault("PRECIS_TOKENIZER_DIR", str(tokenizers))
    try:
        return precis.get_counter("o200k_base")
    except precis.PrecisError:
        return precis.get_counter("estimate")


def _renumber(messages: list[Message], prefix: str) -> list[Message]:
    out = []
    for m in messages:
        parts: list[Any] = []
        for p in m.parts:
            if isinstance(p, ToolCall):
                parts.append(ToolCall(id=f"{prefix}{p.id}", name=p.name, arguments=p.arguments))
            elif isinstance(p, ToolResult):
                parts.append(ToolResult(call_id=f"{prefix}{p.call_id}", content=p.content,
                                        is_error=p.is_error, name=p.name))
            else:
                parts.append(p)
        out.append(Message(role=m.role, parts=parts, name=m.name))
    return out


def _chunks(messages: list[Message], size: int) -> Iterator[list[Message]]:
    """Runs of about ``size`` messages that never split a tool call from its result."""
    start = 0
    while start < len(messages):
        end = min(start + size, len(messages))
        while end < len(messages) and messages[end].role == "tool":
            end += 1
        yield messages[start:end]
        start = end


def _paired(messages: list[Message]) -> list[Message]:
    """Drop tool calls without results and results without calls (keeps the session valid)."""
    calls = {p.id for m in messages for p in m.parts if isinstance(p, ToolCall)}
    results = {p.call_id for m in messages for p in m.parts if isinstance(p, ToolResult)}
    kept = []
    for m in messages:
        parts = [p for p in m.parts
                 if not (isinstance(p, ToolCall) and p.id not in results)
                 and not (isinstance(p, ToolResult) and p.call_id not in calls)]
        parts = [p for p in parts if p.kind in ("text", "tool_call", "tool_result")]
        if parts:
            kept.append(Message(role=m.role, parts=parts, name=m.name))
    return kept


def build_session(data: Path, tokens: int) -> list[Message]:
    zh = precis.load_all(require_data(data, "transcripts", "zh", "sharegpt-zh-first500.jsonl"))
    en_sources = [
        precis.load(require_data(data, "transcripts", "claude-code",
                                 "python-to-rust-port.transcript.jsonl")),
        precis.load(require_data(data, "transcripts", "openai",
                                 "swe-agent-marshmallow-1867.traj")),
    ]
    en_chunks = [c for conv in en_sources
                 for c in _chunks(_paired([m for m in conv.messages if m.role != "system"]), 12)]
    counter = _counter()
    session = [Message(role="system", parts=[Text(
        "You are a coding agent. 你是一个编程助手，请用用户的语言回答。")])]
    total = counter.count_messages(session)
    round_no = 0
    while total < tokens:
        zh_conv = zh.conversations[round_no % len(zh)]
        en_chunk = en_chunks[round_no % len(en_chunks)]
        block = [m for m in zh_conv.messages if m.role in ("user", "assistant")]
        block += _renumber(en_chunk, f"r{round_no}_")
        for message in block:
            session.append(message)
            total += counter.count_message(message)
            if total >= tokens:
                break
        round_no += 1
    # A history may not end inside a tool exchange: trim to the last complete pair.
    return _paired(session)


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--tokens", type=int, default=200_000)
    p.add_argument("-o", "--out", type=Path, default=None)
    args = p.parse_args()
    out = args.out or DEFAULT_OUT / f"session_{args.tokens // 1000}k.json"
    messages = build_session(args.data, args.tokens)
    conv = precis.Conversation(messages=messages)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(conv.to_openai(), ensure_ascii=False), encoding="utf-8")
    counter = _counter()
    print(f"wrote {out}: {len(messages)} messages, "
          f"{counter.count_messages(messages):,} tokens ({counter.name})")


if __name__ == "__main__":
    main()
