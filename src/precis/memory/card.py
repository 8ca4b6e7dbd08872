"""Memory cards: one remembered statement with where it came from.

A card is a concise, self-contained statement ("Caroline went to an LGBTQ support group on
7 May 2023", "Use PostgreSQL 16 for the orders service") with its type, tags, entities, the
time it speaks of, its scope (user / agent / session) and its sources: the session, message
ids and fragment ids it was taken from, so the original text is always one lookup away.
A card that a later statement replaces keeps existing and points to the newer one through
``superseded_by``.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass, field, replace
from typing import Any, Literal, get_args

from precis._surrogates import clean_data
from precis.errors import InputError

__all__ = [
    "CARD_TYPES",
    "SCOPES",
    "CardType",
    "MemoryCard",
    "Scope",
    "card_id",
]

CardType = Literal[
    "requirement",
    "constraint",
    "decision",
    "fact",
    "event",
    "preference",
    "plan",
    "todo",
    "config",
    "sql",
    "code",
    "error-fix",
    "command",
    "note",
    "summary",  # one per session: the session's digest (precis.memory.summary)
]
CARD_TYPES: tuple[CardType, ...] = get_args(CardType)

Scope = Literal["user", "agent", "session"]
SCOPES: tuple[Scope, ...] = get_args(Scope)


def card_id(session_id: str, message_ids: tuple[str, ...], content: str) -> str:
    """A stable id: the same statement of the same messages always gets the same id.

    This is what makes ingestion idempotent: re-ingesting a session produces the same ids.
    """
    digest = hashlib.blake2b(digest_size=10)
    for piece in (session_id, "\x1f".join(message_ids), content):
        digest.update(piece.encode("utf-8", "surrogatepass"))
        digest.update(b"\x1e")
    return "m_" + digest.hexdigest()


@dataclass(frozen=True)
class MemoryCard:
    """One remembered statement and its provenance (see the module docstring)."""

    id: str
    content: str
    type: CardType = "fact"
    tags: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    session_id: str = ""
    message_ids: tuple[str, ...] = ()
    message_indexes: tuple[int, ...] = ()  # positions of the source messages in the session
    fragment_ids: tuple[str, ...] = ()
    speaker: str | None = None
    user_id: str | None = None
    agent_id: str | None = None
    scope: Scope = "session"
    event_time: str | None = None  # ISO date or date-time the statement speaks of
    created_at: str = ""
    updated_at: str = ""
    superseded_by: str | None = None
    language: str = "en"
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = {name: getattr(self, name) for name in _ORDER}
        for key in _TUPLES:
            data[key] = list(data[key])
        data["metadata"] = copy.deepcopy(self.metadata) if self.metadata else {}
        return data

    @classmethod
    def from_dict(cls, data: Any, *, where: str | None = None) -> MemoryCard:
        """A card from :meth:`to_dict` output (an export line); bad fields name themselves."""
        if not isinstance(data, dict):
            raise InputError(
                f"a card must be a JSON object, got {type(data).__name__}", where=where
            )
        data = clean_data(data)  # lone surrogates out: they cannot be stored
        unknown = set(data) - _FIELDS
        if unknown:
            raise InputError(f"unknown card field(s): {', '.join(sorted(unknown))}", where=where)
        for key in ("id", "content"):
            if not isinstance(data.get(key), str) or not data[key].strip():
                raise InputError(f"card field {key!r} must be a non-empty string", where=where)
        values: dict[str, Any] = {}
        for key, value in data.items():
            if key == "message_indexes":
                if not isinstance(value, (list, tuple)) or not all(
                    isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value
                ):
                    raise InputError(
                        "card field 'message_indexes' must be a list of non-negative integers",
                        where=where,
                    )
                values[key] = tuple(value)
            elif key in _TUPLES - {"message_indexes"}:
                if not isinstance(value, (list, tuple)) or not all(
                    isinstance(v, str) for v in value
                ):
                    raise InputError(f"card field {key!r} must be a list of strings", where=where)
                values[key] = tuple(value)
            elif key == "metadata":
                if not isinstance(value, dict):
                    raise InputError("card field 'metadata' must be an object", where=where)
                values[key] = value
            elif key in _OPTIONAL and value is None:
                values[key] = None
            elif not isinstance(value, str):
                raise InputError(f"card field {key!r} must be a string", where=where)
            else:
                values[key] = value
        card = cls(**values)
        if card.type not in CARD_TYPES:
            raise InputError(
                f"unknown card type {card.type!r} (expected one of {', '.join(CARD_TYPES)})",
                where=where,
            )
        if card.scope not in SCOPES:
            raise InputError(
                f"unknown card scope {card.scope!r} (expected one of {', '.join(SCOPES)})",
                where=where,
            )
        return card

    def with_changes(self, **changes: Any) -> MemoryCard:
        return replace(self, **changes)


_ORDER = tuple(MemoryCard.__dataclass_fields__)
_FIELDS = set(_ORDER)
_TUPLES = {"tags", "topics", "entities", "message_ids", "message_indexes", "fragment_ids"}
_OPTIONAL = {"speaker", "user_id", "agent_id", "event_time", "superseded_by"}
