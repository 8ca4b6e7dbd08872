"""Fault campaign, agent runtime: ``ContextMemory`` over generated agent sessions.

A session is a system prompt (or none), rounds of a user request, assistant turns with one
to four parallel tool calls whose results arrive one by one in random order, and a final
answer; Chinese and English text; payloads from a few words to thousands of characters.
Budgets and thresholds vary. After every ``add()`` the exports must satisfy both APIs'
pairing rules (checked by the independent validators of ``tests/compact/_api_rules.py``);
after every ``compress_if_needed()`` the working context must also fit its budget, and no
stub may stand for a call whose real result arrived.
"""

from __future__ import annotations

import json
import random
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

import precis
from _common import api_rules
from precis.runtime import ContextConfig, ContextMemory, handle_tool_call

__all__ = ["check_reload", "pairing_errors", "reload_cases", "run_session", "session"]

ROOT = Path(__file__).resolve().parents[1]
_EN = ("the deploy key rotates every thirty days and the export job writes csv files to "
       "the bucket while tests run in ci on branch main")
_EN_WORDS = _EN.split(" ")
_ZH = list("导出接口超时数据库索引查询计划内存峰值测试通过需求变化上限参数说明部署密钥")


_RULES = api_rules()


def pairing_errors(openai: Any, anthropic: Any) -> list[str]:
    """What either API would reject in the two exports."""
    return [*_RULES.openai_errors(openai), *_RULES.anthropic_errors(anthropic)]


def _text(rng: random.Random, words: int) -> str:
    if rng.random() < 0.3:
        return "".join(rng.choice(_ZH) for _ in range(words))
    return " ".join(rng.choice(_EN_WORDS) for _ in range(words))


def session(rng: random.Random) -> list[dict[str, Any]]:
    """One generated agent session as OpenAI message dicts, in arrival order."""
    out: list[dict[str, Any]] = []
    if rng.random() < 0.7:
        out.append({"role": "system", "content": _text(rng, rng.randint(5, 60))})
    call = 0
    for _ in range(rng.randint(2, 14)):
        out.append({"role": "user", "content": _text(rng, rng.choice([3, 20, 80, 400]))})
        for _ in range(rng.randint(0, 3)):
            calls = []
            for _ in range(rng.randint(1, 4)):
                call += 1
                calls.append({"id": f"call_{call}", "type": "function", "function": {
                    "name": rng.choice(["read_file", "run"]),
                    "arguments": json.dumps({"path": f"src/m{call}.py"})}})
            out.append({"role": "assistant", "tool_calls": calls,
                        "content": _text(rng, 5) if rng.random() < 0.5 else None})
            for c in rng.sample(calls, len(calls)):  # results one by one, any order
                out.append({"role": "tool", "tool_call_id": c["id"],
                            "name": c["function"]["name"],
                            "content": _text(rng, rng.choice([5, 50, 300, 1500]))})
        out.append({"role": "assistant", "content": _text(rng, rng.choice([5, 40, 200]))})
    return out


def _stub_kept(memory: ContextMemory) -> str | None:
    """A call whose real result arrived while the working context shows a stub for it."""
    arrived = {r.call_id for m in memory.original() for r in m.tool_results}
    for m in memory.messages():
        if m.metadata.get("precis_repair") == "add-missing-result":
            for r in m.tool_results:
                if r.call_id in arrived:
                    return r.call_id
    return None


def run_session(seed: int, *, every_add: bool = True) -> tuple[Counter[str], dict[str, str]]:
    """Replay the session of ``seed``; counts of checks and failures, and an example of
    each failure. ``every_add``: compact after every message (else before each model call,
    i.e. after user and tool messages)."""
    rng = random.Random(seed)
    items = session(rng)
    budget = rng.choice([300, 600, 1200, 3000, 8000])
    config = ContextConfig(max_tokens=budget * 4 // 3 + 1, token_ratio=0.75,
                           msg_threshold=rng.choice([8, 20, 100]),
                           last_keep=rng.choice([2, 5, 50]),
                           large_payload=rng.choice([500, 2000, 5120]))
    memory = ContextMemory(config=config)
    counts: Counter[str] = Counter()
    examples: dict[str, str] = {}

    def fail(kind: str, detail: str) -> None:
        counts[kind] += 1
        examples.setdefault(kind, f"seed {seed}: {detail}"[:300])

    def check(where: str) -> None:
        if not any(m.role != "system" for m in memory.messages()):
            return  # nothing to send yet (only a system prompt)
        counts["pairing checks"] += 1
        errors = pairing_errors(memory.to_openai(), memory.to_anthropic())
        if errors:
            fail(f"unpaired after {where}", errors[0])

    for item in items:
        memory.add(item)
        check("add")
        if item["role"] == "tool" and item["content"] not in json.dumps(
                memory.to_openai(), ensure_ascii=False):
            # a result just added is what the model needs next: never out of the export
            fail("result lost", f"the result of {item['tool_call_id']} is not in to_openai()")
        if not (every_add or item["role"] in ("user", "tool")):
            continue
        try:
            memory.compress_if_needed()
        except precis.PrecisError as err:
            counts["expected errors"] += 1
            examples.setdefault("expected errors", f"seed {seed}: {err}"[:300])
            continue
        except Exception as err:
            fail("crash", f"{type(err).__name__}: {err} {traceback.format_exc()[-300:]}")
            continue
        counts["budget checks"] += 1
        check("compress")
        if memory.token_count() > memory.config.budget:
            fail("over budget", f"{memory.token_count()} > {memory.config.budget}")
        stub = _stub_kept(memory)
        if stub:
            fail("stub kept", f"call {stub} has its result but the context shows a stub")
    return counts, examples


def reload_cases(memory: ContextMemory) -> list[Any]:
    """``context_reload`` arguments a model may write: wrong types, bad JSON, lone
    surrogates, unknown and real ids."""
    real = next(iter(memory.offloaded()), "ctx-none")
    return ['{"offload_id": "\\ud800"}', {"offload_id": "\ud800"}, {"offload_id": real},
            {"offload_id": real, "contains": "\ud800"}, {"offload_id": ["x"]},
            {"offload_id": 5}, "[1]", "not json", None, 5, {}, {"offload_id": ""},
            {"offload_id": real, "contains": 7}, '{"offload_id": "' + "x" * 10000 + '"}']


def check_reload(memory: ContextMemory) -> list[str]:
    """The answers to hostile ``context_reload`` calls that are not text (bugs)."""
    bad = []
    for arguments in reload_cases(memory):
        try:
            answer = handle_tool_call(memory, "context_reload", arguments)
        except Exception as err:
            bad.append(f"{arguments!r:.40} raised {type(err).__name__}: {err}")
            continue
        if not isinstance(answer, str):
            bad.append(f"{arguments!r:.40} answered {answer!r:.40}")
        else:
            try:
                answer.encode("utf-8")
            except UnicodeEncodeError:
                bad.append(f"{arguments!r:.40} answered text that is not UTF-8")
    return bad
