"""``Memory``: the long-term memory as one object (store + embedder + extraction + search).

::

    from precis.memory import Memory

    with Memory() as memory:                       # the SQLite file under PRECIS_HOME
        memory.ingest("session.json", user="ana")  # cards from a conversation (idempotent)
        for hit in memory.search("how did we pick the GPU?", user="ana").hits:
            print(hit.score, hit.card.content, [m.message_id for m in hit.sources])

``Memory(path, tenant="acme")`` (or ``Memory(store=store.for_tenant("acme"))``) reads and
writes one tenant's memory only (see :mod:`precis.memory.store.base`); the default tenant
is ``"default"``.

The embedder is chosen once per store and recorded in it: ``"auto"`` takes the default local
model (``"local"``: the multilingual Universal Sentence Encoder) when it is installed and
lexical-only search otherwise; later opens reuse the recorded choice unless told otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from precis._args import optional_text, shown, text
from precis._surrogates import clean_conversation
from precis.analysis import analyze
from precis.errors import (
    ConfigError,
    QueryError,
)
from precis.memory.card import MemoryCard
from precis.memory.extract import extract_cards
from precis.memory.search import SearchResult, search, source_ranges
from precis.memory.store._open import open_store
from precis.memory.store._rows import utc_now
from precis.memory.store.base import (
    NO_FILTERS,
    CardVersion,
    EmbeddingCacheView,
    Filters,
    Store,
    StoredMessage,
    VectorCacheStore,
)
from precis.memory.summary import summary_card
from precis.model import Conversation

if TYPE_CHECKING:
    from precis.memory.embed import Embedder

__all__ = ["IngestReport", "Memory", "embed_text"]

_BATCH = 256
_BEFORE_CHARS = 300


@dataclass(frozen=True)
class IngestReport:
    """What one :meth:`Memory.ingest` did."""

    session_id: str
    cards: int  # cards the conversation yields
    added: int  # new to the store (0 when the session was ingested before)
    skipped: dict[str, int]  # fragments left out, by reason
    embedded: int  # new cards given a vector
    added_ids: tuple[str, ...] = ()  # the ids of the cards added
    updated_ids: tuple[str, ...] = ()  # cards changed in place (the session's summary)
    summary_id: str | None = None  # the session's summary card, when it has one


def _local_model_installed() -> bool:
    """Whether the default local model (``"local"``) and numpy are installed (nothing is
    loaded)."""
    from precis.memory.embed._use import use_installed

    return use_installed()


def embed_text(card: MemoryCard, before: str = "") -> str:
    """The text a card's vector is computed from: who said it and what, then an excerpt of
    the message it follows (a reply is found by the words of its question). The card's own
    words go first: both local models weigh the start of a text more (on LoCoMo, cosine
    alone, recall@10 48.4 -> 53.3 with the multilingual model, 52.5 -> 55.9 with MiniLM).
    A session's summary follows no message: it is embedded alone."""
    text = card.content
    if card.speaker and card.speaker not in ("user", "assistant", "tool", "system"):
        text = f"{card.speaker}: {text}"
    if before and card.type != "summary":
        text = f"{text} ({before[:_BEFORE_CHARS]})"
    return text


class Memory:
    """Long-term memory over a :class:`~precis.memory.store.base.Store` (see module doc)."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        embedder: str | Embedder | None = "auto",
        store: Store | None = None,
        tenant: str | None = None,
        **embedder_options: Any,
    ) -> None:
        if store is None:
            store = open_store(path) if tenant is None else open_store(path, tenant=tenant)
        elif tenant is not None and tenant != store.tenant:
            store = store.for_tenant(tenant)
        self.store: Store = store
        self.embedder = self._choose_embedder(embedder, embedder_options)

    def _choose_embedder(self, embedder: str | Embedder | None, options: dict[str, Any]
                         ) -> Embedder | None:
        """The embedder to use, and the store's record of it (the spec, so a later open
        with "auto" makes the same one)."""
        recorded = self.store.get_meta("embedder")
        spec, chosen = self._make_embedder(embedder, options, recorded)
        if recorded is None:
            self.store.set_meta("embedder", spec)
        return chosen

    def _make_embedder(self, embedder: str | Embedder | None, options: dict[str, Any],
                       recorded: str | None) -> tuple[str, Embedder | None]:
        """(the spec to record, the embedder wrapped in the store's cache) for ``embedder``."""
        from precis.memory.embed import CachedEmbedder, get_embedder

        chosen: Embedder | None
        if embedder is None:
            spec = "none"
            chosen = None
        elif not isinstance(embedder, str):
            spec = f"custom:{embedder.name}"
            chosen = embedder
        else:
            spec = recorded if embedder == "auto" and recorded else embedder
            if spec.startswith("custom:"):
                raise ConfigError(
                    f"this memory store was built with the embedder {spec[7:]!r} given in "
                    "code; pass that embedder (or embedder='none' for keywords only)",
                    where=self.store.location,
                )
            if spec == "local" and spec == recorded:
                spec = "minilm"  # a store recorded "local" when it meant MiniLM (before 0.x)
            if spec == "auto":
                spec = "local" if _local_model_installed() else "none"
            if spec == "local":
                from precis.memory.embed._registry import LOCAL

                spec = LOCAL  # recorded by name: what "local" means may change
            chosen = get_embedder(spec, **options)
        if chosen is None:
            return spec, None
        cache = (EmbeddingCacheView(self.store) if isinstance(self.store, VectorCacheStore)
                 else None)
        return spec, CachedEmbedder(chosen, cache) if cache is not None else chosen

    @property
    def embedder_spec(self) -> str:
        """The store's recorded embedder (``none``, ``local``, ``openai:MODEL``, ...): the one
        later opens with ``embedder="auto"`` use."""
        return self.store.get_meta("embedder") or "none"

    def set_embedder(self, embedder: str | Embedder | None, **options: Any) -> str:
        """Make ``embedder`` the store's embedder from now on (recorded in the store, so
        later opens with ``"auto"`` use it, and used by this object); the spec it had
        before. Cards stored before have no vectors of it yet: :meth:`reindex` computes
        them (``precis memory --embedder local reindex`` does both)."""
        before = self.embedder_spec
        spec, chosen = self._make_embedder(embedder, options, None)
        self.store.set_meta("embedder", spec)
        self.embedder = chosen
        return before

    @staticmethod
    def local_model_installed() -> bool:
        """Whether the local embedding model can run here (nothing is loaded)."""
        return _local_model_installed()

    def for_tenant(self, tenant: str) -> Memory:
        """This memory bound to ``tenant``: the same store (shared connection and indexes)
        and embedder model, the tenant's own embedding cache. Closing it closes the store."""
        from precis.memory.embed import CachedEmbedder

        view = object.__new__(Memory)
        view.store = self.store.for_tenant(tenant)
        inner = self.embedder.inner if isinstance(self.embedder, CachedEmbedder) \
            else self.embedder
        view.embedder = inner
        if inner is not None and isinstance(view.store, VectorCacheStore):
            view.embedder = CachedEmbedder(inner, EmbeddingCacheView(view.store))
        return view

    # -- lifecycle ----------------------------------------------------------------------

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing ------------------------------------------------------------------------

    def ingest(
        self,
        source: Conversation | str | Path,
        *,
        session: str | None = None,
        user: str | None = None,
        agent: str | None = None,
        pick: str | int | None = None,
        format: str | None = None,
        progress: Callable[[int, int], None] | None = None,
        metadata: dict[str, Any] | None = None,
        summary: bool | None = None,
    ) -> IngestReport:
        """Extract the cards of a conversation (or a file) and add the new ones;
        ``metadata`` is stored with every card added.

        The session also gets its summary card (:mod:`precis.memory.summary`), added the
        first time and updated in place when the session has grown since: by default
        (``summary=None``) a session of 4 messages or more that is not small talk (an
        agent or service session, a chat about a task); ``True``: small talk too;
        ``False``: none."""
        session, user, agent = (optional_text(session, "session"), optional_text(user, "user"),
                                optional_text(agent, "agent"))
        if progress is not None and not callable(progress):
            raise ConfigError(f"must be a function (done, total) or None, got "
                              f"{shown(progress)}", where="progress")
        if summary is not None and not isinstance(summary, bool):
            raise ConfigError(f"must be True, False or None, got {shown(summary)}",
                              where="summary")
        where: str | None = None
        if isinstance(source, Conversation):
            conversation = clean_conversation(source)  # lone surrogates cannot be stored
        else:
            from precis.formats import load

            where = str(source)
            conversation = load(source, format=format, pick=pick)
        analysis = analyze(conversation)
        now = utc_now()
        extraction = extract_cards(
            conversation, session=session, user=user, agent=agent, source=where,
            analysis=analysis, created_at=now,
        )
        cards = list(extraction.cards)
        digest = None if summary is False else summary_card(
            extraction, analysis, small_talk=summary is True, user=user, agent=agent,
            created_at=now)
        if digest is not None:
            cards.append(digest)
        if metadata:  # the summary's own keys (what it was made from) stay its own
            cards = [c.with_changes(metadata={**metadata, **c.metadata} if c is digest
                                    else {**c.metadata, **metadata}) for c in cards]
        stored = {c.id: c for c in self.store.get_many([c.id for c in cards])}
        new = [c for c in cards if c.id not in stored]
        stale = [c for c in cards if c.type == "summary" and c.id in stored
                 and _outdated(stored[c.id], c)]
        vectors = None
        embedded = 0
        if self.embedder is not None and new:
            before = {(m.session_id, m.index): m.text for m in extraction.messages}
            vectors = self._embed(new, progress, before)
            embedded = len(new)
        added = self.store.add(
            new,
            session=extraction.session,
            messages=extraction.messages,
            vectors=vectors,
            model=self.embedder.name if self.embedder is not None else None,
        )
        updated = [self.update(c.id, **_summary_changes(stored[c.id], c)).id for c in stale]
        return IngestReport(extraction.session.id, len(cards), len(added), extraction.skipped,
                            embedded + len(updated) * (self.embedder is not None),
                            tuple(added), tuple(updated),
                            digest.id if digest is not None else None)

    def _embed(self, cards: Sequence[MemoryCard], progress: Callable[[int, int], None] | None,
               before: dict[tuple[str, int], str] | None = None) -> Any:
        """The vectors of ``cards``; ``before`` maps (session, message index) to the text of
        the messages they follow (looked up in the store when not given)."""
        import numpy as np

        assert self.embedder is not None
        if before is None:
            before = {}
            for card in cards:
                if card.message_indexes:
                    i = min(card.message_indexes) - 1
                    for m in self.store.messages(card.session_id, i, i + 1):
                        before[(card.session_id, i)] = m.text
        texts = [
            embed_text(c, before.get((c.session_id, min(c.message_indexes, default=0) - 1), ""))
            for c in cards
        ]
        parts = []
        for start in range(0, len(texts), _BATCH):
            parts.append(self.embedder.embed(texts[start:start + _BATCH]))
            if progress is not None:
                progress(min(start + _BATCH, len(texts)), len(texts))
        return np.concatenate(parts)

    def reindex(self, *, progress: Callable[[int, int], None] | None = None) -> int:
        """Compute the missing vectors of the current embedder; the number computed."""
        if self.embedder is None:
            return 0
        done = 0
        while True:
            cards = self.store.missing_vectors(self.embedder.name, _BATCH * 4)
            if not cards:
                return done
            vectors = self._embed(cards, None)
            self.store.put_vectors(self.embedder.name, [c.id for c in cards], vectors)
            done += len(cards)
            if progress is not None:
                progress(done, done + len(self.store.missing_vectors(self.embedder.name, 1)))

    def add(self, cards: Sequence[MemoryCard]) -> list[str]:
        """Add cards made elsewhere (an import); the ids that were new."""
        existing = {x.id for x in self.store.get_many([c.id for c in cards])}
        new = [c for c in cards if c.id not in existing]
        vectors = self._embed(new, None) if self.embedder is not None and new else None
        return self.store.add(new, vectors=vectors,
                              model=self.embedder.name if self.embedder is not None else None)

    def update(self, card_id: str, **changes: Any) -> MemoryCard:
        card = self.store.update(_card_id(card_id), **changes)
        if "content" in changes and self.embedder is not None:
            vectors = self._embed([card], None)
            self.store.put_vectors(self.embedder.name, [card.id], vectors)
        return card

    def delete(self, card_id: str) -> None:
        self.store.delete(_card_id(card_id))

    # -- reading ------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        k: int = 10,
        user: str | None = None,
        agent: str | None = None,
        session: str | None = None,
        types: Sequence[str] = (),
        speaker: str | None = None,
        since: str | None = None,
        until: str | None = None,
        current_only: bool = False,
        chronological: bool = False,
        context: int = 0,
        recap: bool = False,
        today: date | None = None,
    ) -> SearchResult:
        for name, flag in (("current_only", current_only), ("chronological", chronological),
                           ("recap", recap)):
            if not isinstance(flag, bool):
                raise QueryError(f"must be True or False, got {shown(flag)}", where=name)
        if today is not None and not isinstance(today, date):
            raise QueryError(f"must be a datetime.date or None, got {shown(today)}",
                             where="today")
        # Filters takes one name or any collection of names, and checks them
        filters = Filters(user=user, agent=agent, session=session,
                          types=cast("tuple[str, ...]", types),
                          speaker=speaker, since=since, until=until,
                          include_superseded=not current_only)
        _check_types(filters.types)
        return search(self.store, query, k=k, filters=filters, embedder=self.embedder,
                      chronological=chronological, context=context, recap=recap, today=today)

    def get(self, card_id: str) -> MemoryCard:
        return self.store.get(_card_id(card_id))

    def sources(self, card: MemoryCard, context: int = 0) -> list[StoredMessage]:
        """The original messages a card came from (and ``context`` neighbours each side)."""
        if not isinstance(card, MemoryCard):
            raise QueryError(f"must be a MemoryCard, got {shown(card)}", where="card")
        if isinstance(context, bool) or not isinstance(context, int) or not 0 <= context <= 20:
            raise QueryError(f"must be a whole number from 0 to 20, got {shown(context)}",
                             where="context")
        ranges = source_ranges(card, context)
        return [m for found in self.store.messages_in(ranges) for m in found] if ranges else []

    def history(self, card_id: str) -> list[CardVersion]:
        return self.store.history(_card_id(card_id))

    def cards(self, filters: Filters = NO_FILTERS, *, limit: int | None = None,
              offset: int = 0) -> Iterator[MemoryCard]:
        _check_filters(filters)
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)
                                  or limit < 0):
            raise QueryError(f"must be a whole number >= 0 or None, got {shown(limit)}",
                             where="limit")
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise QueryError(f"must be a whole number >= 0, got {shown(offset)}",
                             where="offset")
        return self.store.cards(filters, limit=limit, offset=offset)

    def stats(self) -> dict[str, Any]:
        return self.store.stats()

    # -- export / import ----------------------------------------------------------------

    def export(self, filters: Filters = NO_FILTERS) -> Iterator[str]:
        """JSON lines: the sessions of the cards (record and original messages), then one
        line per card, in time order (see :mod:`precis.memory.transfer`)."""
        from precis.memory.transfer import export_lines

        _check_filters(filters)
        return export_lines(self.store, filters)

    def import_lines(self, lines: Iterable[str], *, where: str = "<input>") -> tuple[int, int]:
        """Cards and their sources from JSON lines (an export); ``(cards read, cards
        added)``. Every line is checked before anything is written, so a bad line adds
        nothing; sessions and messages stored already are kept as they are."""
        from precis.memory.transfer import read_export

        imported = read_export(lines, where=where)
        for record, messages in imported.sessions:
            if self.store.session(record.id) is None:
                self.store.add([], session=record, messages=messages)
        added = self.add(imported.cards) if imported.cards else []
        return len(imported.cards), len(added)


def _outdated(old: MemoryCard, new: MemoryCard) -> bool:
    """Whether a stored summary card was made from another version of its session (its
    content hash differs), not a longer one (an older copy of a session ingested after a
    newer one leaves its summary as it is), and says something else than the new one."""
    made_from = old.metadata.get("summary") or {}
    made_now = new.metadata["summary"]
    return (made_from.get("content_hash") != made_now["content_hash"]
            and made_from.get("messages", 0) <= made_now["messages"]
            and _summary_changes(old, new) != {})


def _summary_changes(old: MemoryCard, new: MemoryCard) -> dict[str, Any]:
    """The fields of a session's summary card that its new version changes (who it belongs
    to, its creation and anything else the store keeps stay as they are)."""
    changes = {name: getattr(new, name) for name in _SUMMARY_FIELDS
               if getattr(new, name) != getattr(old, name)}
    metadata = {**old.metadata, **new.metadata}
    if metadata != old.metadata:
        changes["metadata"] = metadata
    return changes


_SUMMARY_FIELDS = ("content", "tags", "entities", "message_ids", "message_indexes",
                   "fragment_ids", "event_time", "language")


def _card_id(value: Any) -> str:
    return text(value, "card_id")


def _check_filters(filters: Any) -> None:
    if not isinstance(filters, Filters):
        raise QueryError(f"must be a precis.memory.Filters, got {shown(filters)}",
                         where="filters")
    _check_types(filters.types)


def _check_types(types: Sequence[str]) -> None:
    from precis.memory.card import CARD_TYPES

    unknown = [t for t in types if t not in CARD_TYPES]
    if unknown:
        raise QueryError(
            f"unknown card type(s) {', '.join(map(repr, unknown))} "
            f"(known: {', '.join(CARD_TYPES)})"
        )
