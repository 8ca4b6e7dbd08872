"""Session summary cards: one card per ingested session that says what the session was.

Its text is the session's digest, written by compaction's own summary
(:func:`precis.compact._session.summarize_session`: the handover for an agent or service
session, the sections of a chat, a timeline of small talk) in a room of
:data:`SUMMARY_ROOM` tokens and the session's language: the user's requests and the one in
force, what was done (files, commits, results), what is pending and the next step, with
their exact values. One line per section (``Title: item; item``); the card cites what its
lines came from (``fragment_ids``, ``message_ids``, ``message_indexes``), so its sources
lead back to the original messages like any card's.

The card's id is the session's (:func:`summary_card_id`), so a session has one summary
card: :meth:`precis.memory.Memory.ingest` adds it the first time, and when the session is
ingested again after it grew (a different content hash), updates it in place (the earlier
text stays in the card's history). A session of fewer than :data:`MIN_MESSAGES` messages
(system prompts aside) gets none: its cards say all there is. Nor, unless asked for, does
a session of small talk (one compaction would summarize as a timeline): its cards are its
memories, and a digest of it would only compete with them for the questions about one of
them (on LoCoMo, see :data:`precis.memory.search.UNASKED`).
"""

from __future__ import annotations

from typing import Any

from precis.analysis import Analysis
from precis.compact._kind import choose_template
from precis.compact._labels import label
from precis.compact._session import summarize_session
from precis.compact.summary import Summary
from precis.events import extract_events
from precis.memory.card import MemoryCard, Scope, card_id
from precis.memory.extract import Extraction, entities_of

__all__ = ["MIN_MESSAGES", "SUMMARY_ROOM", "summary_card", "summary_card_id", "summary_text"]

SUMMARY_ROOM = 400
"""Tokens the digest is fitted to (counted as compaction renders it, with its citations; the
card's text, without them, is shorter)."""

MIN_MESSAGES = 4
"""A session with fewer messages (system prompts aside) gets no summary card."""

_KEY = "\x00session summary"


def summary_card_id(session_id: str) -> str:
    """The id of ``session_id``'s summary card (the same for every version of the session)."""
    return card_id(session_id, (), _KEY)


def summary_text(summary: Summary) -> str:
    """The digest as a card's text: one line per section, ``Title: item; item`` (a date
    before the items of a timeline where it changes), no citations."""
    language = summary.language
    colon = "：" if language == "zh" else ": "
    sep = label(language, "sep")
    lines = []
    if summary.short:
        lines.append(label(language, "short") + colon
                     + sep.join(" ".join(item.text.split()) for item in summary.short))
    for section in summary.sections:
        parts = []
        date: str | None = None
        for item in section.items:
            text = " ".join(item.text.split())
            if item.date and item.date != date:
                date = item.date
                text = f"[{date}] {text}"
            parts.append(text)
        if parts:
            lines.append(section.title + colon + sep.join(parts))
    return "\n".join(lines)


def _entities(summary: Summary) -> tuple[str, ...]:
    """The exact values the digest's lines hold (ids, paths, commands, errors), at most 12;
    no names: a line's first word ("User", "In force") is a label, not one."""
    out: dict[str, None] = {}
    for item in summary.items:
        out.update(dict.fromkeys(entities_of(" ".join(item.text.split()), None, names=False)))
    return tuple(out)[:12]


def summary_card(
    extraction: Extraction,
    analysis: Analysis,
    *,
    small_talk: bool = False,
    user: str | None = None,
    agent: str | None = None,
    created_at: str = "",
) -> MemoryCard | None:
    """The summary card of the session ``extraction`` was taken from (``analysis`` is of
    the same conversation), or ``None`` for a session too short to need one, or (unless
    ``small_talk``) a session of small talk (see the module docstring)."""
    conversation = analysis.conversation
    if sum(1 for m in conversation.messages if m.role != "system") < MIN_MESSAGES:
        return None
    events = extract_events(conversation, analysis.segmentation.fragments)
    template = choose_template("auto", events, analysis)
    if template.timeline and not small_talk:
        return None
    summary = summarize_session(analysis, SUMMARY_ROOM, template=template, events=events)
    if summary is None:
        return None
    text = summary_text(summary)
    if not text:
        return None
    fragments = analysis.segmentation.fragments
    position = {f.id: i for i, f in enumerate(fragments)}
    fragment_ids = tuple(sorted((fid for fid in summary.sources() if fid in position),
                                key=position.__getitem__))
    indexes = tuple(sorted({fragments[position[fid]].provenance.message
                            for fid in fragment_ids}))
    stored = extraction.messages
    session = extraction.session
    scope: Scope = "user" if user else ("agent" if agent else "session")
    stamps = [m.timestamp for m in conversation.messages if m.timestamp]
    meta: dict[str, Any] = {
        "level": "HIGH",
        "summary": {"template": summary.template, "messages": len(conversation.messages),
                    "content_hash": session.content_hash},
    }
    return MemoryCard(
        id=summary_card_id(session.id),
        content=text,
        type="summary",
        tags=("summary", summary.template),
        entities=_entities(summary),
        session_id=session.id,
        message_ids=tuple(stored[i].message_id for i in indexes),
        message_indexes=indexes,
        fragment_ids=fragment_ids,
        user_id=user,
        agent_id=agent,
        scope=scope,
        event_time=stamps[-1] if stamps else None,
        created_at=created_at,
        updated_at=created_at,
        language="zh" if summary.language == "zh" else "en",
        metadata=meta,
    )
