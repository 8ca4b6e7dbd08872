"""The summary of a whole session in a few hundred tokens: what a memory store keeps of it
(:mod:`precis.memory.summary`'s session summary card).

It is the summary :func:`~precis.compact.compress` writes, with no message kept verbatim
and a fixed room: the same template choice (:func:`~precis.compact._kind.choose_template`:
the handover for agent and service sessions, the sections of a chat, the timeline of small
talk), the same builders (:func:`make_builder`), the same fit by priority (the requests in
force, the current work, the next step and what is pending first).
"""

from __future__ import annotations

from precis.analysis import Analysis
from precis.compact._dates import DateFormatter
from precis.compact._kind import choose_template, fragment_language
from precis.compact._scope import SummaryScope
from precis.compact.handover import HandoverBuilder
from precis.compact.levels import get_level
from precis.compact.summary import Summary
from precis.compact.templates import Template
from precis.compact.timeline import TimelineBuilder
from precis.events import SessionEvents, extract_events
from precis.tokens import TokenCounter, get_counter
from precis.tokens.lines import LineMemo

__all__ = ["TERSE_ROOM", "make_builder", "summarize_session"]

TERSE_ROOM = 0.3  # a timeline with less room than this share of what it covers is terse


def make_builder(scope: SummaryScope, events: SessionEvents, *, terse: bool
                 ) -> TimelineBuilder | HandoverBuilder:
    """The builder of ``scope``'s layout: a timeline (``terse``: in note style) or the
    handover's sections."""
    if scope.template.timeline:
        return TimelineBuilder(scope, terse=terse)
    return HandoverBuilder(scope, events=events)


def summarize_session(
    analysis: Analysis,
    room: int,
    *,
    template: str | Template = "auto",
    events: SessionEvents | None = None,
    tokenizer: str | TokenCounter = "estimate",
) -> Summary | None:
    """The summary of every message of ``analysis``'s conversation that fits ``room``
    tokens (its rendering, header and citations included); ``None`` when the conversation
    has nothing but system messages. ``events`` are the conversation's (extracted here when
    not given)."""
    conv = analysis.conversation
    messages = conv.messages
    if all(m.role == "system" for m in messages):
        return None
    fragments = analysis.segmentation.fragments
    if events is None:
        events = extract_events(conv, fragments)
    language = fragment_language(fragments)
    tmpl = choose_template(template, events, analysis)
    counter = get_counter(tokenizer) if isinstance(tokenizer, str) else tokenizer
    count = LineMemo(counter)
    scope = SummaryScope(analysis, 0, len(messages), template=tmpl, preset=get_level("normal"),
                         language=language, count=count, kept=0,
                         dates=DateFormatter(conv, language), budgeted=True)
    terse = False
    if tmpl.timeline:
        told = sum(counter.count_each([m for m in messages if m.role != "system"]))
        terse = room < TERSE_ROOM * told
    builder = make_builder(scope, events, terse=terse)
    try:
        summary, _ = builder.fill(room)
    finally:
        builder.close()
    return summary
