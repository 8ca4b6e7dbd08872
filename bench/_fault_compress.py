"""Fault campaign, compaction: generated histories compressed to budgets, in every form.

A history mixes what real agent logs hold and what cut or merged logs add: parallel calls,
results out of order, orphan results, calls without a result, reused and overlong call ids,
text and calls in one message, thinking, images, Chinese and English, one huge message. Each
is compressed at a level and to several budgets, the budget asked for each output form;
every result must be accepted by both APIs (the independent validators of the test suite)
and every emitted form must fit its budget, counted on the form as emitted.
"""

from __future__ import annotations

import random
import traceback
from collections import Counter
from typing import Any

import precis
from _fault_runtime import pairing_errors
from precis.compact import compress
from precis.compact.result import CompressionResult
from precis.model import Image, Message, Part, Text, Thinking, ToolCall, ToolResult

__all__ = ["check_history", "history"]

_WORDS = ("deploy key rotates every thirty days export job writes csv bucket tests run ci "
          "branch main the a of to fix error timeout index query")
_WORD_LIST = _WORDS.split(" ")
_ZH = "导出接口超时数据库索引查询计划内存峰值测试通过需求变化上限参数说明部署密钥"


def _text(rng: random.Random, words: int) -> str:
    if rng.random() < 0.3:
        return "".join(rng.choice(_ZH) for _ in range(words * 2))
    return " ".join(rng.choice(_WORD_LIST) for _ in range(words))


def history(rng: random.Random) -> list[Message]:
    """One generated history (see the module docstring)."""
    out: list[Message] = []
    if rng.random() < 0.6:
        out.append(Message.of("system", _text(rng, rng.randint(3, 80))))
    call = 0
    pending: list[str] = []  # ids of calls whose results are still to come
    for _ in range(rng.randint(1, 18)):
        roll = rng.random()
        if roll < 0.25:
            out.append(Message.of("user", _text(rng, rng.choice([2, 15, 60, 600]))))
        elif roll < 0.55:
            parts: list[Part] = []
            if rng.random() < 0.3:
                parts.append(Thinking(_text(rng, 10), signature="sig" if rng.random() < 0.5
                                      else None))
            if rng.random() < 0.6:
                parts.append(Text(_text(rng, rng.choice([3, 30]))))
            for _ in range(rng.randint(0, 4)):
                call += 1
                ident = rng.choice([f"call_{call}", "0", f"id-{call}-" + "x" * 50,
                                    f"call_{call % 3}"])
                parts.append(ToolCall(ident, rng.choice(["read_file", "run", "search"]),
                                      f'{{"path": "src/m{call}.py"}}'))
                pending.append(ident)
            out.append(Message("assistant", parts or [Text(_text(rng, 5))]))
        elif roll < 0.85 and pending:
            rng.shuffle(pending)
            for _ in range(rng.randint(1, len(pending))):
                ident = pending.pop() if rng.random() < 0.9 else "orphan_" + str(call)
                content = _text(rng, rng.choice([2, 40, 400, 3000]))
                out.append(Message("tool", [ToolResult(ident, content, is_error=rng.random()
                                                       < 0.1, name="run")]))
        elif roll < 0.9:
            out.append(Message("user", [Text(_text(rng, 5)),
                                        Image(url="https://example.com/a.png")]))
        else:
            out.append(Message.of("assistant", _text(rng, rng.choice([5, 50, 300]))))
    if not any(m.role != "system" for m in out):
        out.append(Message.of("user", _text(rng, 5)))
    return out


def _forms(result: CompressionResult, counter: precis.TokenCounter) -> dict[str, int]:
    """Tokens of each emitted form, counted as a user would."""
    anthropic = result.to_anthropic()
    system = anthropic.get("system")
    turns = precis.load(anthropic, format="anthropic").messages if anthropic["messages"] \
        else []
    if system and not anthropic["messages"]:
        turns = [Message.of("system", system)]
    return {
        "openai": counter.count_messages(precis.load(result.to_openai()).messages),
        "anthropic": counter.count_messages(turns),
        "text": counter.count(result.text()),
        "markdown": counter.count(result.to_markdown()),
    }


def check_history(seed: int) -> tuple[Counter[str], dict[str, str]]:
    """Compress the history of ``seed`` at a level and to budgets, every output form."""
    rng = random.Random(seed)
    messages = history(rng)
    counter = precis.get_counter("estimate")
    whole = counter.count_messages(messages)
    counts: Counter[str] = Counter()
    examples: dict[str, str] = {}
    runs: list[tuple[int | None, tuple[str, ...]]] = [(None, ("openai",))]
    for budget in {rng.randint(40, max(41, whole)), max(60, whole // 3), rng.choice([80, 300])}:
        runs.append((budget, ("openai", "anthropic", "text")))
        runs.append((budget, ("markdown",)))
    for budget, forms in runs:
        counts["compress calls"] += 1
        try:
            result = compress(messages, budget=budget, outputs=forms,
                              level=rng.choice(["light", "normal", "heavy", "emergency"]))
        except precis.PrecisError:
            counts["expected errors"] += 1
            continue
        except Exception as err:
            counts["bugs"] += 1
            examples.setdefault("crash", f"seed {seed} budget {budget}: {type(err).__name__}: "
                                         f"{err} {traceback.format_exc()[-200:]}")
            continue
        problems = pairing_errors(result.to_openai(), result.to_anthropic())
        if problems:
            counts["bugs"] += 1
            examples.setdefault("rejected", f"seed {seed} budget {budget}: {problems[0]}")
        if budget is None:
            continue
        sizes = _forms(result, counter)
        over = {f: sizes[f] for f in forms if sizes[f] > budget}
        if over or result.compressed_tokens > budget:
            counts["bugs"] += 1
            examples.setdefault("over budget", f"seed {seed} budget {budget} {forms}: "
                                               f"{over or result.compressed_tokens}")
    return counts, examples


def messages_data(messages: list[Message]) -> list[dict[str, Any]]:
    """A history as OpenAI dicts (to replay a failing seed by hand)."""
    return precis.Conversation(messages=messages).to_openai()
