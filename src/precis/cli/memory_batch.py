"""``precis memory search --batch QUERIES.jsonl``: many queries, one answer line each.

A line that cannot be answered (not JSON, a wrong field, an unusable query) is answered
with ``{"id", "line", "error"}`` and said on stderr; the other lines are answered all the
same, and the exit code is 2 when any line failed.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import click

from precis.errors import InputError, QueryError

if TYPE_CHECKING:
    from precis.memory import Memory

__all__ = ["BATCH_KEYS", "note_label", "run_batch"]

BATCH_KEYS = {"id", "query", "k", "user", "agent", "session", "type", "types", "speaker",
              "since", "until", "current", "context"}


def _read_batch(path: str) -> Iterator[tuple[int, dict[str, Any] | InputError]]:
    """Each non-blank line's number and query, or the error that makes it unusable (one bad
    line does not stop the others)."""
    try:
        handle = sys.stdin if path == "-" else open(path, encoding="utf-8")  # noqa: SIM115
    except OSError as err:
        raise InputError(f"cannot read the batch file: {err.strerror}", where=path) from None
    with handle:
        try:
            lines = list(handle)
        except UnicodeDecodeError:
            raise InputError("the batch file is not UTF-8 text", where=path) from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield number, _batch_query(line, f"{path}:{number}")
        except InputError as err:
            yield number, err


def _batch_query(line: str, where: str) -> dict[str, Any]:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as err:
        raise InputError(f"not JSON: {err.msg}", where=where) from None
    if not isinstance(data, dict):
        raise InputError("each line must be a JSON object", where=where)
    unknown = set(data) - BATCH_KEYS
    if unknown:
        raise InputError(f"unknown field(s): {', '.join(sorted(unknown))} "
                         f"(known: {', '.join(sorted(BATCH_KEYS))})", where=where)
    if not isinstance(data.get("query"), str):
        raise InputError("'query' must be a string", where=where)
    for key in ("user", "agent", "session", "speaker", "since", "until", "type"):
        if data.get(key) is not None and not isinstance(data[key], str):
            raise InputError(f"{key!r} must be a string", where=where)
    k = data.get("k", None)
    if k is not None and (not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= 1000):
        raise InputError("'k' must be a whole number from 1 to 1000", where=where)
    context = data.get("context", 0)
    if context is not None and (not isinstance(context, int) or isinstance(context, bool)
                                or not 0 <= context <= 20):
        raise InputError("'context' must be a whole number from 0 to 20", where=where)
    types = data.get("types", [])
    if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
        raise InputError("'types' must be a list of strings", where=where)
    return data


def run_batch(open_memory: Callable[[], Memory], path: str, default_k: int) -> None:
    """One answer line per query line, in order: ``{"id", "hits"}``, or ``{"id", "line",
    "error"}`` for a line that could not be answered (also said on stderr); exit code 2 when
    any line failed."""
    queries = list(_read_batch(path))
    failed: list[int] = []
    with open_memory() as memory:
        for number, data in queries:
            if isinstance(data, InputError):
                failed.append(number)
                click.echo(f"precis: error: {data}", err=True)
                click.echo(json.dumps({"id": None, "line": number, "error": str(data)},
                                      ensure_ascii=False))
                continue
            types = tuple(data.get("types", [])) + ((data["type"],) if data.get("type") else ())
            try:
                result = memory.search(
                    data["query"], k=data.get("k") or default_k, user=data.get("user"),
                    agent=data.get("agent"), session=data.get("session"), types=types,
                    speaker=data.get("speaker"), since=data.get("since"),
                    until=data.get("until"), current_only=bool(data.get("current")),
                    context=int(data.get("context") or 0),
                )
            except QueryError as err:  # one unusable query does not stop the batch
                failed.append(number)
                click.echo(f"precis: error: {path}:{number}: {err}", err=True)
                click.echo(json.dumps({"id": data.get("id"), "line": number,
                                       "error": str(err)}, ensure_ascii=False))
                continue
            for note in result.notes:
                click.echo(f"precis: {note_label(note)}: {path}:{number}: {note}", err=True)
            hits = [{
                "id": h.card.id,
                "score": round(h.score, 6),
                "content": h.card.content,
                "type": h.card.type,
                "session_id": h.card.session_id,
                "message_ids": list(h.card.message_ids),
                "fragment_ids": list(h.card.fragment_ids),
                "speaker": h.card.speaker,
                "event_time": h.card.event_time,
            } for h in result.hits]
            click.echo(json.dumps({"id": data.get("id"), "hits": hits, "notes": result.notes},
                                  ensure_ascii=False))
    if failed:
        raise click.exceptions.Exit(2)


def note_label(note: str) -> str:
    """``warning`` for a note that says the result is degraded, else ``note``."""
    from precis.memory.search import KEYWORDS_ONLY

    return "warning" if note.startswith(KEYWORDS_ONLY) else "note"
