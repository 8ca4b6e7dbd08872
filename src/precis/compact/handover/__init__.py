"""The handover: a summary a new agent can continue from, built from what happened.

Each section of the template has a source; the section builders (one module each) turn the
session's events (:mod:`precis.events`) and the analysis into :class:`Entry` lines, and
:func:`~precis.compact.handover._fit.fit` keeps the lines that fit the room by priority,
the critical ones (the requests in force, the current work, the next step, what is pending)
first. A summary precis wrote earlier that lies in the range is carried over line by line.

:class:`HandoverBuilder` offers what :func:`precis.compact.compress` asks of a builder
(``fill``, ``retention_facts``, ``high_ids``, ``unused``, ``dropped``, ``close``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import replace

from precis.compact._dates import DateFormatter
from precis.compact._facts import exact_facts
from precis.compact._scope import ScopedBuilder, SummaryScope
from precis.compact.handover._fit import Entry, fit
from precis.compact.handover._story import Story
from precis.compact.handover.chat import build_background, build_delivered, build_open, build_qa
from precis.compact.handover.check import HandoverCheck, check_handover, own_words_out
from precis.compact.handover.concepts import build_concepts
from precis.compact.handover.current import build_current, build_next
from precis.compact.handover.decisions import build_decisions
from precis.compact.handover.errors import build_errors
from precis.compact.handover.files import build_files
from precis.compact.handover.offloads import KEY as OFFLOADS
from precis.compact.handover.offloads import TITLES as OFFLOAD_TITLES
from precis.compact.handover.offloads import build_offloads
from precis.compact.handover.requests import build_goal, build_requests
from precis.compact.handover.runs import build_runs
from precis.compact.handover.service import (
    build_actions,
    build_identifiers,
    build_policy,
    build_replies,
)
from precis.compact.handover.spec import build_spec
from precis.compact.handover.types import build_types
from precis.compact.handover.work import build_done, build_pending
from precis.compact.summary import Summary, SummaryItem, SummarySection
from precis.events import SessionEvents, extract_events
from precis.events._registry import parse_arguments
from precis.model import ToolCall

__all__ = ["BUILDERS", "HandoverBuilder"]

Builder = Callable[[Story, str], list[Entry]]
BUILDERS: dict[str, Builder] = {
    "requests": build_requests,
    "goal": build_goal,
    "concepts": build_concepts,
    "files": build_files,
    "errors": build_errors,
    "decisions": build_decisions,
    "done": build_done,
    "pending": build_pending,
    "current_work": build_current,
    "next_step": build_next,
    "identifiers": build_identifiers,
    "actions": build_actions,
    "policy": build_policy,
    "replies": build_replies,
    "qa": build_qa,
    "delivered": build_delivered,
    "background": build_background,
    "open": build_open,
    "spec": build_spec,
    "runs": build_runs,
}


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [str(value)] if value is not None else []


class HandoverBuilder(ScopedBuilder):
    """The handover of a scope (see the module docs); ``events`` are the conversation's
    (extracted here when not given)."""

    refits = False  # the quality check does not re-fit a handover for exact facts

    def __init__(self, scope: SummaryScope, *, events: SessionEvents | None = None) -> None:
        super().__init__(scope)
        language = self.language
        frags = self.fragments
        if events is None:
            events = extract_events(self.conv, frags)
        # the builders read what happened; an earlier summary's lines are carried as such
        own = [i for i in self.range if self.fragments[i].provenance.message not in self.prior]
        self.story = Story(conv=self.conv, analysis=self.analysis, events=events,
                           start=self.start, end=self.end, language=language, dates=scope.dates,
                           range=own)
        self.titles = {s.key: s.title_in(language) for s in self.template.sections}
        self.entries: list[Entry] = self._prior_entries()
        self.titles[OFFLOADS] = OFFLOAD_TITLES["zh" if language == "zh" else "en"]
        self.entries.extend(build_offloads(self.story))
        for spec in self.template.sections:
            if spec.source == "types":
                self.entries.extend(build_types(self.story, spec.key, spec.types))
            elif spec.source in BUILDERS:
                self.entries.extend(BUILDERS[spec.source](self.story, spec.key))
        self._dated: dict[int, str] = self._date_entries(scope.dates)
        folded = self.analysis.consolidation.folded
        self.dropped["folded"] = [frags[i].id for i in self.range if frags[i].id in folded]
        # small talk no line cites is left out as such, not for want of room
        types = self.analysis.classifications
        self.dropped["chitchat"] = [frags[i].id for i in self.range if frags[i].id not in folded
                                    and types[i].type == "chitchat"]
        self._index = {f.id: i for i, f in enumerate(frags)}
        self._sources: dict[str, str] = {}
        for entry in self.entries:
            entry.narrow = self._narrow

    def _source(self, fid: str) -> str:
        text = self._sources.get(fid)
        if text is None:
            i = self._index.get(fid)
            text = self._sources[fid] = self._source_text(i) if i is not None else ""
        return text

    def _narrow(self, text: str, sources: tuple[str, ...]) -> tuple[str, ...]:
        """Of ``sources``, the ones a line of ``text`` needs: the first, the fragments it
        quotes, and for each exact value it shows one fragment that holds it."""
        if len(sources) <= 2:
            return sources
        keep = {sources[0]}
        for fid in sources:
            head = " ".join(self._source(fid).split())[:40]
            if len(head) >= 12 and head in text:
                keep.add(fid)
        values = {f.text.rstrip("…") for f in exact_facts(own_words_out(text))} - {""}
        held = " ".join(self._source(f) for f in keep)
        for fid in sources:
            missing = {v for v in values if v not in held}
            if not missing:
                break
            if fid not in keep and any(v in self._source(fid) for v in missing):
                keep.add(fid)
                held += " " + self._source(fid)
        return tuple(f for f in sources if f in keep)

    def _prior_entries(self) -> list[Entry]:
        """The lines of an earlier precis summary in the range, under the section whose
        title they stood under (the first section when it is not in this template)."""
        by_title = {title: spec.key for spec in self.template.sections
                    for title in spec.title.values()}
        return [Entry(section, -1e6 + i, 8.0, (text,), (self.fragments[i].id,), kind="summary",
                      why="a line of an earlier summary")
                for i, section, text in self.carried_lines(by_title)]

    def fill(self, allowance: int, boost: dict[str, float] | None = None, present: str = "",
             details_share: float = 0.0) -> tuple[Summary, list[Entry]]:
        """The handover that fits ``allowance`` tokens (``boost``, ``present`` and
        ``details_share`` are the section builder's; a handover does not use them)."""
        bare = self.count(self._summary({}).header())
        chosen = fit(self.entries, self.titles, max(0, allowance - bare - 2), self.count)
        summary = self._summary(chosen)
        for _ in range(2):  # lines counted one by one overstate the whole: use the slack
            slack = allowance - self.count(summary.render())
            if slack < 16:
                break
            more = fit(self.entries, self.titles, max(0, allowance - bare - 2) + slack // 2,
                       self.count)
            candidate = self._summary(more)
            if self.count(candidate.render()) > allowance:
                break
            chosen, summary = more, candidate
        return summary, [self.entries[k] for k in chosen]

    def _date_entries(self, dates: DateFormatter) -> dict[int, str]:
        """Dates for a conversation over several days: each line that stands for one
        message (its order is the message's index) gets that message's date, and the
        relative dates it quotes ("yesterday", 上周) what they meant that day. Returns
        ``{entry index: date}``."""
        if not dates.spans_days:
            return {}
        out: dict[int, str] = {}
        charged: set[tuple[str, str]] = set()
        for k in sorted(range(len(self.entries)), key=lambda k: self.entries[k].order):
            e = self.entries[k]
            if e.order != int(e.order) or not self.start <= e.order < self.end:
                continue
            message = int(e.order)
            day = dates.of_message(message)
            if day is None:
                continue
            out[k] = day
            e.variants = tuple(dates.annotate(v, message) for v in e.variants)
            if (e.section, day) not in charged:  # a section writes a date where it changes:
                charged.add((e.section, day))      # its first line of the day pays for it
                e.frame = self.count(f"[{day}] ")
        return out

    def _summary(self, chosen: dict[int, int]) -> Summary:
        by_section: dict[str, list[tuple[float, SummaryItem]]] = {}
        for k, v in chosen.items():
            e = self.entries[k]
            item = e.item(v)
            if k in self._dated:
                item = replace(item, date=self._dated[k])
            by_section.setdefault(e.section, []).append((e.order, item))
        keys = [spec.key for spec in self.template.sections] + [OFFLOADS]
        sections = tuple(
            SummarySection(key, self.titles[key],
                           tuple(item for _, item in sorted(by_section[key], key=lambda p: p[0])))
            for key in keys if by_section.get(key))
        first = self.fragments[self.range[0]].id if self.range else ""
        last = self.fragments[self.range[-1]].id if self.range else ""
        return Summary(language=self.language, template=self.template.name, short=(),
                       sections=sections, covers=(self.start, self.end - 1),
                       fragments=(first, last), kept=self.kept)

    def check(self, summary: Summary | None, kept: Collection[int]) -> HandoverCheck:
        """The handover's check (:func:`check_handover`) of ``summary``, with the input
        messages ``kept`` verbatim."""
        requests = {r.message: r.fragments for r in self.story.events.requests
                    if r.kind != "interrupt" and r.fragments}
        texts = {self.fragments[i].id: self._source_text(i) for i in self.range}
        last_user = bool(self.conv.messages) and self.conv.messages[-1].role == "user"
        return check_handover(summary, requests, kept, texts,
                              expect_next=not (last_user and self.end >= len(self.conv)))

    def _source_text(self, i: int) -> str:
        """A fragment's text as the check reads it: a tool call as its tool's name and its
        arguments' values (decoded from JSON)."""
        f = self.fragments[i]
        if f.kind == "tool_call":
            part = self.conv.messages[f.provenance.message].parts[f.provenance.part]
            if isinstance(part, ToolCall):
                return "\n".join([part.name, f.text, *_strings(parse_arguments(part.arguments))])
        return f.text

    def retention_facts(self) -> list[tuple[str, str, str]]:
        """(fact, kind, fragment id) of the range's HIGH fragments: what the quality report
        measures (a guard; the handover is not re-fitted for it)."""
        from precis.compact._retained import high_facts

        return [(text, kind, self.fragments[i].id)
                for text, kind, i in high_facts(self.analysis, self.range, self.prior)]

    def close(self) -> None:
        self.entries = []
