"""Validators the adapter tests share: the OpenAI / Anthropic rules of
tests/compact/_api_rules.py (loaded by path) and the Responses API's pairing rule."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["api_rules", "responses_errors"]


def api_rules() -> ModuleType:
    path = Path(__file__).resolve().parents[1] / "compact" / "_api_rules.py"
    spec = importlib.util.spec_from_file_location("_api_rules_adapters", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def responses_errors(items: list[dict[str, Any]]) -> list[str]:
    """Why the Responses API would reject ``items`` as input: a function_call_output with
    no function_call of that call_id before it ("No tool call found for function call
    output"), a call never answered ("No tool output found for function call"), a call id
    used twice."""
    errors: list[str] = []
    calls: set[str] = set()
    answered: set[str] = set()
    for index, item in enumerate(items):
        kind = item.get("type")
        if kind == "function_call":
            if item["call_id"] in calls:
                errors.append(f"item {index}: call id {item['call_id']} used twice")
            calls.add(item["call_id"])
        elif kind == "function_call_output":
            if item["call_id"] not in calls:
                errors.append(f"item {index}: output for unknown call {item['call_id']}")
            elif item["call_id"] in answered:
                errors.append(f"item {index}: second output for {item['call_id']}")
            answered.add(item["call_id"])
    errors.extend(f"call {c} has no output" for c in sorted(calls - answered))
    return errors
