"""``ContextSnapshot``: one immutable view of the parent conversation for parallel sub-agents.

Seed 003 hands every parallel sub-agent the same snapshot so they all start from the same
context. Its snapshot was a frozen dataclass holding a ``list`` and a ``dict`` (so anyone
could still change it under the other threads), stamped with the wall clock (so two
snapshots of the same context differed), and its prompt gave every task the same text
with no budget. Here every field is a tuple, a string or a read-only mapping over a private
copy; the snapshot carries a content fingerprint instead of a timestamp; and
:meth:`ContextSnapshot.prompt_for` picks the anchors that matter to each task within a
character budget.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from hashlib import blake2b
from types import MappingProxyType
from typing import Any

from precis.analysis import Analysis, analyze
from precis.analysis.model import Level
from precis.errors import InputError
from precis.model import Conversation
from precis.subagents._checks import check_max_chars, check_text
from precis.subagents._freeze import freeze_mapping
from precis.subagents._prompt import TaskPrompt, Terms, render, terms_of
from precis.subagents.anchors import (
    ANCHOR_KINDS,
    TYPE_ANCHORS,
    AnchorItem,
    AnchorKind,
    anchors_from_analysis,
    check_kind,
)

__all__ = ["DEFAULT_PROMPT_CHARS", "ContextSnapshot", "TaskPrompt"]

DEFAULT_PROMPT_CHARS = 1500
"""Default budget of :meth:`ContextSnapshot.prompt_for`, in characters."""

_ITEM_KEYS = {
    "kind": "kind", "type": "kind",  # seed 003 writes {"type": "D", "content": ...}
    "text": "text", "content": "text",
    "level": "level",
    "fragment_ids": "fragment_ids", "source": "fragment_ids",
    "messages": "messages",
}


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})


def _item_from(value: AnchorItem | Mapping[str, Any], where: str) -> AnchorItem:
    if isinstance(value, AnchorItem):
        return value
    if not isinstance(value, Mapping):
        raise InputError(
            f"expected an AnchorItem or a mapping, got {type(value).__name__}", where=where
        )
    kwargs: dict[str, Any] = {}
    for key, item in value.items():
        name = _ITEM_KEYS.get(key) if isinstance(key, str) else None
        if name is None:
            raise InputError(
                f"unknown key {key!r} (expected {', '.join(sorted(_ITEM_KEYS))})", where=where
            )
        if name in kwargs:
            raise InputError(f"{name} given twice (as {key!r} and an alias)", where=where)
        kwargs[name] = item
    for needed in ("kind", "text"):
        if needed not in kwargs:
            raise InputError(f"missing {needed!r}", where=where)
    kwargs["kind"] = check_kind(kwargs["kind"], f"{where}.kind")
    ids = kwargs.get("fragment_ids")
    if isinstance(ids, str):
        kwargs["fragment_ids"] = (ids,)
    try:
        return AnchorItem(**kwargs)
    except InputError as err:
        raise InputError(err.message, where=f"{where} ({err.where})") from None


@dataclass(frozen=True)
class ContextSnapshot:
    """An immutable set of anchors (P/C/M/D/I) plus an optional summary of the parent.

    Build one with :meth:`from_conversation` (anchors found by precis' analysis) or
    :meth:`from_items` (anchors given by the caller). Sharing one snapshot between threads
    is safe: nothing in it can change. ``fingerprint`` identifies the content, so
    sub-agents can report which snapshot they worked from.
    """

    items: tuple[AnchorItem, ...] = ()
    session_id: str | None = None
    summary: str = ""
    metadata: Mapping[str, Any] = field(default_factory=_empty, hash=False)
    _terms: tuple[Terms, ...] = field(init=False, repr=False, compare=False, hash=False)
    _by_kind: Mapping[str, tuple[AnchorItem, ...]] = field(
        init=False, repr=False, compare=False, hash=False
    )
    _fingerprint: str = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        items = self.items
        if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Iterable):
            raise InputError(f"expected a sequence of AnchorItem, got {items!r}",
                             where="items")
        items = tuple(items)
        for i, item in enumerate(items):
            if not isinstance(item, AnchorItem):
                raise InputError(
                    f"expected an AnchorItem, got {type(item).__name__}", where=f"items[{i}]"
                )
        if self.session_id is not None:
            check_text(self.session_id, "session_id")
        check_text(self.summary, "summary")
        set_ = object.__setattr__
        set_(self, "items", items)
        set_(self, "metadata", freeze_mapping(self.metadata, "metadata"))
        set_(self, "_terms", tuple(terms_of([it.text for it in items])))
        set_(self, "_by_kind", MappingProxyType(
            {k: tuple(it for it in items if it.kind == k) for k in ANCHOR_KINDS}))
        digest = blake2b(digest_size=6)
        for part in (self.session_id or "", self.summary):
            digest.update(part.encode("utf-8", "surrogatepass") + b"\x00")
        for it in items:
            line = "\x1f".join((it.kind, it.level, it.text, *it.fragment_ids,
                                *map(str, it.messages), it.type or ""))
            digest.update(line.encode("utf-8", "surrogatepass") + b"\x00")
        set_(self, "_fingerprint", digest.hexdigest())

    # -- construction ---------------------------------------------------------------------

    @classmethod
    def from_items(
        cls,
        items: Iterable[AnchorItem | Mapping[str, Any]],
        *,
        session_id: str | None = None,
        summary: str = "",
        metadata: Mapping[str, Any] | None = None,
    ) -> ContextSnapshot:
        """A snapshot of explicit anchors: :class:`AnchorItem` objects or mappings such as
        ``{"kind": "D", "text": "use JWT", "level": "HIGH", "source": "S4"}`` (seed 003's
        ``{"type": "D", "content": ...}`` is accepted too)."""
        if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Iterable):
            raise InputError(f"expected a sequence of anchors, got {items!r}", where="items")
        built = tuple(_item_from(v, f"items[{i}]") for i, v in enumerate(items))
        return cls(built, session_id, summary, metadata or {})

    @classmethod
    def from_conversation(
        cls,
        conversation: Conversation,
        *,
        analysis: Analysis | None = None,
        session_id: str | None = None,
        summary: str = "",
        metadata: Mapping[str, Any] | None = None,
        min_level: Level | str = "MEDIUM",
        type_anchors: Mapping[str, str | None] = TYPE_ANCHORS,
        max_item_chars: int = 240,
        max_interfaces: int = 12,
    ) -> ContextSnapshot:
        """The anchors precis finds in ``conversation`` (see
        :func:`~precis.subagents.anchors.anchors_from_analysis` for the options).

        Pass ``analysis`` when the conversation was analysed already; ``session_id``
        defaults to the conversation's id.
        """
        if not isinstance(conversation, Conversation):
            raise InputError(
                f"expected a precis Conversation, got {type(conversation).__name__}",
                where="conversation",
            )
        if analysis is None:
            analysis = analyze(conversation)
        elif analysis.conversation is not conversation:
            raise InputError("the analysis is of another conversation", where="analysis")
        items = anchors_from_analysis(
            analysis, min_level=min_level, type_anchors=type_anchors,
            max_item_chars=max_item_chars, max_interfaces=max_interfaces,
        )
        sid = session_id if session_id is not None else conversation.id
        return cls(items, sid, summary, metadata or {})

    # -- views ----------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.items)

    @property
    def anchors(self) -> Mapping[str, tuple[AnchorItem, ...]]:
        """Read-only ``{"P": (...), "C": (...), "M": ..., "D": ..., "I": ...}``."""
        return self._by_kind

    def of_kind(self, kind: AnchorKind | str) -> tuple[AnchorItem, ...]:
        """The anchors of one kind, in order."""
        return self._by_kind[check_kind(kind)]

    @property
    def fingerprint(self) -> str:
        """12 hex digits that change whenever the content does (and only then)."""
        return self._fingerprint

    def render_for(
        self, task: str, max_chars: int = DEFAULT_PROMPT_CHARS, *, task_id: str | None = None
    ) -> TaskPrompt:
        """The prompt fragment for ``task`` with what went into it (see :meth:`prompt_for`)."""
        check_text(task, "task", allow_empty=False)
        budget = check_max_chars(max_chars)
        if task_id is not None:
            check_text(task_id, "task_id", allow_empty=False)
        name = f" {self.session_id}" if self.session_id else ""
        header = f"# Snapshot{name} @{self._fingerprint[:8]}"
        return render(self.items, self._terms, task, budget, header=header,
                      summary=self.summary, task_id=task_id)

    def prompt_for(
        self, task: str, max_chars: int = DEFAULT_PROMPT_CHARS, *, task_id: str | None = None
    ) -> str:
        """A prompt fragment for one sub-task, at most ``max_chars`` characters: the task,
        the summary, and the anchors most relevant to the task (shared words and
        identifiers; HIGH first), each citing its source fragment. Deterministic: the same
        snapshot and task always give the same text."""
        return self.render_for(task, max_chars, task_id=task_id).text
