"""Fault campaign, parsers: hostile values in every field of real-shaped inputs.

Seeds are the test fixtures of every format (``tests/fixtures``), a few shapes the fixtures
lack (a LangChain ``dumpd`` list, OpenAI content parts), and, when ``../shared/data`` is
there, the first conversations of each public sample. A case replaces one field (or a few)
with a hostile value (a list or an object where text is expected, null, a number, a lone
surrogate, a long string) and runs what a user runs: ``load_all`` -> ``segment`` ->
``compress`` (to a budget) -> ``to_openai`` / ``to_anthropic``.

A case is *expected* when precis answers with a :class:`~precis.PrecisError`, *ok* when the
input still reads and the compacted list is valid for both APIs, and a *bug* otherwise (any
other exception, or an output the APIs would reject).
"""

from __future__ import annotations

import copy
import json
import random
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import precis
from precis.compact import compress

__all__ = ["HOSTILE", "Outcome", "check_document", "field_paths", "mutate", "seeds"]

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"

HOSTILE: tuple[Any, ...] = (
    [], {}, None, 0, -1, 1.5, True, "", [[]], ["x"], {"type": []}, {"a": 1},
    "\ud800", "x" * 5000, 10**30,
)
"""Values put where a field was: wrong types, empties, a lone surrogate, big values."""

_EXTRA_SEEDS: dict[str, Any] = {
    "langchain-dumpd": [
        {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "HumanMessage"],
         "kwargs": {"content": "Which region is the bucket in?", "type": "human"}},
        {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"],
         "kwargs": {"content": "eu-west-1, since the migration in May.",
                    "tool_calls": [{"name": "s3_info", "args": {"b": "logs"}, "id": "c1"}]}},
        {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "ToolMessage"],
         "kwargs": {"content": "region=eu-west-1", "tool_call_id": "c1"}},
    ],
    "openai-parts": {"messages": [
        {"role": "system", "content": "You answer briefly."},
        {"role": "user", "content": [{"type": "text", "text": "What is in this file?"},
                                     {"type": "file", "file": {"filename": "a.pdf"}},
                                     {"type": "input_audio", "input_audio": {"format": "wav"}}]},
        {"role": "assistant", "content": [{"type": "refusal", "refusal": "I cannot open it."}]},
    ]},
    "anthropic-blocks": {"system": [{"type": "text", "text": "Be exact."}], "messages": [
        {"role": "user", "content": [{"type": "text", "text": "List the files in /srv."},
                                     {"type": "image", "source": {"type": "url",
                                                                   "url": "https://x.test/a.png"}}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "Use ls.", "signature": "sig"},
            {"type": "tool_use", "id": "tu_1", "name": "bash", "input": {"cmd": "ls /srv"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu_1",
                                      "content": [{"type": "text", "text": "app\nlogs"}]}]},
        {"role": "assistant", "content": "Two entries: app and logs."},
    ]},
}


def _read(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def seeds(data: Path | None = None, *, shared_items: int = 2) -> list[tuple[str, Any]]:
    """(name, JSON value) of every seed; ``data`` adds the shared samples (first items)."""
    out: list[tuple[str, Any]] = []
    for path in sorted(FIXTURES.rglob("*")):
        if path.suffix in (".json", ".jsonl", ".traj") and path.parent.name != "memory":
            out.append((f"{path.parent.name}/{path.name}", _read(path)))
    out.extend(_EXTRA_SEEDS.items())
    if data is not None and (data / "transcripts").is_dir():
        for path in sorted((data / "transcripts").rglob("*")):
            if path.suffix not in (".json", ".jsonl", ".traj"):
                continue
            value = _read(path)
            if isinstance(value, list) and value and path.suffix == ".jsonl" \
                    and "claude" not in path.parent.name:
                value = value[:shared_items]
            elif isinstance(value, list) and len(value) > shared_items \
                    and isinstance(value[0], dict) and "role" not in value[0]:
                value = value[:shared_items]  # a collection: its first conversations
            out.append((f"shared:{path.name}", _shrink(value)))
    return out


def _shrink(value: Any, depth: int = 0) -> Any:
    """``value`` with long lists cut to their first 24 items (a campaign needs the shapes,
    not the bulk) and long strings to 2,000 characters."""
    if isinstance(value, list):
        return [_shrink(v, depth + 1) for v in value[:24]]
    if isinstance(value, dict):
        return {k: _shrink(v, depth + 1) for k, v in value.items()}
    if isinstance(value, str) and len(value) > 2000:
        return value[:2000]
    return value


def field_paths(value: Any, limit: int = 12) -> Iterator[tuple[Any, ...]]:
    """The path of every field and item (the first ``limit`` of each list) in ``value``."""
    stack: list[tuple[tuple[Any, ...], Any]] = [((), value)]
    while stack:
        path, node = stack.pop()
        if path:
            yield path
        if isinstance(node, dict):
            stack.extend(((*path, k), v) for k, v in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend(((*path, i), v) for i, v in reversed(list(enumerate(node[:limit]))))


def mutate(value: Any, changes: list[tuple[tuple[Any, ...], Any]]) -> Any:
    """A deep copy of ``value`` with each (path, new value) applied in turn (a path that a
    former change removed is skipped)."""
    out = copy.deepcopy(value)
    for path, new in changes:
        node = out
        try:
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = copy.deepcopy(new)
        except (KeyError, IndexError, TypeError):
            continue
    return out


Outcome = tuple[str, str]  # ("ok" | "expected" | "bug", detail)


def _where(err: BaseException) -> str:
    frames = traceback.extract_tb(err.__traceback__)
    own = [f for f in frames if "/precis/" in f.filename] or frames
    last = own[-1]
    return f"{type(err).__name__} at {last.filename.split('src/')[-1]}:{last.lineno}: {err}"[:200]


def check_document(
    doc: Any, *, budget: int | None = 300, api_errors: Callable[[list[Any], Any], list[str]]
    | None = None,
) -> Outcome:
    """Run one input through load -> segment -> compress -> exporters."""
    try:
        collection = precis.load_all(doc)
        for conv in collection.conversations[:2]:
            precis.segment(conv)
            conv.to_openai()
            conv.to_anthropic()
            if budget is None:
                continue
            result = compress(conv, budget=budget)
            if api_errors is not None:
                problems = api_errors(result.to_openai(), result.to_anthropic())
                if not any(m.role != "system" for m in conv.messages):
                    # a system prompt alone comes back as it is: Anthropic's empty list of
                    # messages is the input's, not something precis made
                    problems = [e for e in problems if e != "messages must be a non-empty list"]
                if problems:
                    return "bug", f"compress output rejected: {problems[0]}"[:200]
    except precis.PrecisError:
        return "expected", ""
    except Exception as err:
        return "bug", _where(err)
    return "ok", ""


def random_cases(
    pool: list[tuple[str, Any]], n: int, rng: random.Random
) -> Iterator[tuple[str, Any]]:
    """``n`` inputs, each a seed with one to three random fields made hostile."""
    paths = {name: list(field_paths(value)) for name, value in pool}
    for _ in range(n):
        name, value = rng.choice(pool)
        if not paths[name]:
            continue
        changes = [(rng.choice(paths[name]), rng.choice(HOSTILE))
                   for _ in range(rng.randint(1, 3))]
        yield name, mutate(value, changes)


def every_field_cases(
    pool: list[tuple[str, Any]], values: tuple[Any, ...] = HOSTILE
) -> Iterator[tuple[str, Any]]:
    """Every seed with each of its fields, one at a time, replaced by each value."""
    for name, value in pool:
        for path in field_paths(value):
            for new in values:
                yield name, mutate(value, [(path, new)])
