"""Moving a memory store: everything a tenant has in one store, copied into another (SQLite
to PostgreSQL, back, or between two of a kind), provenance intact, resumable.

::

    from precis.memory.migrate import migrate
    from precis.memory.store import open_store

    report = migrate(open_store("memory.sqlite3"), open_store("postgresql://db/precis"))

What is copied, in this order: the embedder choice (when the target has none); sessions
with every original message; cards with every field as stored (ids, types, times, source
message ids and indexes, fragment ids, supersession), in the order they were added, each
batch with its vectors of every model; the cards' history as stored (deleted cards' too);
saved runtime states with their offloads. Every step writes what the target lacks and
skips what it has, so a run that was stopped (killed, a lost connection) is finished by
running it again: nothing is lost and nothing is copied twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from precis.errors import ConfigError
from precis.memory.store.base import Store

__all__ = ["MigrationReport", "migrate"]

_MESSAGES = 1 << 31  # every message of a session


@dataclass
class MigrationReport:
    """What one :func:`migrate` read from the source and added to the target."""

    sessions: int = 0
    messages: int = 0
    cards: int = 0  # read from the source
    added: int = 0  # new to the target
    history: int = 0  # entries new to the target
    vectors: dict[str, int] = field(default_factory=dict)  # by model: new to the target
    states: int = 0  # runtime states new to the target

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def migrate(source: Store, target: Store, *, batch: int = 500,
            progress: Callable[[str, int, int], None] | None = None) -> MigrationReport:
    """Copy ``source``'s tenant into ``target``'s (see the module docstring);
    ``progress(step, done, total)`` is called as it goes."""
    if not isinstance(batch, int) or isinstance(batch, bool) or batch < 1:
        raise ConfigError(f"batch must be a positive whole number, got {batch!r}",
                          where="batch")
    if source.location == target.location and source.tenant == target.tenant:
        raise ConfigError("the source and the target are the same store",
                          where=source.location)
    report = MigrationReport()
    tell = progress or (lambda step, done, total: None)
    embedder = source.get_meta("embedder")
    if embedder is not None and target.get_meta("embedder") is None:
        target.set_meta("embedder", embedder)

    sessions = source.sessions()
    for number, session in enumerate(sessions, 1):
        messages = source.messages(session.id, 0, _MESSAGES)
        target.add([], session=session, messages=messages)
        report.sessions += 1
        report.messages += len(messages)
        tell("sessions", number, len(sessions))

    models = sorted(source.stats()["vectors"])
    total = source.count()
    position = 0
    while True:
        page = source.cards_after(position, batch)
        if not page:
            break
        position = page[-1][0]
        cards = [card for _, card in page]
        report.cards += len(cards)
        report.added += len(target.add(cards))
        ids = [card.id for card in cards]
        for model in models:
            report.vectors[model] = report.vectors.get(model, 0) + _copy_vectors(
                source, target, model, ids)
        tell("cards", report.cards, total)

    after = ("", 0)
    while True:
        rows = source.history_after(after, batch)
        if not rows:
            break
        after = (rows[-1][0], rows[-1][1])
        report.history += target.put_history(rows)
        tell("history", report.history, report.history)

    for state_id in source.state_ids():
        for offload_id in source.offload_ids(state_id):
            if target.get_offload(offload_id) is None:
                data = source.get_offload(offload_id)
                if data is not None:
                    target.put_offload(offload_id, state_id, data)
        state = source.load_state(state_id)
        if state is not None and target.swap_state(state_id, None, state):
            report.states += 1
    return report


def _copy_vectors(source: Store, target: Store, model: str, ids: list[str]) -> int:
    """Copy the ``model`` vectors of these cards that the target lacks; how many."""
    import numpy as np

    found = source.vectors_of(model, ids)
    have = target.vectors_of(model, list(found))
    missing = [card_id for card_id in found if card_id not in have]
    if missing:
        target.put_vectors(model, missing, np.stack([found[c] for c in missing]))
    return len(missing)
