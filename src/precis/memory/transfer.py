"""Export and import of a memory: JSON lines that keep the provenance of every card.

An export holds, for every session its cards come from, one line
``{"session": {...}, "messages": [...]}`` (the session's record and its original
messages, so an imported card still leads back to its text), then one line per card (the
card's fields, :meth:`MemoryCard.to_dict`). A file of card lines only (an export of an
older precis) imports as cards without sources.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, fields
from typing import Any

from precis._surrogates import clean_data
from precis.errors import InputError
from precis.memory.card import MemoryCard
from precis.memory.store.base import NO_FILTERS, Filters, SessionRecord, Store, StoredMessage

__all__ = ["Imported", "export_lines", "read_export"]

_SESSION_FIELDS = {f.name for f in fields(SessionRecord)}
_OPTIONAL = {"user_id", "agent_id", "source", "format", "title"}
_MESSAGE_FIELDS = {f.name for f in fields(StoredMessage)}
_MESSAGES_PER_READ = 100_000


@dataclass
class Imported:
    """What an export file holds, every line checked."""

    sessions: list[tuple[SessionRecord, list[StoredMessage]]]
    cards: list[MemoryCard]


def export_lines(store: Store, filters: Filters = NO_FILTERS) -> Iterator[str]:
    """The export of the cards ``filters`` lets through (see the module docstring)."""
    cards = list(store.cards(filters))
    for session_id in dict.fromkeys(c.session_id for c in cards if c.session_id):
        record = store.session(session_id)
        messages = store.messages(session_id, 0, _MESSAGES_PER_READ)
        if record is None and not messages:
            continue
        data = asdict(record) if record is not None else {"id": session_id}
        yield json.dumps({"session": data, "messages": [asdict(m) for m in messages]},
                         ensure_ascii=False)
    for card in cards:
        yield json.dumps(card.to_dict(), ensure_ascii=False)


def read_export(lines: Iterable[str], *, where: str = "<input>") -> Imported:
    """Every line of an export, checked (InputError naming the line on the first bad one)."""
    out = Imported([], [])
    for number, line in enumerate(lines, 1):
        at = f"{where}:{number}"
        if isinstance(line, (bytes, bytearray)):  # a file opened in binary mode
            try:
                line = bytes(line).decode("utf-8")
            except UnicodeDecodeError:
                raise InputError("a line is not UTF-8 text", where=at) from None
        if not isinstance(line, str):
            raise InputError(f"a line must be text, got {type(line).__name__}", where=at)
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as err:
            raise InputError(f"not JSON: {err.msg}", where=at) from None
        except RecursionError:
            raise InputError("JSON nested too deeply", where=at) from None
        if isinstance(data, dict) and "session" in data:
            out.sessions.append(_session(clean_data(data), at))
        else:
            out.cards.append(MemoryCard.from_dict(data, where=at))
    return out


def _session(data: dict[str, Any], at: str) -> tuple[SessionRecord, list[StoredMessage]]:
    unknown = set(data) - {"session", "messages"}
    if unknown:
        raise InputError(f"unknown field(s) of a session line: {', '.join(sorted(unknown))}",
                         where=at)
    raw = data["session"]
    if not isinstance(raw, dict) or not isinstance(raw.get("id"), str) or not raw["id"]:
        raise InputError("'session' must be an object with a non-empty 'id'", where=at)
    bad = set(raw) - _SESSION_FIELDS
    if bad:
        raise InputError(f"unknown session field(s): {', '.join(sorted(bad))}", where=at)
    for name, value in raw.items():
        if name == "metadata":
            ok = isinstance(value, dict)
        elif name == "message_count":
            ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        else:
            ok = isinstance(value, str) or (value is None and name in _OPTIONAL)
        if not ok:
            raise InputError(f"session field {name!r} has the wrong type", where=at)
    messages = data.get("messages", [])
    if not isinstance(messages, list):
        raise InputError("'messages' must be a list", where=at)
    stored: list[StoredMessage] = []
    for n, m in enumerate(messages):
        if not isinstance(m, dict) or set(m) != _MESSAGE_FIELDS:
            raise InputError(f"message {n} must have exactly the fields "
                             f"{', '.join(sorted(_MESSAGE_FIELDS))}", where=at)
        texts_ok = all(isinstance(m[k], str) for k in ("session_id", "message_id", "role",
                                                        "text"))
        optional_ok = all(m[k] is None or isinstance(m[k], str) for k in ("speaker",
                                                                          "timestamp"))
        index = m["index"]
        if not (texts_ok and optional_ok and isinstance(index, int)
                and not isinstance(index, bool) and index >= 0):
            raise InputError(f"message {n} has a field of the wrong type", where=at)
        if m["session_id"] != raw["id"]:
            raise InputError(f"message {n} belongs to session {m['session_id']!r}, not "
                             f"{raw['id']!r}", where=at)
        stored.append(StoredMessage(**m))
    return SessionRecord(**raw), stored
