"""The tools of service agents (tau-bench's ``get_reservation_details``,
``book_reservation``, ``cancel_reservation``, a CRM's ``lookup_customer``, ...), read by their
names: a verb that reads (``get``, ``search``, ``list``, ``find``, ``check``) looks something
up; a verb that changes (``book``, ``cancel``, ``update``, ``send``, ``transfer``, ...) changes
something. ``think`` records reasoning, ``calculate`` computes, ``submit`` / ``finish`` hand
in the work. The target is the identifier the call names (an argument ending in ``_id``)."""

from __future__ import annotations

import re
from typing import Any

from precis.events._registry import Call, ToolVocabulary
from precis.events.model import ActionKind, Draft

__all__ = ["DomainTools", "describe_arguments"]

_LOOKUP = frozenset({"get", "search", "list", "find", "check", "lookup", "fetch", "read",
                     "query", "show", "view", "retrieve", "describe", "count", "verify",
                     "validate", "calculate_price", "look"})
_CHANGE = frozenset({"book", "cancel", "update", "modify", "create", "add", "remove",
                     "delete", "send", "transfer", "exchange", "return", "set", "change",
                     "apply", "issue", "refund", "reserve", "place", "submit_order", "upgrade",
                     "edit", "assign", "close", "open", "post", "pay", "charge", "schedule"})
_THINK = frozenset({"think", "reason", "reflect", "note"})
_CALC = frozenset({"calculate", "calculator", "calc", "compute", "math"})
_SUBMIT = frozenset({"submit", "finish", "task_complete", "done", "complete_task",
                     "final_answer", "respond"})
_QUERY = frozenset({"sql", "query", "cypher", "graphql"})
_WORD = re.compile(r"[a-z]+")


def describe_arguments(args: dict[str, Any] | Any, limit: int = 160) -> str:
    """``key=value, ...`` for the scalar arguments (lists and objects are counted)."""
    if not isinstance(args, dict):
        return ""
    parts: list[str] = []
    for key, value in args.items():
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            text = str(value)
            parts.append(f"{key}={text if len(text) <= 40 else text[:39] + '…'}")
        elif isinstance(value, bool):
            parts.append(f"{key}={'yes' if value else 'no'}")
        elif isinstance(value, list):
            parts.append(f"{key}=[{len(value)}]")
    out = ", ".join(parts)
    return out if len(out) <= limit else out[: limit - 1] + "…"


def _target(args: Any) -> str:
    if not isinstance(args, dict):
        return ""
    for key, value in args.items():
        if (key == "id" or key.endswith("_id")) and isinstance(value, (str, int)):
            return str(value)
    for value in args.values():
        if isinstance(value, str) and 0 < len(value) <= 60:
            return value
    return ""


class DomainTools(ToolVocabulary):
    name = "domain"

    def read(self, call: Call) -> Draft | None:
        words = _WORD.findall(call.tool.lower())
        if not words:
            return None
        verb = words[0]
        kind: ActionKind
        if call.tool.lower() in _THINK or verb in _THINK:
            return Draft(kind="think", target="", detail=call.arg("thought", "thoughts"),
                         reads_only=True)
        if verb in _CALC or call.tool.lower() in _CALC:
            return Draft(kind="calc", target=call.arg("expression", "input", "formula"),
                         reads_only=True)
        if _QUERY.intersection(words):  # run_sql, execute_query: a search of the data,
            query = call.arg("sql", "query", "statement", "q", "cypher")  # the query its target
            if query:
                return Draft(kind="search", target=" ".join(query.split()), reads_only=True)
        if call.tool.lower() in _SUBMIT or verb in _SUBMIT:
            kind = "submit"
        elif verb in _LOOKUP:
            kind = "lookup"
        elif verb in _CHANGE or "_".join(words[:2]) in _CHANGE:
            kind = "change"
        else:
            return None
        args = dict(call.args)
        return Draft(kind=kind, target=_target(args), detail=describe_arguments(args),
                     reads_only=kind == "lookup")
