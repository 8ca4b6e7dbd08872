"""The timeline builder: candidates from the summarized range, then a fill to the room.

Every fragment of the range that says something becomes at most one candidate line, in the
template's first section, naming its speaker (duplicates collapse to their last copy, which
cites all; acknowledgements fold away; a "The fix:" lead-in joins the fragment it
introduces). Items of an earlier precis summary in the range are carried over verbatim,
pinned, in the section whose title they stood under. The overview says who talks, over
which dates.

The fill takes pinned candidates first, then the others in the order of
:class:`~precis.compact.timeline._ranking.CoverageRanking`, while they fit the allowance.
Facts of HIGH fragments that no item shows go to the "Exact details" list
(:class:`~precis.compact.timeline._details.DetailsList`), which may hold a share of the room:
in a small summary (:data:`FACTS_FIRST_ROOM`, room for a few items at most) all of it but
what the carried items take, so that the facts come before other items; in a larger one
less, down to :data:`DETAILS_SHARE`. The summary lists items by section, in time order, the
lines of one date (of one message when there are no dates) merged, each speaker named where
the turn changes. Fragments that end up in no item are recorded with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from precis.compact._dates import format_date, parse_date
from precis.compact._digest import digest
from precis.compact._facts import facts
from precis.compact._labels import label
from precis.compact._retained import priority
from precis.compact._scope import ScopedBuilder, SummaryScope
from precis.compact._terse import terse
from precis.compact.summary import Summary, SummaryItem, SummarySection
from precis.compact.timeline._candidate import MESSAGE_LOG, PIN, Candidate, constant
from precis.compact.timeline._details import (
    DETAILS,
    DETAILS_SHARE,
    FACTS_FIRST_ROOM,
    HEADER_TOKENS,
    DetailsList,
    room_share,
)
from precis.compact.timeline._ranking import SPOKEN, CoverageRanking
from precis.model import ToolCall
from precis.segment.model import Fragment

__all__ = ["TimelineBuilder"]

_FIRST = 100.0  # a rank ahead of any priority (pins and boosts included)
_MAX_NAMES = 6
# the overview of an earlier timeline: "In short: Lena and Tom, 6 April 2024 to 11 May 2024 ["
_PRIOR_OVERVIEW = (
    re.compile(r"^In short: (?P<who>.+?), (?P<first>\d{1,2} [A-Z][a-z]+ \d{4}) to "
               r"(?P<last>\d{1,2} [A-Z][a-z]+ \d{4}) \[", re.MULTILINE),
    re.compile(r"^简要：(?P<who>.+?)，(?P<first>\d{4}年\d{1,2}月\d{1,2}日)至"
               r"(?P<last>\d{4}年\d{1,2}月\d{1,2}日) \[", re.MULTILINE),
)
_NAME_SEP = (re.compile(r", | and "), re.compile(r"、|和"))
_DATE_PREFIX = re.compile(r"^\[(\d{1,2} [A-Z][a-z]+ \d{4}|\d{4}年\d{1,2}月\d{1,2}日)\]\s+")
_LINE_CHARS = 1200  # a timeline line holds what was said on one date, up to this length
_OVERVIEW_SHARE = 0.2  # the overview takes at most this share of the summary
_MAX_MISSES = 150
_TOP_UPS = 3
_TOP_UP_MIN = 24
# sections besides the template's: an earlier summary's message log and the exact details
_EXTRA_TITLES = {MESSAGE_LOG: ("Conversation log", "对话记录"),
                 DETAILS: ("Exact details", "原样细节")}


class TimelineBuilder(ScopedBuilder):
    """The timeline summary of a scope whose template is made only of ``log`` sections."""

    refits = True  # the quality check may re-fit it with the lost facts boosted

    def __init__(self, scope: SummaryScope, *, terse: bool = False) -> None:
        super().__init__(scope)
        self.preset = scope.preset
        self.dates = scope.dates
        # with a budget every level may compete for the room, by priority
        self.levels = ("HIGH", "MEDIUM", "LOW") if scope.budgeted else scope.preset.levels
        self.in_range = set(self.range)
        self.by_message: dict[int, list[int]] = {}  # message -> its fragments in the range
        for i in self.range:
            self.by_message.setdefault(self.fragments[i].provenance.message, []).append(i)
        self.position = {f.id: i for i, f in enumerate(self.fragments)}
        self.call_names = {p.id: p.name for m in self.conv.messages for p in m.parts
                           if isinstance(p, ToolCall)}
        self.terse = terse  # lines in note style (see _terse)
        self._short: tuple[SummaryItem, ...] | None = None  # see short
        self.candidates = self._candidates()
        self.ranking = CoverageRanking(self.candidates, self.fragments, self.position,
                                       self.range)
        self.details = DetailsList(self.analysis, self.range, self.prior, self.count,
                                   self.dates, self.section_title(DETAILS))

    # -- candidates ---------------------------------------------------------------------

    def _drop(self, reason: str, fragment_id: str) -> None:
        self.dropped.setdefault(reason, []).append(fragment_id)

    def _digest(self, i: int, limit: int | None = None) -> str:
        frag = self.fragments[i]
        text = digest(frag, self.conv, limit or self.preset.item_chars, self.language,
                      self.call_names)
        if frag.kind in SPOKEN:
            text = self.dates.annotate(text, frag.provenance.message)
            if self.terse:
                text = terse(text, self.language)
        return text

    def _date(self, i: int) -> str | None:
        return self.dates.of_message(self.fragments[i].provenance.message)

    def _candidates(self) -> list[Candidate]:
        """A line per fragment that says something (see the module docs), by position."""
        a = self.analysis
        cons = a.consolidation
        dup_of: dict[str, tuple[str, ...]] = {}
        fullest: dict[str, str] = {}
        for group in cons.duplicates:
            for member in group.members:
                dup_of[member] = group.members
            if group.most_complete:
                fullest[group.kept] = group.most_complete
        section = self.template.sections[0].key
        out = self._prior_summary_items()
        prior_ids = {s for c in out for s in c.sources}
        lead_in: int | None = None  # a "the fix:" fragment introducing the next one
        for i in self.range:
            frag = self.fragments[i]
            if lead_in is not None and (
                self.fragments[lead_in].provenance.message != frag.provenance.message
            ):
                lead_in = None
            if _is_lead_in(frag) and i + 1 in self.in_range:
                lead_in = i
                continue
            fid = frag.id
            if fid in prior_ids or frag.provenance.message in self.prior:
                continue  # an earlier summary: its items are carried over above
            if fid in cons.folded:
                self._drop("confirmation", fid)
                continue
            members = dup_of.get(fid)
            if members and members[-1] != fid:
                if self.position[members[-1]] in self.in_range:
                    continue  # cited by the kept copy's item
                self._drop("duplicate", fid)
                continue
            level = a.importance[i].level
            if level not in self.levels:
                self._drop("below_level", fid)
                continue
            if not _substantive(frag.text) and not facts(frag.text):
                self._drop("chitchat", fid)
                continue
            msg = self.conv.messages[frag.provenance.message]
            speaker = msg.name or label(self.language, msg.role)
            sources = tuple(m for m in (members or (fid,)) if self.position[m] in self.in_range)
            make = self._maker(i, fullest.get(fid), lead_in)
            if lead_in is not None:
                sources = (self.fragments[lead_in].id, *sources)
                lead_in = None
            out.append(Candidate(section, i, sources, priority(a, i), make,
                                 a.classifications[i].type, level, self._date(i), speaker))
        return out

    def _maker(self, i: int, fullest: str | None, lead_in: int | None) -> Callable[[], str]:
        """The text of fragment ``i``'s line: the fullest wording of its duplicates, after
        the lead-in that introduced it."""
        def make() -> str:
            base = i
            if fullest is not None and fullest in self.position:
                base = self.position[fullest]
            text = self._digest(base)
            if lead_in is not None:
                sep = "" if self.language == "zh" else " "
                text = self._digest(lead_in, 80) + sep + text
            return text

        return make

    def _prior_summary_items(self) -> list[Candidate]:
        """Items of a summary precis wrote before (the input is an earlier result): carried
        over verbatim, pinned, in the section whose title they stood under."""
        by_title: dict[str, str] = {}
        for spec in self.template.sections:
            for title in spec.title.values():
                by_title[title] = spec.key
        for key, titles in _EXTRA_TITLES.items():
            for title in titles:
                by_title[title] = key
        out: list[Candidate] = []
        for i, section, text in self.carried_lines(by_title):
            dated = _DATE_PREFIX.match(text)  # "[8 May 2023] ..." keeps its date
            if dated:
                text = text[dated.end():]
            if not text:
                continue
            out.append(Candidate(section, i, (self.fragments[i].id,),
                                 PIN + priority(self.analysis, i), constant(text), "summary",
                                 "HIGH", dated.group(1) if dated else None))
        return out

    # -- overview -----------------------------------------------------------------------

    def short(self) -> list[SummaryItem]:
        """Who talks, over which dates: ``"Lena and Tom, 6 April 2024 to 11 May 2024"`` (an
        earlier summary in the range adds the names and first date its overview gave).
        (Worked out once: it depends on the analysis and the range only.)"""
        if self._short is None:
            self._short = tuple(self._who_and_when())
        return list(self._short)

    def _who_and_when(self) -> list[SummaryItem]:
        if not self.range:
            return []
        names: dict[str, None] = {}
        first: str | None = None
        last: str | None = None
        for m in sorted(self.by_message):
            msg = self.conv.messages[m]
            if m in self.summaries:
                found = _PRIOR_OVERVIEW[self.language == "zh"].search(msg.text)
                if found:
                    for name in _NAME_SEP[self.language == "zh"].split(found.group("who")):
                        names.setdefault(name, None)
                    first = first or found.group("first")
                    last = found.group("last")
                continue
            names.setdefault(msg.name or label(self.language, msg.role), None)
            day = parse_date(msg.timestamp)
            if day is not None:
                last = format_date(day, self.language)
                first = first or last
        if not names:
            return []
        shown = list(names)[:_MAX_NAMES]
        if self.language == "zh":
            who = "、".join(shown[:-1]) + ("和" if len(shown) > 1 else "") + shown[-1]
        else:
            who = ", ".join(shown[:-1]) + (" and " if len(shown) > 1 else "") + shown[-1]
        text = (label(self.language, "who_when", who=who, first=first, last=last)
                if first and last and first != last else who)
        ids = (self.fragments[self.range[0]].id, self.fragments[self.range[-1]].id)
        return [SummaryItem(text, tuple(dict.fromkeys(ids)), None, None)]

    # -- what the quality check measures ------------------------------------------------

    def retention_facts(self) -> list[tuple[str, str, str]]:
        """(fact, kind, fragment id) for the quality check."""
        return [(text, kind, self.fragments[i].id) for text, kind, i in self.details.facts]

    # -- fill -----------------------------------------------------------------------------

    def section_title(self, key: str) -> str:
        if key in _EXTRA_TITLES:
            return _EXTRA_TITLES[key][self.language == "zh"]
        spec = next(s for s in self.template.sections if s.key == key)
        return spec.title_in(self.language)

    def fill(
        self, allowance: int, boost: dict[str, float] | None = None, present: str = "",
        details_share: float = DETAILS_SHARE,
    ) -> tuple[Summary, list[Candidate]]:
        """The summary that fits ``allowance`` tokens; ``boost`` raises the priority of
        candidates citing the given fragment ids (the quality check's re-fit). ``present``
        is the rest of the output (system prompt, recent messages): facts it shows need no
        place in the details list, which may hold up to ``details_share`` of the room, or
        more in a small summary (:func:`~precis.compact.timeline._details.room_share`)."""
        boost = boost or {}
        bare = self.count(self._summary([], []).render())
        short = self.short()
        remaining = allowance - bare
        # the overview repeats what items say: as many of its entries as keep it within a
        # share of the room (none in a summary too small for more than a few items)
        while short:
            size = self.count(self._summary(short, []).render())
            if size - bare <= _OVERVIEW_SHARE * allowance:
                remaining = allowance - size
                break
            short = short[:-1]
        # before the details come what an earlier summary carried (pinned)
        named = [c for c in self.candidates
                 if c.section != MESSAGE_LOG and c.text and c.priority >= PIN]
        named_cost = sum(c.cost(self.count) for c in named) + HEADER_TOKENS * len(
            {c.section for c in named})
        named_ids = {id(c) for c in named}
        if (short and allowance <= FACTS_FIRST_ROOM
                and self.details.need(present) > remaining - named_cost):
            # a small summary whose exact details do not fit has no overview: the details
            # need the room more
            short, remaining = [], allowance - bare

        def rank_key(c: Candidate) -> tuple[float, int]:
            if id(c) in named_ids:
                # the room kept free of the details is theirs: they go before the other
                # pinned items, by their own priority (the pin and any boost aside)
                own = c.priority - PIN
                return (-(_FIRST + own), -c.order)
            extra = 0.0
            if not boost.keys().isdisjoint(c.sources):
                extra = max((boost.get(s, 0.0) for s in c.sources), default=0.0)
            return (-(c.priority + extra), -c.order)

        keys = {id(c): rank_key(c) for c in self.candidates}  # fixed during the fill

        def key(c: Candidate) -> tuple[float, int]:
            return keys[id(c)]

        share = max(details_share, room_share(allowance))
        reserve = min(self.details.need(present),
                      int(max(0, remaining - named_cost) * share))
        remaining -= reserve

        ranked = self.ranking.order(key, present, boost, remaining)
        chosen: list[Candidate] = []
        started: set[str] = set()
        remaining = self._greedy(ranked, chosen, started, remaining)
        remaining += reserve
        if self.details.facts and remaining > 8:
            # the short overview is left out: a later compaction does not carry it over
            shown = present + "\n" + self._summary([], chosen).render()
            details = self.details.lines(shown, remaining)
            if details:
                chosen.extend(details)
                remaining -= sum(c.cost(self.count) for c in details) + self.details.header
        if reserve and remaining > 8:  # what the details did not need goes to more items
            taken = {id(c) for c in chosen}
            self._greedy((c for c in ranked if id(c) not in taken), chosen, started, remaining)
        summary = self._summary(short, chosen)
        for _ in range(_TOP_UPS):
            # Lines counted one by one add up to more than the text counted whole: use the
            # difference for more items.
            slack = allowance - self.count(summary.render())
            if slack < _TOP_UP_MIN:
                break
            taken = {id(c) for c in chosen}
            before = len(chosen)
            self._greedy((c for c in ranked if id(c) not in taken), chosen, started,
                         int(slack * 0.9))
            if len(chosen) == before:
                break
            summary = self._summary(short, chosen)
        return summary, chosen

    def _greedy(self, ranked: Iterable[Candidate], chosen: list[Candidate], started: set[str],
                remaining: int) -> int:
        """Take candidates in rank order while they fit; returns the room left."""
        misses = 0
        for cand in ranked:
            if remaining <= 2:
                break
            if not cand.text:
                continue
            cost = cand.cost(self.count)
            if cand.section not in started:
                cost += self.count(f"## {self.section_title(cand.section)}") + 2
            if cost <= remaining:
                chosen.append(cand)
                started.add(cand.section)
                remaining -= cost
                misses = 0
            else:
                misses += 1
                if misses > _MAX_MISSES:
                    break
        return remaining

    def _summary(self, short: list[SummaryItem], chosen: list[Candidate]) -> Summary:
        own = [s.key for s in self.template.sections]
        keys = own + [k for k in _EXTRA_TITLES if k not in own]
        by_section: dict[str, list[Candidate]] = {k: [] for k in keys}
        for cand in chosen:
            by_section[cand.section].append(cand)
        sections = tuple(
            SummarySection(k, self.section_title(k),
                           self._items(sorted(by_section[k], key=lambda c: c.order)))
            for k in keys if by_section[k]
        )
        first = self.fragments[self.range[0]].id if self.range else ""
        last = self.fragments[self.range[-1]].id if self.range else ""
        return Summary(
            language=self.language,
            template=self.template.name,
            short=tuple(short),
            sections=sections,
            covers=(self.start, self.end - 1),
            fragments=(first, last),
            kept=self.kept,
        )

    def _items(self, cands: list[Candidate]) -> tuple[SummaryItem, ...]:
        """Items in order. Timeline lines merge into one line per date (per message when
        the conversation has no dates): one bullet, one citation, each speaker named where
        the turn changes."""
        if not any(c.speaker for c in cands):  # no timeline line: an item per candidate
            return tuple([c.item() for c in cands])
        out: list[SummaryItem] = []
        run: list[Candidate] = []
        sep = "" if self.language == "zh" else " "

        def flush() -> None:
            if not run:
                return
            if len(run) == 1:
                out.append(run[0].item())
            else:
                pieces: list[str] = []
                for k, c in enumerate(run):
                    same = k and c.speaker == run[k - 1].speaker
                    pieces.append(c.text if same else f"{c.speaker}: {c.text}")
                first = run[0]
                sources = tuple(dict.fromkeys(s for c in run for s in c.sources))
                level = "HIGH" if any(c.level == "HIGH" for c in run) else first.level
                out.append(SummaryItem(sep.join(pieces), sources, first.type, level,
                                       first.date))
            run.clear()

        for cand in cands:
            if run and cand.speaker and self._same_line(run, cand):
                run.append(cand)
                continue
            flush()
            if cand.speaker:
                run.append(cand)
            else:
                out.append(cand.item())
        flush()
        return tuple(out)

    def _same_line(self, run: list[Candidate], cand: Candidate) -> bool:
        last = run[-1]
        if last.date is not None:
            if cand.date != last.date:
                return False
        elif self._message_of(cand) != self._message_of(last):
            return False
        return sum(len(c.text) for c in run) + len(cand.text) <= _LINE_CHARS

    def _message_of(self, cand: Candidate) -> int:
        return self.fragments[cand.order].provenance.message if 0 <= cand.order < len(
            self.fragments) else -1

    def close(self) -> None:
        """Let go of the candidates once the summary is made (no fill after this). Their
        texts are made by closures over the builder: a reference cycle that holds the whole
        analysis, which reference counting alone frees once it is broken here, instead of
        leaving it to the garbage collector."""
        self.candidates = []
        self.ranking.close()


def _is_lead_in(fragment: Fragment) -> bool:
    """A short fragment that introduces what follows ("The fix:", "问题有两个：")."""
    text = fragment.text.rstrip()
    return len(text) <= 60 and text.endswith((":", "：")) and fragment.kind in SPOKEN


def _substantive(text: str) -> bool:
    """Says something on its own: not a lead-in ending with a colon, not a few characters."""
    stripped = text.strip()
    return len(stripped) >= 6 and not stripped.endswith((":", "："))
