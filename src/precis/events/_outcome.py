"""What came of a tool call, from structure: the result's ``is_error`` flag, the exit code
the tool reported, a traceback or a failing test count in a command's own output, the
editor's own refusal. Never from words inside a file's contents: a file that was read
successfully is read successfully whatever it says.
"""

from __future__ import annotations

import json
import re
from typing import Any

from precis.events._shell import commit_of, error_line, exit_code_of, test_counts
from precis.events.model import Draft, Status, TestCounts

__all__ = ["Outcome", "outcome_of", "summarize_json"]

_RUNS = frozenset({"command", "test", "build", "lint", "install", "commit", "push", "vcs",
                   "tracker"})
_REJECTED = re.compile(r"^The user doesn't want to proceed with this tool use|"
                       r"^The tool use was rejected|^User rejected", re.IGNORECASE)
_TRACEBACK = re.compile(r"^Traceback \(most recent call last\):", re.MULTILINE)
_NOT_FOUND = re.compile(r"^(?:bash|sh|zsh): (?:line \d+: )?\S+: (?:command not found|"
                        r"No such file or directory)", re.MULTILINE)
# the editors' own refusals (SWE-agent, OpenHands / Anthropic text editor), at the start
_EDITOR_REFUSAL = re.compile(
    r"^\s*(?:Your proposed edit has introduced new syntax error|ERROR:|Error:|"
    r"No replacement was performed|Invalid `path` parameter|The path \S+ does not exist|"
    r"File \S+ not found|Usage: )", re.IGNORECASE)
_ERROR_JSON_KEYS = ("error", "Error", "errors")


class Outcome:
    """Status, exit code, the line that says what happened, test counts, commit id."""

    __slots__ = ("commit", "counts", "exit_code", "result", "status")

    def __init__(self, status: Status, exit_code: int | None = None, result: str = "",
                 counts: TestCounts | None = None, commit: str | None = None) -> None:
        self.status = status
        self.exit_code = exit_code
        self.result = result
        self.counts = counts
        self.commit = commit


def _exit_from_metadata(metadata: dict[str, Any]) -> int | None:
    extras = metadata.get("extras")
    if isinstance(extras, dict):
        inner = extras.get("metadata")
        if isinstance(inner, dict) and isinstance(inner.get("exit_code"), int):
            code: int = inner["exit_code"]
            return code if code >= 0 else None
    for key in ("exit_code", "exitCode", "returncode"):
        value = metadata.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def outcome_of(draft: Draft, output: str | None, is_error: bool,
               metadata: dict[str, Any] | None = None, last_turn: bool = False) -> Outcome:
    """What came of a call read as ``draft`` whose result is ``output`` (None: no result)."""
    if output is None:
        return Outcome("pending" if last_turn else "unknown")
    text = output
    if _REJECTED.match(text.lstrip()):
        return Outcome("rejected", result="the user rejected this call")
    code = _exit_from_metadata(metadata or {})
    if code is None and draft.kind in _RUNS:
        code = exit_code_of(text)
    counts = test_counts(text) if draft.kind in ("test", "build", "command") else None
    commit: str | None = None
    status: Status = "ok"
    if is_error or (code is not None and code != 0):
        status = "failed"
    elif draft.kind in _RUNS:
        if _TRACEBACK.search(text) or _NOT_FOUND.search(text) or (counts and counts.failing):
            status = "failed"
    elif draft.kind in ("edit", "create", "delete", "move", "lookup", "change") and (
            _EDITOR_REFUSAL.match(text) or (draft.kind in ("lookup", "change")
                                            and _json_error(text))):
        status = "failed"  # the tool's own refusal (not words inside a file's contents)
    if counts is not None and counts.failing and status == "ok":
        status = "failed"
    if draft.kind == "commit" and status == "ok":
        commit, message = commit_of(draft.target, text)
        return Outcome(status, code, message, counts, commit)
    if status == "failed":
        result = error_line(text)
    elif counts is not None:
        result = counts.describe()
    elif draft.kind in ("lookup", "change"):
        result = summarize_json(text)
    else:
        result = ""
    return Outcome(status, code, result, counts, commit)


def _json_error(text: str) -> bool:
    stripped = text.strip()
    if not stripped.startswith("{"):
        return False
    try:
        value = json.loads(stripped)
    except ValueError:
        return False
    return isinstance(value, dict) and any(k in value for k in _ERROR_JSON_KEYS) and len(value) <= 3


def _scalar(value: Any) -> str | None:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float, str)):
        text = str(value)
        return text if len(text) <= 60 else None
    return None


def _record(value: dict[str, Any], limit: int = 4) -> str:
    """A record of short values as those values (``IAH LAS HAT190 2024-05-23``)."""
    shown = [x for x in (_scalar(v) for v in value.values()) if x]
    return " ".join(shown[:limit])


def summarize_json(text: str, limit: int = 480) -> str:
    """A line naming what a JSON result holds: its short values (``key value``), a list of
    records as each record's first values (a list of lists of records, as itineraries of
    legs, each joined by +), the ids of a record of records, short lists; a record of
    more than four short values (an address) is left out. Not JSON: the text's first
    line."""
    stripped = text.strip()
    try:
        value = json.loads(stripped)
    except ValueError:
        first = next((ln.strip() for ln in stripped.splitlines() if ln.strip()), "")
        return first if len(first) <= limit else first[: limit - 1] + "…"
    if isinstance(value, list):
        if value and all(isinstance(v, list) and v and all(isinstance(x, dict) for x in v)
                         for v in value):  # e.g. itineraries: each a list of legs
            out = "; ".join(" + ".join(_record(x, 3) for x in v) for v in value[:4])
            return out + (f" (+{len(value) - 4})" if len(value) > 4 else "")
        if value and all(isinstance(v, dict) for v in value):
            out = "; ".join(_record(v) for v in value[:4])
            return out + (f" (+{len(value) - 4})" if len(value) > 4 else "")
        shown = [s for s in (_scalar(v) for v in value[:8]) if s is not None]
        if shown:
            return ", ".join(shown) + (f" (+{len(value) - 8})" if len(value) > 8 else "")
        return f"{len(value)} results"
    if not isinstance(value, dict):
        return str(value)[:limit]
    scalars: list[str] = []
    nested: list[str] = []
    for key, item in value.items():
        s = _scalar(item)
        if s is not None:
            scalars.append(f"{key} {s}")
        elif isinstance(item, dict):
            inner = [_scalar(v) for v in item.values()]
            if item and all(isinstance(v, dict) for v in item.values()):
                nested.append(f"{key}: {', '.join(list(item)[:6])}")  # records by their ids
            elif inner and all(x is not None for x in inner) and len(inner) <= 4:
                nested.append(f"{key} {' '.join(x for x in inner if x)}")
        elif isinstance(item, list):
            if item and all(isinstance(v, dict) for v in item):
                nested.append(f"{key}: " + "; ".join(_record(v, 5) for v in item[:4])
                              + (f" (+{len(item) - 4})" if len(item) > 4 else ""))
            else:
                shown = [x for x in (_scalar(v) for v in item[:8]) if x is not None]
                if shown:
                    nested.append(f"{key}: {', '.join(shown)}")
    out = "; ".join(scalars + sorted(nested, key=len))  # the long lists last
    return out if len(out) <= limit else out[: limit - 1].rstrip() + "…"
