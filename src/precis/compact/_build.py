"""Build the summary of the older messages from the analysis: candidates, then a fill.

Every fragment of the summarized range becomes at most one candidate item, in the section
that takes its type (see :mod:`precis.compact.templates`); consolidation shapes the items
(duplicates collapse to one line with a count and the fullest wording, requirement chains
show their history on the current version, confirmations fold away). A template's ``log``
section (the ``log`` template: a timeline) takes what no other section takes, one line per
date, each speaker named.

The fill takes pinned candidates first (the user's own rules, the current goal, what the
overview names, items of an earlier summary), then the others in the order of a greedy for
budgeted maximum coverage: how much new information (content words and exact facts no
better-ranked item shows yet, weighted by rarity; an exact fact or a name counts double) a
candidate adds per token (a question of a timeline costs double: it asks rather than tells),
while they fit the allowance. Facts of HIGH fragments that no item shows go to a compact
"Exact details" list (space-separated, neighbouring fragments sharing a line and its
citation), which may hold a share of the room: in a small summary (:data:`FACTS_FIRST_ROOM`,
room for a few items at most) all of it but what the user's own rules and carried items
take, so that the facts come before other items; in a larger one less, down to
:data:`DETAILS_SHARE`. The list is itself a greedy for maximum coverage: the fact that shows
the most facts not shown yet per token first (a command line shows the paths in it and their
folders, a chain of commands each of its commands), each cited by as few fragments as can
be. The summary lists items by section, in time order. Fragments that end up in no item are
recorded with the reason.
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from precis.analysis import Analysis
from precis.analysis.model import Chain
from precis.compact._dates import DateFormatter, format_date, parse_date
from precis.compact._digest import core_text, digest, tool_call_digest
from precis.compact._facts import facts, minor
from precis.compact._labels import label
from precis.compact._retained import high_facts, priority
from precis.compact._terse import terse
from precis.compact.levels import LevelPreset
from precis.compact.quality import Presence
from precis.compact.summary import HEADER, Summary, SummaryItem, SummarySection, render_items
from precis.compact.templates import SectionSpec, Template, builtin_templates
from precis.model import Text, ToolCall
from precis.segment.model import Fragment

__all__ = ["DETAILS_SHARE", "FACTS_FIRST_ROOM", "Candidate", "SummaryBuilder", "mostly_talk"]

_PIN = 10.0
_FIRST = 100.0  # a rank ahead of any priority (pins and boosts included)
_COMMON = frozenset({
    "the", "and", "for", "are", "but", "not", "you", "all", "any", "can", "had", "her", "was",
    "one", "our", "out", "has", "him", "his", "how", "its", "may", "new", "now", "old", "see",
    "two", "who", "did", "get", "she", "too", "use", "that", "with", "have", "this", "will",
    "your", "from", "they", "been", "were", "said", "each", "which", "their", "there", "what",
    "about", "would", "make", "like", "just", "know", "take", "into", "year", "than", "them",
    "some", "could", "very", "when", "come", "only", "also", "well", "even", "back", "good",
    "much", "then", "more", "really", "think", "thanks", "thank", "great", "glad", "love",
    "yeah", "sure", "it's", "i'm", "that's", "you're", "what's", "lot", "things", "thing",
    "something", "time", "feel", "feels", "felt"
})
_FIX_CUE = re.compile(
    r"\b(?:fix(?:ed|es)?|resolv(?:e|ed|es)|solv(?:e|ed)|the (?:issue|problem|cause) (?:was|is)"
    r"|works now|now passes|root cause|workaround)\b|修复|解决|原因是|改成|改为|已修|好了",
    re.IGNORECASE,
)
_FIX_WINDOW = 60
_FIX_LABEL = re.compile(r"^\s*(?:the\s+)?fix(?:ed)?\s*[:：]\s*|^\s*修复\s*[:：]\s*", re.IGNORECASE)
_CITATION_TAIL = re.compile(r"\s*\[(?:S\d+(?:-S\d+)?(?:, )?)+\]\s*$")
_BULLET = re.compile(r"^\s*[-*+]\s+")
_HISTORY_CHARS = 90
_CONCEPTS = 12
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
_SHARED_CITE = 4  # tokens a timeline entry adds to its line's citation (", S12" and a space)
_DETAIL_FACTS = 64  # at most this many facts of one fragment in the details list
_DETAIL_CHARS = 300  # facts of neighbouring fragments share a details line up to this length
# (a line costs its bullet and citation brackets: fewer, longer lines leave a small summary
# room for more facts)
_CITE_TOKENS = 4  # tokens a fragment adds to a citation (", S12")
# fits of the details list to its room (the fact costs are estimates; a list that ends a
# few tokens short of the room in a small summary is a fact lost)
_DETAIL_TRIES = 6
_DETAIL_SLACK = 2  # tokens left over that are worth another fit
_USER_FACT = 100.0  # a fact the user gave counts as this many the agent met (see _fact_picker)
_NOTHING = 1e-9  # a gain this small is none (weights are not whole numbers)
_URL_FACT = 2.0  # a URL counts as this many facts (see _fact_weight)
_MINOR_FACT = 0.1  # a name (db_host, --verbose) or a script's own line (fi, x=$((x+1)))
_LINE_TOKENS = 4  # tokens of a details line besides its facts and citations ("- ", " []")
_DETAIL_LINE = 5  # tokens a fragment adds to the details besides its facts (its share of a line)
_DATE_TOKENS = 8  # "[25 May 2023] "
_HEADER_TOKENS = 6  # "\n## Exact details\n"
_OVERVIEW_SHARE = 0.2  # the overview takes at most this share of the summary
_OVERVIEW_CHARS = 100  # an overview entry is cut to its core beyond this
_NEEDS_QUOTES = re.compile(r"\s")  # a fact with a space is shown in backticks
_TECHNICAL_KINDS = frozenset({"code", "sql", "json", "table", "tool_call", "tool_result"})
_TALK_MIN_FRAGMENTS = 20
_TALK_MAX_TECHNICAL = 0.02
_TALK_MIN_CHAT = 0.3
_MAX_MISSES = 150
_TOP_UPS = 3
_TOP_UP_MIN = 24
_EXTRA_TITLES = {"log": ("Conversation log", "对话记录"),
                 "details": ("Exact details", "原样细节")}
_SMALL_GOAL_SHARE = 0.4  # in a small summary the goal goes first up to this share
DETAILS_SHARE = 0.6  # at most this share of the allowance is held for the details list
FACTS_FIRST_ROOM = 400  # in a summary this small the details may take all the room
_SPOKEN = frozenset({"sentence", "paragraph", "list_item", "heading"})
_BASE_WEIGHT = 0.15  # weight of a candidate's priority against the information it adds
_FACT_UNIT = 2.0  # an exact-fact-like unit (path, number, id) weighs this many words
# a word written as a name (capitalized inside a sentence: a person, place, title) is a
# specific referent, as telling as an exact fact; the common words around it are not
_NAME_UNIT = 2.0
# a question in a timeline asks rather than tells (what is known is in its answer): it
# costs the ranking this many times its tokens
_QUESTION_COST = 2.0
_ITEM_OVERHEAD = 10  # tokens of a bullet line besides its text (bullet, citation)
_ALL_FIT = 0.8  # estimated costs this far below the room: every candidate fits


@dataclass
class Candidate:
    """A possible summary item; ``text`` is computed when the fill first looks at it."""

    section: str
    order: int  # fragment position: items are listed in this order
    sources: tuple[str, ...]
    priority: float
    make_text: Callable[[], str]
    type: str | None = None
    level: str | None = None
    date: str | None = None
    speaker: str | None = None  # a timeline line names who said it
    _text: str | None = field(default=None, repr=False)
    _cost: int | None = field(default=None, repr=False)
    _item: SummaryItem | None = field(default=None, repr=False, compare=False)

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = self.make_text()
        return self._text

    def item(self) -> SummaryItem:
        """Its summary item; the same object while the fields it is made of stay the same
        (so that the item's rendered line is worked out once)."""
        text = f"{self.speaker}: {self.text}" if self.speaker else self.text
        made = self._item
        if (made is None or made.text != text or made.sources is not self.sources
                or made.type != self.type or made.level != self.level
                or made.date != self.date):
            made = self._item = SummaryItem(text, self.sources, self.type, self.level,
                                            self.date)
        return made

    def cost(self, count: Callable[[str], int]) -> int:
        """Tokens of its bullet line (with its date), counted once; a timeline entry shares
        its line, bullet and citation brackets with the others of its date."""
        if self._cost is None:
            if self.speaker and self.date:
                self._cost = count(f"{self.speaker}: {self.text}") + _SHARED_CITE
            else:
                self._cost = count(render_items([self.item()])[0]) + 1
        return self._cost


@dataclass(frozen=True)
class _Coverage:
    """What the ranking of the fill needs to know of the candidates' information (see
    :meth:`SummaryBuilder._coverage_index`); candidates by position in the builder's list."""

    slot: dict[int, int]  # id of a candidate -> its position
    ids: dict[str, int]  # per unit, its number (the lists below are by number: fast to read)
    units: list[list[int]]  # per position, the numbers of its units (none for a log line)
    total: list[int]  # per position, the weight of its units
    weights: list[int]  # per unit number, its weight
    held_by: list[list[int]]  # per unit number, the positions of the candidates holding it


class _Ranked:
    """Candidates in the order of the fill, worked out only as far as they are read (see
    :meth:`SummaryBuilder._ranking`); read from the start as often as needed."""

    def __init__(self, first: list[Candidate], more: Iterator[Candidate] | None = None,
                 last: list[Candidate] | None = None) -> None:
        self._known = first  # the order so far (this list grows)
        self._more = more  # the rest of the order, one by one ...
        self._last = last or []  # ... and what follows it

    def __iter__(self) -> Iterator[Candidate]:
        known = self._known
        n = 0
        while True:
            while n < len(known):
                yield known[n]
                n += 1
            if self._more is None:
                return
            cand = next(self._more, None)
            if cand is None:
                self._more = None
                known.extend(self._last)
            else:
                known.append(cand)


class SummaryBuilder:
    """The summary of ``analysis``'s messages ``[start, end)`` (system messages excluded)."""

    refits = True  # the quality check may re-fit it with the lost facts boosted

    def __init__(
        self,
        analysis: Analysis,
        start: int,
        end: int,
        *,
        template: Template,
        preset: LevelPreset,
        language: str,
        count: Callable[[str], int],
        kept: int,
        dates: DateFormatter,
        budgeted: bool = False,
        terse: bool = False,
    ) -> None:
        self.analysis = analysis
        self.conv = analysis.conversation
        self.start, self.end = start, end
        self.template = template
        self.preset = preset
        self.language = language
        self.count = count
        self.kept = kept
        self.dates = dates
        self.budgeted = budgeted
        # with a budget every level may compete for the room, by priority
        self.levels = ("HIGH", "MEDIUM", "LOW") if budgeted else preset.levels
        frags = analysis.segmentation.fragments
        self.fragments = frags
        self.range = [
            i for i, f in enumerate(frags)
            if start <= f.provenance.message < end and f.role != "system"
        ]
        self.in_range = set(self.range)
        self.by_message: dict[int, list[int]] = {}  # message -> its fragments in the range
        for i in self.range:
            self.by_message.setdefault(frags[i].provenance.message, []).append(i)
        self.position = {f.id: i for i, f in enumerate(frags)}
        self.dropped: dict[str, list[str]] = {}
        self.call_names = {p.id: p.name for m in self.conv.messages for p in m.parts
                           if isinstance(p, ToolCall)}
        # summaries precis wrote before (a re-compaction), and those in the range
        self.summaries = {m for m, msg in enumerate(self.conv.messages)
                          if msg.role == "user" and HEADER.match(msg.text)}
        self.prior = {frags[i].provenance.message for i in self.range} & self.summaries
        self.goal: str | None = None  # fragment id of the current goal (see short)
        self.timeline_only = template.timeline
        # timeline lines in note style (see _terse): only a timeline is written so
        self.terse = terse and self.timeline_only
        self._cited: set[str] = set()  # sources of the items taken so far (during a fill)
        self._coverage: _Coverage | None = None  # see _coverage_index
        self._fact_tokens: dict[str, int] = {}  # see _fact_cost
        self._held_facts: dict[str, frozenset[str]] | None = None  # see _holds
        self._short: tuple[SummaryItem, ...] | None = None  # see short
        self._need: tuple[str, int] | None = None  # see _details_need
        self.candidates = self._candidates()
        # fact -> the HIGH fragments holding it, by priority (its first is the one in
        # high_facts; a details line may cite any of them)
        self.fact_homes: dict[str, list[int]] = {}
        self.high_facts = self._high_facts()

    # -- candidates ---------------------------------------------------------------------

    def _drop(self, reason: str, fragment_id: str) -> None:
        self.dropped.setdefault(reason, []).append(fragment_id)

    def _priority(self, i: int) -> float:
        """See :func:`precis.compact._retained.priority`; how much a candidate says is
        weighed when the fill ranks the candidates (see :meth:`_rank`)."""
        return priority(self.analysis, i)

    def _digest(self, i: int, limit: int | None = None) -> str:
        frag = self.fragments[i]
        text = digest(frag, self.conv, limit or self.preset.item_chars, self.language,
                      self.call_names)
        if frag.kind in _SPOKEN:
            text = self.dates.annotate(text, frag.provenance.message)
            if self.terse:
                text = terse(text, self.language)
        return text

    def _allowed(self, i: int) -> bool:
        """Fragment ``i`` has an importance level the preset's summary may use."""
        return self.analysis.importance[i].level in self.levels

    def _of_prior(self, i: int) -> bool:
        """Fragment ``i`` is part of an earlier precis summary."""
        return self.fragments[i].provenance.message in self.prior

    def _confirmations_only(self, m: int) -> bool:
        """Message ``m`` says nothing but acknowledgements ("ok", "好的")."""
        folded = self.analysis.consolidation.folded
        return all(self.fragments[i].id in folded for i in self._message_fragments(m))

    def _date(self, i: int) -> str | None:
        return self.dates.of_message(self.fragments[i].provenance.message)

    def _candidates(self) -> list[Candidate]:
        a = self.analysis
        cons = a.consolidation
        owner = self.template.section_for_type()
        sources_of = {s.source: s for s in self.template.sections}
        dup_of: dict[str, tuple[str, ...]] = {}
        fullest: dict[str, str] = {}
        for group in cons.duplicates:
            for member in group.members:
                dup_of[member] = group.members
            if group.most_complete:
                fullest[group.kept] = group.most_complete
        chain_of = {c.current: c for c in cons.chains}
        allowed = self.levels
        timeline = next((s.key for s in self.template.sections if s.source == "log"), None)
        out: list[Candidate] = []
        prior = self._prior_summary_items()
        out.extend(prior)
        prior_ids = {s for c in prior for s in c.sources}
        lead_in: int | None = None  # a "the fix:" fragment introducing the next one
        for i in self.range:
            if lead_in is not None and (
                frags_msg(self.fragments, lead_in) != frags_msg(self.fragments, i)
            ):
                lead_in = None
            if _is_lead_in(self.fragments[i]) and i + 1 in self.in_range:
                lead_in = i
                continue
            frag = self.fragments[i]
            fid = frag.id
            if fid in prior_ids or self._of_prior(i):
                continue  # an earlier summary: its items are carried over above
            cls = a.classifications[i]
            level = a.importance[i].level
            if fid in cons.folded:
                self._drop("confirmation", fid)
                continue
            members = dup_of.get(fid)
            if members and members[-1] != fid:
                if self.position[members[-1]] in self.in_range:
                    continue  # cited by the kept copy's item
                self._drop("duplicate", fid)
                continue
            # (a timeline shows what was said when, earlier versions included)
            superseded = None if self.timeline_only else cons.superseded_by.get(fid)
            if superseded and not members:
                target = self.position.get(superseded)
                if target is not None and target in self.in_range:
                    continue  # shown in the history of the current version
                self._drop("superseded", fid)
                continue
            typed = owner.get(cls.type) if cls.type != "chitchat" else None
            section = typed or timeline  # what no section takes goes to the timeline
            if section is None:
                self._drop("chitchat" if cls.type == "chitchat" else "no_section", fid)
                continue
            if level not in allowed:
                self._drop("below_level", fid)
                continue
            speaker = None
            if typed is None:
                if not _substantive(frag.text) and not facts(frag.text):
                    self._drop("chitchat", fid)
                    continue
                msg = self.conv.messages[frag.provenance.message]
                speaker = msg.name or label(self.language, msg.role)
            sources = tuple(m for m in (members or (fid,)) if self.position[m] in self.in_range)
            # a timeline line is what was said then: no version history, no count
            chain = chain_of.get(fid) if speaker is None else None
            make = self._maker(i, members if speaker is None else None, fullest.get(fid),
                               chain, lead_in)
            if lead_in is not None:
                sources = (self.fragments[lead_in].id, *sources)
                lead_in = None
            if chain is not None:
                sources = tuple(dict.fromkeys(self._history(chain) + list(sources)))
            priority = self._priority(i)
            if (cls.type == "constraint" and frag.role == "user" and level == "HIGH"
                    and speaker is None):
                priority += _PIN  # the user's own rules are carried verbatim
            out.append(Candidate(section, i, sources, priority, make, cls.type,
                                 level, self._date(i), speaker))
        if "errors" in sources_of:
            self._attach_fixes(out, sources_of["errors"])
        if "concepts" in sources_of:
            out.extend(self._concepts(sources_of["concepts"]))
        if "user_messages" in sources_of:
            out.extend(self._user_messages(sources_of["user_messages"]))
        if "current_work" in sources_of:
            out.extend(self._current_work(sources_of["current_work"]))
        if "next_step" in sources_of:
            out.extend(self._next_step(sources_of["next_step"]))
        if self.preset.per_message and timeline is None:
            out.extend(self._message_log())
        return out

    def _maker(
        self,
        i: int,
        members: tuple[str, ...] | None,
        fullest: str | None,
        chain: Chain | None,
        lead_in: int | None,
    ) -> Callable[[], str]:
        def make() -> str:
            base = i
            if fullest is not None and fullest in self.position:
                base = self.position[fullest]
            text = self._digest(base)
            if lead_in is not None:
                sep = "" if self.language == "zh" else " "
                text = self._digest(lead_in, 80) + sep + text
            if members and len(members) > 1:
                text += " " + label(self.language, "said_times", n=len(members))
            if chain is not None and len(chain.fragments) > 1:
                earlier = [self._digest(self.position[f], _HISTORY_CHARS)
                           for f in self._history(chain)]
                if earlier:
                    versions = " → ".join(earlier)
                    text += f" ({label(self.language, 'earlier', versions=versions)})"
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
        default = next((s.key for s in self.template.sections if s.source != "types"),
                       self.template.sections[0].key)
        out: list[Candidate] = []
        for m in sorted(self.prior):
            section = default
            for i in self.range:
                frag = self.fragments[i]
                if frag.provenance.message != m:
                    continue
                if frag.kind == "heading":
                    section = by_title.get(frag.text.lstrip("#").strip(), default)
                    continue
                if frag.kind != "list_item":
                    continue
                text = _CITATION_TAIL.sub("", _BULLET.sub("", frag.text)).strip()
                dated = _DATE_PREFIX.match(text)  # "[8 May 2023] ..." keeps its date
                if dated:
                    text = text[dated.end():]
                if not text:
                    continue
                out.append(Candidate(section, i, (frag.id,), _PIN + self._priority(i),
                                     _constant(text), "summary", "HIGH",
                                     dated.group(1) if dated else None))
        return out

    def _attach_fixes(self, out: list[Candidate], spec: SectionSpec) -> None:
        """An error item gets the fix that followed it (the first later assistant sentence
        with a fix cue within a few dozen fragments). A fix goes to the nearest error before
        it only, and is then no item of its own (its text is in the error's item)."""
        errors = [c for c in out if c.section == spec.key and c.type == "error"]
        used: set[str] = set()
        for cand in reversed(errors):
            i = cand.order
            for j in range(i + 1, min(len(self.fragments), i + _FIX_WINDOW)):
                frag = self.fragments[j]
                if j not in self.in_range or frag.id in used:
                    break
                if frag.role == "assistant" and frag.kind in _SPOKEN and _FIX_CUE.search(frag.text):
                    fix_ids = [j]
                    if _is_lead_in(frag) and j + 1 in self.in_range:
                        fix_ids.append(j + 1)  # "The fix:" introduces it
                    fix = " ".join(self._digest(k, 160) for k in fix_ids)
                    fix = _FIX_LABEL.sub("", fix, count=1) or fix  # "→ fix: The fix: ..."
                    cand.make_text = _with_fix(cand.make_text, fix, label(self.language, "fix"))
                    cand.sources = (*cand.sources, *(self.fragments[k].id for k in fix_ids))
                    cand.priority = max(cand.priority, *(self._priority(k) for k in fix_ids))
                    used.update(self.fragments[k].id for k in fix_ids)
                    break
        out[:] = [c for c in out if c.type == "error" or not used.issuperset(c.sources)]

    def _concepts(self, spec: SectionSpec) -> list[Candidate]:
        """The identifiers and error names most often repeated in the range (at least twice)."""
        seen: dict[str, tuple[int, int]] = {}  # term -> (count, first fragment)
        for i in self.range:
            if not self._allowed(i):
                continue
            frag = self.fragments[i]
            terms = {f.text for f in facts(frag.text[:600]) if f.kind in ("identifier", "error")}
            for term in terms:
                count, first = seen.get(term, (0, i))
                seen[term] = (count + 1, first)
        ranked = sorted(
            ((n, -first, term) for term, (n, first) in seen.items() if n >= 2), reverse=True
        )[:_CONCEPTS]
        return [
            Candidate(spec.key, -first, (self.fragments[-first].id,), 1.0 + min(n, 10) / 10,
                      _constant(label(self.language, "terms_seen", term=term, n=n)), None)
            for n, first, term in ranked
        ]

    def _message_fragments(self, m: int) -> list[int]:
        return self.by_message.get(m, [])

    def _message_digest(self, m: int, limit: int) -> str:
        msg = self.conv.messages[m]
        pieces: list[str] = []
        text = msg.text
        if text.strip() and not HEADER.match(text):
            pieces.append(self.dates.annotate(core_text(text, limit, self.language), m))
        for part in msg.parts:
            if isinstance(part, ToolCall):
                pieces.append(tool_call_digest(part, 120, self.language))
        if not pieces:
            frag_ids = self._message_fragments(m)
            if frag_ids:
                pieces.append(self._digest(frag_ids[0], min(limit, 160)))
        return " ".join(p for p in pieces if p)

    def _messages_in_range(self) -> list[int]:
        return sorted(self.by_message)

    def _user_messages(self, spec: SectionSpec) -> list[Candidate]:
        out = []
        for m in self._messages_in_range():
            msg = self.conv.messages[m]
            if msg.role != "user" or not any(isinstance(p, Text) and p.text.strip()
                                             for p in msg.parts):
                continue
            if m in self.prior or self._confirmations_only(m):
                continue
            frag_ids = self._message_fragments(m)
            if not any(self._allowed(i) for i in frag_ids):
                continue
            best = max(self._priority(i) for i in frag_ids)
            out.append(Candidate(
                spec.key, frag_ids[0], tuple(self.fragments[i].id for i in frag_ids),
                best + 1.0, _lazy(self._message_digest, m, self.preset.item_chars), "user",
                None, self.dates.of_message(m)))
        return out

    def _current_work(self, spec: SectionSpec) -> list[Candidate]:
        for m in reversed(self._messages_in_range()):
            frag_ids = self._message_fragments(m)
            if self.conv.messages[m].role == "assistant" and any(
                    self._allowed(i) for i in frag_ids):
                return [Candidate(spec.key, frag_ids[0],
                                  tuple(self.fragments[i].id for i in frag_ids), _PIN,
                                  _lazy(self._message_digest, m, self.preset.item_chars),
                                  "assistant", None, self.dates.of_message(m))]
        return []

    def _next_step(self, spec: SectionSpec) -> list[Candidate]:
        types = self.analysis.classifications
        for i in reversed(self.range):
            if types[i].type in ("todo", "plan") and self._allowed(i) and not self._of_prior(i):
                return [Candidate(spec.key, i, (self.fragments[i].id,), _PIN,
                                  _lazy(self._digest, i, None), types[i].type, None)]
        return []

    def _message_log(self) -> list[Candidate]:
        out = []
        for m in self._messages_in_range():
            frag_ids = self._message_fragments(m)
            msg = self.conv.messages[m]
            if m in self.prior or self._confirmations_only(m):
                continue
            speaker = msg.name or label(self.language, msg.role)
            best = max(self._priority(i) for i in frag_ids)
            make = _prefixed(speaker, _lazy(self._log_digest, m, self.preset.item_chars))
            out.append(Candidate("log", frag_ids[0],
                                 tuple(self.fragments[i].id for i in frag_ids), best - 1.0,
                                 make, msg.role, None, self.dates.of_message(m)))
        return out

    def _log_digest(self, m: int, limit: int) -> str:
        """A log line for message ``m``: what its fragments say that the items taken so far
        (``self._cited``) do not already show."""
        fresh = [i for i in self._message_fragments(m) if self.fragments[i].id not in self._cited]
        if len(fresh) == len(self._message_fragments(m)):
            return self._message_digest(m, limit)
        sep = "" if self.language == "zh" else " "
        return core_text(sep.join(self._digest(i, limit) for i in fresh), limit, self.language)

    # -- short summary ------------------------------------------------------------------

    def short(self) -> list[SummaryItem]:
        """What we are doing now: current goal, latest request, last decision, next step;
        for a timeline, who talks and over which dates. (Worked out once: it depends on
        the analysis and the range only.)"""
        if self._short is None:
            self._short = tuple(self._short_items())
        return list(self._short)

    def _short_items(self) -> list[SummaryItem]:
        if self.timeline_only:
            return self._who_and_when()
        a = self.analysis
        types = a.classifications
        frags = self.fragments
        # the summarized messages only: the recent ones follow the summary verbatim; an
        # acknowledgement or a "go on" (folded) says nothing of its own
        folded = a.consolidation.folded
        everything = [i for i in self.range
                      if _substantive(frags[i].text) and frags[i].id not in folded
                      and a.importance[i].level in self.levels
                      and frags[i].provenance.message not in self.summaries]
        superseded = a.consolidation.superseded_by
        picks: list[tuple[str, int]] = []
        goal = next((i for i in reversed(everything)
                     if types[i].type == "goal" and frags[i].id not in superseded), None)
        self.goal = frags[goal].id if goal is not None else None
        if goal is not None:
            picks.append(("goal_now", goal))
        request = next((i for i in reversed(everything)
                        if frags[i].role == "user" and frags[i].kind in _SPOKEN
                        and types[i].type not in ("chitchat",)
                        and not HEADER.match(frags[i].text)), None)
        if request is not None and request != goal:
            picks.append(("latest_request", request))
        decision = next((i for i in reversed(everything) if types[i].type == "decision"), None)
        if decision is not None and decision not in (goal, request):
            picks.append(("last_decision", decision))
        step = next((i for i in reversed(everything) if types[i].type in ("todo", "plan")), None)
        if step is not None and step not in (goal, request, decision):
            picks.append(("next", step))
        colon = "：" if self.language == "zh" else ": "
        return [
            SummaryItem(label(self.language, key) + colon + self._digest(i, _OVERVIEW_CHARS),
                        (frags[i].id,), types[i].type, a.importance[i].level)
            for key, i in picks
        ]

    def _who_and_when(self) -> list[SummaryItem]:
        """``"Lena and Tom, 6 April 2024 to 11 May 2024"``: who talks, over which dates (an
        earlier summary in the range adds the names and first date its overview gave)."""
        if not self.range:
            return []
        names: dict[str, None] = {}
        first: str | None = None
        last: str | None = None
        for m in self._messages_in_range():
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

    def high_ids(self) -> list[str]:
        a = self.analysis
        return [self.fragments[i].id for i in self.range if a.importance[i].level == "HIGH"]

    def retention_facts(self) -> list[tuple[str, str, str]]:
        """(fact, kind, fragment id) for the quality check."""
        return [(text, kind, self.fragments[i].id) for text, kind, i in self.high_facts]

    def _high_facts(self) -> list[tuple[str, str, int]]:
        """See :func:`precis.compact._retained.high_facts` (``fact_homes`` collects every
        HIGH fragment holding each fact)."""
        return high_facts(self.analysis, self.range, self.prior, self.fact_homes)

    def _missing(self, shown: str) -> dict[int, list[str]]:
        """Fragment -> its facts that ``shown`` does not show (by priority; at most
        ``_DETAIL_FACTS`` per fragment, so a long listing does not crowd out the rest)."""
        present = Presence(shown)
        missing: dict[int, list[str]] = {}
        for text, _, i in self.high_facts:
            if text not in present and "`" not in text:
                got = missing.setdefault(i, [])
                if len(got) < _DETAIL_FACTS:
                    got.append(text)
        return missing

    def _details_need(self, present: str) -> int:
        """Tokens the details list would take if no item showed a fact: the facts the rest
        of the output does not show, one line (bullet, date, citation) per fragment. (The
        re-fits ask again with the same ``present``: the last answer is remembered.)"""
        if self._need is not None and self._need[0] == present:
            return self._need[1]
        lines = self._missing(present)
        need = 0
        if lines:
            dates = {self._date(i) for i in lines} - {None}
            need = (self.count(" ".join(t for ts in lines.values() for t in ts))
                    + _DETAIL_LINE * len(lines) + _DATE_TOKENS * len(dates) + _HEADER_TOKENS)
        self._need = (present, need)
        return need

    def _details(self, shown: str, remaining: int) -> list[Candidate]:
        """Facts of HIGH fragments that the output does not show yet, as many as fit
        ``remaining`` (chosen by :meth:`_fact_picker`): listed in time order, separated by
        spaces (a fact holding a space in backticks), the facts of neighbouring fragments
        sharing a line and its citation (``"app/db.py 8080 `make test` [S12, S14]"``)."""
        missing = self._missing(shown)
        if not missing:
            return []
        header = self.count(f"## {self.section_title('details')}") + 2
        order = {text: n for n, text in enumerate(t for ts in missing.values() for t in ts)}

        counted: dict[str, int] = {}

        def layout(picks: list[tuple[int, str, int]]) -> tuple[list[Candidate], int]:
            if not picks:
                return [], header
            chosen: dict[int, list[str]] = {}
            for i, text, _ in picks:
                chosen.setdefault(i, []).append(text)
            shown_facts = {i: " ".join(_quoted(v) for v in sorted(vs, key=order.__getitem__))
                           for i, vs in chosen.items()}
            lines = self._detail_lines(sorted(chosen), shown_facts)
            # the lines as the summary shows them, counted together (lines counted one by
            # one add up to more); the same list comes back on the next try: counted once
            block = "\n".join(render_items([line.item() for line in lines]))
            used = counted.get(block)
            if used is None:
                used = counted[block] = header + 1 + self.count(block)
            return lines, used

        # the costs are estimates: the list is counted; a room whose list is over is made
        # smaller, one whose list leaves enough over larger
        pick = self._fact_picker(missing)
        room = remaining - header - _LINE_TOKENS
        fits, over = 0, None  # rooms known to give a list that fits / that is over
        best: list[Candidate] = []
        best_used = 0
        for _ in range(_DETAIL_TRIES):
            picks = pick(room)
            lines, used = layout(picks)
            if used > remaining:
                over = room
                while picks and used > remaining:  # the last taken (least telling) go
                    cut = used - remaining
                    while picks and cut > 0:
                        cut -= picks.pop()[2]
                    lines, used = layout(picks)
            else:
                fits = room
            if lines and used > best_used:
                best, best_used = lines, used
            if remaining - best_used < _DETAIL_SLACK:
                break
            step = room + remaining - used if over is None else (fits + over) // 2
            if step in (fits, over, room):
                break
            room = step
        return best

    def _fact_picker(self, missing: dict[int, list[str]]
                     ) -> Callable[[int], list[tuple[int, str, int]]]:
        """For the details list: given a room, ``(fragment cited, fact, estimated tokens)``
        in the order taken by a greedy for the budgeted maximum coverage of the missing
        facts. A fact shows itself and the missing facts it holds whole (:func:`_held`: the
        paths and parent folders of a command line, the commands of a chain); the fact that
        shows the most facts not shown yet per token comes first (ties: the fragment of
        higher priority). A fact of the user's own messages (the task's paths, URLs, ids)
        counts as :data:`_USER_FACT` others; one the agent met as :func:`_fact_weight`
        says (a URL more, a name less). A fact is cited by a fragment the list cites
        already when one of those holds it too; else it pays for a new citation, of the
        fragment holding the most missing facts."""
        entries = [(i, text) for i, texts in missing.items() for text in texts]
        held = self._holds([text for _, text in entries])
        shows = [held[text] for _, text in entries]
        costs = [self._fact_cost(text) for _, text in entries]
        cheapest = min(costs, default=1)
        homes = [self.fact_homes.get(text) or [i] for i, text in entries]
        holding: dict[int, list[int]] = {}  # fragment -> the entries it holds
        for k, places in enumerate(homes):
            for h in places:
                holding.setdefault(h, []).append(k)
        index = {text: k for k, (_, text) in enumerate(entries)}
        kinds = {text: kind for text, kind, _ in self.high_facts}
        weight = {text: _USER_FACT if any(self.fragments[h].role == "user" for h in places)
                  else _fact_weight(text, kinds.get(text, ""))
                  for (_, text), places in zip(entries, homes)}
        showers: dict[str, list[int]] = {}  # fact -> the entries showing it
        for k, facts_shown in enumerate(shows):
            for fact in facts_shown:
                showers.setdefault(fact, []).append(k)

        def pick(room: int) -> list[tuple[int, str, int]]:
            # gain: how many facts not shown yet an entry shows (kept up to date)
            gain = [sum(weight[fact] for fact in facts_shown) for facts_shown in shows]
            cited = [False] * len(entries)  # a fragment the list cites already holds it
            opened: set[int] = set()
            shown: set[str] = set()

            def score(k: int) -> float:
                return -gain[k] / (costs[k] + (0 if cited[k] else _CITE_TOKENS))

            heap = [(score(k), k) for k in range(len(entries))]
            heapq.heapify(heap)
            picks: dict[int, tuple[int, str, int]] = {}  # entry -> what it adds, in order
            while heap and room >= cheapest:
                _, k = heapq.heappop(heap)
                if gain[k] <= _NOTHING:
                    continue  # taken, or all it shows is shown
                fresh = score(k)
                if heap and fresh > heap[0][0]:
                    heapq.heappush(heap, (fresh, k))
                    continue
                cost = costs[k] + (0 if cited[k] else _CITE_TOKENS)
                if cost > room:
                    continue
                home = next((h for h in homes[k] if h in opened), None)
                if home is None:
                    home = max(homes[k], key=lambda h: len(holding[h]))  # ties: the first
                    opened.add(home)
                    for j in holding[home]:  # cheaper now: offered again at the new score
                        if not cited[j]:
                            cited[j] = True
                            if gain[j] > _NOTHING:
                                heapq.heappush(heap, (score(j), j))
                for fact in shows[k]:  # a fact taken before that this one shows goes
                    j = index[fact]
                    if j in picks:
                        room += picks.pop(j)[2]
                picks[k] = (home, entries[k][1], cost)
                room -= cost
                for fact in shows[k] - shown:
                    shown.add(fact)
                    for j in showers[fact]:
                        gain[j] -= weight[fact]
            return list(picks.values())

        return pick

    def _holds(self, texts: list[str]) -> dict[str, set[str]]:
        """Per fact of ``texts``, the facts of ``texts`` it shows: itself and those it holds
        whole (of all the high facts, worked out once)."""
        if self._held_facts is None:
            every = {text for text, _, _ in self.high_facts}
            by_head: dict[str, list[str]] = {}  # a command line by its first word
            for text in every:
                words = text.split(None, 1)
                if len(words) > 1:
                    by_head.setdefault(words[0], []).append(text)
            self._held_facts = {}
            for text in every:
                if text.isalnum():
                    continue
                pieces = _held(text)
                shows = (pieces & every) - {text}
                if _NEEDS_QUOTES.search(text):  # the commands of a chain
                    shows.update(t for head in pieces & by_head.keys()
                                 for t in by_head[head] if t != text and t in text)
                if shows:
                    self._held_facts[text] = frozenset(shows)
        known = set(texts)
        return {text: {text} | (self._held_facts.get(text, frozenset()) & known)
                for text in texts}

    def _fact_cost(self, text: str) -> int:
        """Tokens a fact adds to a details line (with its space and backticks)."""
        cost = self._fact_tokens.get(text)
        if cost is None:
            cost = self._fact_tokens[text] = self.count(" " + _quoted(text))
        return cost

    def _detail_lines(self, picked: list[int], shown_facts: dict[int, str]) -> list[Candidate]:
        out: list[Candidate] = []
        group: list[int] = []

        def flush() -> None:
            if group:
                text = " ".join(shown_facts[i] for i in group)
                out.append(Candidate("details", group[0],
                                     tuple(self.fragments[i].id for i in group), 0.0,
                                     _constant(text), "details", "HIGH", self._date(group[0])))
                group.clear()

        for i in picked:
            if group and (self._date(i) != self._date(group[0]) or sum(
                    len(shown_facts[g]) for g in group) + len(shown_facts[i]) > _DETAIL_CHARS):
                flush()
            group.append(i)
        flush()
        return out

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
        more in a small summary (:func:`_details_share`)."""
        boost = boost or {}
        self._cited = set()
        for cand in self.candidates:
            if cand.section == "log":  # its text depends on what is taken before it
                cand._text = cand._cost = None
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
        small = allowance <= FACTS_FIRST_ROOM
        # before the details come the user's own rules and what an earlier summary carried
        # (pinned), and the current goal: in a small summary, only when it is short (a
        # summary that does not say what the user wants now is of little use, but a long
        # goal would crowd out the exact details)

        def first(c: Candidate) -> bool:
            if c.priority >= _PIN:
                return True
            return self.goal in c.sources and (
                not small or c.cost(self.count) <= allowance * _SMALL_GOAL_SHARE)

        named = [c for c in self.candidates if c.section != "log" and c.text and first(c)]
        named_cost = sum(c.cost(self.count) for c in named) + _HEADER_TOKENS * len(
            {c.section for c in named})
        named_ids = {id(c) for c in named}
        if short and small and self._details_need(present) > remaining - named_cost:
            # a small summary whose exact details do not fit has no overview: the details
            # need the room more (and the items it would name need not go first)
            short, remaining = [], allowance - bare

        overview = set() if self.timeline_only else {s for item in short for s in item.sources}
        if self.goal is not None:
            overview.add(self.goal)  # the current goal is an item, overview or not

        def rank_key(c: Candidate) -> tuple[float, int]:
            extra = 0.0
            if not boost.keys().isdisjoint(c.sources):
                extra = max((boost.get(s, 0.0) for s in c.sources), default=0.0)
            if c.section != "log" and not overview.isdisjoint(c.sources):
                # the overview is rebuilt on every compaction: what it names must also be
                # an item, or a later compaction loses it
                extra = max(extra, _PIN)
            if id(c) in named_ids:
                # the room kept free of the details is theirs: they go before the other
                # pinned items (a re-fit's boost must not give the goal's room to a step),
                # by their own priority (the rules' pin and any boost aside)
                own = c.priority - _PIN if c.priority >= _PIN else c.priority
                return (-(_FIRST + own), -c.order)
            return (-(c.priority + extra), -c.order)

        keys = {id(c): rank_key(c) for c in self.candidates}  # fixed during the fill

        def key(c: Candidate) -> tuple[float, int]:
            return keys[id(c)]

        share = max(details_share, _details_share(allowance))
        reserve = min(self._details_need(present),
                      int(max(0, remaining - named_cost) * share))
        remaining -= reserve

        ranked = self._ranking(key, present, boost, remaining)
        chosen: list[Candidate] = []
        started: set[str] = set()
        remaining = self._greedy(ranked, chosen, started, remaining)
        if overview:
            # an overview entry whose fragments found no room as items goes too (a later
            # compaction would lose what it names), and its room goes to the details
            cited = {s for c in chosen for s in c.sources}
            kept = [item for item in short if cited.issuperset(item.sources)]
            if len(kept) < len(short):
                remaining += (self.count(self._summary(short, []).render())
                              - self.count(self._summary(kept, []).render()))
                short = kept
        remaining += reserve
        if self.high_facts and remaining > 8:
            # the short overview is left out: a later compaction does not carry it over
            shown = present + "\n" + self._summary([], chosen).render()
            details = self._details(shown, remaining)
            if details:
                chosen.extend(details)
                remaining -= sum(c.cost(self.count) for c in details) + self.count(
                    f"## {self.section_title('details')}") + 2
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

    def _ranking(self, key: Callable[[Candidate], tuple[float, int]], present: str,
                 boost: dict[str, float], room: int) -> _Ranked:
        """The order in which candidates are offered to the fill: pinned ones first (by
        priority), then those the re-fit boosts, then by how much new information each adds
        per token (a greedy for the budgeted maximum-coverage problem): its priority plus
        the weight of the words and exact facts it shows that no better-ranked item (nor the
        rest of the output) shows yet, over its estimated tokens. Log lines (their text
        depends on what is taken before them) follow by priority. The greedy runs only as
        far as the order is read: a small summary takes the first few of many candidates."""
        pinned: list[Candidate] = []
        boosted: list[Candidate] = []
        free: list[Candidate] = []
        log: list[Candidate] = []
        for cand in self.candidates:
            if cand.section == "log":
                log.append(cand)
            elif -key(cand)[0] >= _PIN:
                pinned.append(cand)
            elif not boost.keys().isdisjoint(cand.sources):
                boosted.append(cand)
            else:
                free.append(cand)
        pinned.sort(key=key)
        boosted.sort(key=key)
        pinned += boosted
        log.sort(key=key)
        costs = [(_estimate(c.text) + _ITEM_OVERHEAD)
                 * (_QUESTION_COST if c.speaker and _QUESTION.search(c.text) else 1.0)
                 for c in free]
        if sum(costs) <= room * _ALL_FIT:  # all of them fit: no choice to make
            return _Ranked(pinned + sorted(free, key=key) + log)
        cov = self._coverage_index()
        units, weights, held_by = cov.units, cov.weights, cov.held_by
        # gain: weight (in thousandths, whole numbers: sums do not depend on their order) of
        # a candidate's units not covered yet, kept up to date through the unit's holders;
        # by candidate position (of all candidates: only those of ``free`` are read)
        gain = cov.total.copy()
        covered = bytearray(len(weights))  # by unit number: shown already

        def cover(found: Iterable[int]) -> None:
            for u in found:
                if not covered[u]:
                    covered[u] = 1
                    w = weights[u]
                    for holder in held_by[u]:
                        gain[holder] -= w

        if present:
            ids = cov.ids
            cover([n for n in map(ids.get, _units(present)) if n is not None])
        for cand in pinned:
            cover(units[cov.slot[id(cand)]])
        base = [0] * len(gain)
        cost = [0.0] * len(gain)
        # ties go to the earlier fragment, then to the earlier candidate (n: unique)
        heap: list[tuple[float, int, int, int]] = []
        for n, (c, est) in enumerate(zip(free, costs)):
            k = cov.slot[id(c)]
            rank = key(c)
            b = base[k] = int(max(0.0, -rank[0]) * _BASE_WEIGHT * 1000)
            cost[k] = est
            heap.append((-(b + gain[k]) / est, rank[1], n, k))
        heapq.heapify(heap)
        candidates = self.candidates

        def greedy() -> Iterator[Candidate]:
            pop, push = heapq.heappop, heapq.heappush
            while heap:
                _, tie, n, k = pop(heap)
                fresh = -(base[k] + gain[k]) / cost[k]
                if heap and fresh > heap[0][0]:
                    push(heap, (fresh, tie, n, k))
                    continue
                cover(units[k])
                yield candidates[k]

        return _Ranked(pinned, greedy(), log)

    def _coverage_index(self) -> _Coverage:
        """The units of every candidate, the weight of every unit (inverse document
        frequency over the candidates, 0-1000, doubled for exact-fact-like units and for
        names) and the candidates holding it. Built once: the candidates' texts do not
        change."""
        if self._coverage is None:
            cands = self.candidates
            slot = {id(c): k for k, c in enumerate(cands)}
            ids: dict[str, int] = {}
            number = ids.setdefault  # a unit seen first gets the next number
            units = [[number(u, len(ids)) for u in self._said_units(c)] if c.section != "log"
                     else [] for c in cands]
            held_by: list[list[int]] = [[] for _ in ids]
            for k, mine in enumerate(units):
                for u in mine:
                    held_by[u].append(k)
            named = self._names()
            n = sum(1 for c in cands if c.section != "log") + 1
            scale = math.log(n + 1) or 1.0
            idf: dict[int, float] = {}  # by document frequency: few distinct values
            weights: list[int] = []
            for unit, held in zip(ids, held_by):
                d = len(held)
                w = idf.get(d)
                if w is None:
                    w = idf[d] = 1000 * math.log((n + 1) / (d + 0.5)) / scale
                # an exact-fact-like unit (a digit or punctuation in it) or a name weighs more
                if not unit.isalpha():
                    w *= _FACT_UNIT
                elif unit in named:
                    w *= _NAME_UNIT
                weights.append(int(w))
            total = [sum(map(weights.__getitem__, mine)) for mine in units]
            self._coverage = _Coverage(slot, ids, units, total, weights, held_by)
        return self._coverage

    def _history(self, chain: Chain) -> list[str]:
        """The earlier versions of a chain's current one in the range (a part said in the
        same message as the current version is no earlier version: it is an item)."""
        now = self.fragments[self.position[chain.current]].provenance.message
        return [f for f in chain.fragments[:-1] if self.position[f] in self.in_range
                and self.fragments[self.position[f]].provenance.message != now]

    def _said_units(self, c: Candidate) -> set[str]:
        """The units of a candidate's line that its fragments say: the line of a tool result,
        a tool call or a block leaves out what precis adds to it (a tool's label, a count of
        lines), which tells nothing of the conversation."""
        found = _units(c.text)
        if self.fragments[c.order].kind in _SPOKEN:
            return found
        said = " ".join(self.fragments[self.position[s]].text for s in c.sources).lower()
        return {u for u in found if u in said}

    def _names(self) -> set[str]:
        """Words (lowercase, as units are) that the talk of the range writes as names:
        capitalized after a lowercase word or a comma, not at the start of a sentence."""
        out: set[str] = set()
        for i in self.range:
            frag = self.fragments[i]
            if frag.kind in _SPOKEN:
                out.update(word.lower() for word in _NAME.findall(frag.text))
        return out

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
                self._cited.update(cand.sources)
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

    def unused(self, cited: set[str]) -> list[str]:
        """Fragments of the range in no item and not dropped for a reason: no room."""
        dropped = {fid for ids in self.dropped.values() for fid in ids}
        return [self.fragments[i].id for i in self.range
                if self.fragments[i].id not in cited
                and self.fragments[i].id not in dropped]

    def close(self) -> None:
        """Let go of the candidates once the summary is made (no fill after this). Their
        texts are made by closures over the builder: a reference cycle that holds the whole
        analysis, which reference counting alone frees once it is broken here, instead of
        leaving it to the garbage collector."""
        self.candidates = []
        self._coverage = None


def frags_msg(fragments: tuple[Fragment, ...], i: int) -> int:
    return fragments[i].provenance.message


def _is_lead_in(fragment: Fragment) -> bool:
    """A short fragment that introduces what follows ("The fix:", "问题有两个：")."""
    text = fragment.text.rstrip()
    return len(text) <= 60 and text.endswith((":", "：")) and fragment.kind in _SPOKEN


def _substantive(text: str) -> bool:
    """Says something on its own: not a lead-in ending with a colon, not a few characters."""
    stripped = text.strip()
    return len(stripped) >= 6 and not stripped.endswith((":", "："))


_PIECE_SEPARATORS = re.compile(r"[\s`'\"(),;:=|\[\]{}<>]+")


def _held(fact: str) -> set[str]:
    """The texts a reader sees whole in ``fact``: its pieces between separators (spaces,
    quotes, brackets, ``:``, ``=``, ...) and, for a piece that is a path, every run of its
    folders (``/srv/app/run.sh`` holds ``/srv/app``, ``app/run.sh`` and ``run.sh``)."""
    out: set[str] = set()
    for piece in _PIECE_SEPARATORS.split(fact):
        piece = piece.rstrip(".,")
        if not piece:
            continue
        out.add(piece)
        if piece[:1] == "-" and piece[1:2].isdigit():
            out.add(piece.lstrip("-"))  # the number of a flag (comm -23) or a negative one
        if "/" in piece.strip("/"):
            cuts = [n for n, c in enumerate(piece) if c == "/"]
            starts = [0] + [n + 1 for n in cuts]
            ends = [n for n in cuts if n] + [len(piece)]
            out.update(piece[a:b] for a in starts for b in ends if b - a > 1 and a < b)
    return out


def _fact_weight(text: str, kind: str) -> float:
    """How much showing a fact the agent met is worth in the details list: a number, path,
    opaque id or command that runs a program one; a URL more (it names a source outside
    the conversation that nothing in it gives back, and it is long: counted as one, it
    would always give way to a few short numbers); a name that the code and the items'
    words give back (an identifier without a digit) or a line of a script's own logic
    less."""
    if kind == "url":
        return _URL_FACT
    return _MINOR_FACT if minor(kind, text) else 1.0


def _details_share(allowance: int) -> float:
    """The share of a summary's room the exact details may hold: all of it in a small
    summary (:data:`FACTS_FIRST_ROOM`), which holds a few items at most; up to twice as
    large, falling to :data:`DETAILS_SHARE`."""
    over = allowance / FACTS_FIRST_ROOM - 1.0
    if over <= 0.0:
        return 1.0
    return 1.0 - (1.0 - DETAILS_SHARE) * min(1.0, over)


def _quoted(fact: str) -> str:
    """A fact as the details list shows it: in backticks when it holds a space."""
    return f"`{fact}`" if _NEEDS_QUOTES.search(fact) else fact


def _constant(text: str) -> Callable[[], str]:
    return lambda: text


def _lazy(fn: Callable[[int, int], str] | Callable[[int, int | None], str], *args: object
          ) -> Callable[[], str]:
    return lambda: fn(*args)  # type: ignore[arg-type]


def _prefixed(speaker: str, make: Callable[[], str]) -> Callable[[], str]:
    def text() -> str:
        body = make()
        return f"{speaker}: {body}" if body else ""
    return text


def _with_fix(make: Callable[[], str], fix: str, word: str) -> Callable[[], str]:
    return lambda: f"{make()} → {word}: {fix}"


_UNIT = re.compile(r"[^\s`'\"(),;=|\[\]{}<>，。；：（）、！？“”‘’…\u3400-\u9fff]+")
_NAME = re.compile(r"(?<=[a-z0-9,;] )[A-Z][a-z]+\b")  # "with Ed Sheeran", "in Sweden"
_QUESTION = re.compile(r"[?？]\s*$")
_CJK_RUN = re.compile(r"[\u3400-\u9fff]+")
_UNIT_STRIP = ".:!?-*#"


def _units(text: str) -> set[str]:
    """The information a line carries, as units: its distinct words (lowercase, common
    words and one- or two-letter words left out; exact-fact-like tokens such as paths,
    numbers and ids whole) and the character pairs of its Chinese runs."""
    out = set()
    for piece in _UNIT.findall(text.lower()):
        word = piece.strip(_UNIT_STRIP)
        if (len(word) >= 3 or (word and not word.isalpha())) and word not in _COMMON:
            out.add(word)
    if not text.isascii():
        for run in _CJK_RUN.findall(text):
            out.update([run[k:k + 2] for k in range(max(1, len(run) - 1))])
    return out


def _estimate(text: str) -> float:
    """Tokens of ``text``, roughly (a quarter token per Latin character, one per Han
    character): enough to rank candidates; the fill counts exactly."""
    n = len(text)
    wide = (len(text.encode("utf-8")) - n) // 2
    return (n - wide) / 4 + wide


def mostly_talk(analysis: Analysis) -> bool:
    """The conversation is mostly social talk: no tool use or code to speak of, and a good
    share of small talk (or it holds an earlier summary that was a timeline). Its summary
    reads best as a timeline (who said what, when) than sorted into goals, decisions and
    facts."""
    titles = [f"\n## {title}\n" for spec in builtin_templates()["log"].sections
              for title in spec.title.values()]
    for message in analysis.conversation.messages:  # an earlier summary was a timeline
        if message.role == "user" and HEADER.match(message.text) and any(
                title in message.text for title in titles):
            return True
    frags = analysis.segmentation.fragments
    types = analysis.classifications
    talk = [i for i, f in enumerate(frags) if f.role != "system"]
    if len(talk) < _TALK_MIN_FRAGMENTS:
        return False
    technical = sum(1 for i in talk if frags[i].kind in _TECHNICAL_KINDS)
    chat = sum(1 for i in talk if types[i].type == "chitchat")
    return technical <= _TALK_MAX_TECHNICAL * len(talk) and chat >= _TALK_MIN_CHAT * len(talk)


def fragment_language(fragments: list[Fragment] | tuple[Fragment, ...]) -> str:
    """The conversation's language: the user's, else everyone's (Han characters weigh
    against Latin words, as in segmentation)."""
    zh = en = 0
    for role_filter in ("user", None):
        for frag in fragments:
            if role_filter and frag.role != role_filter:
                continue
            if frag.language == "zh":
                zh += len(frag.text)
            elif frag.language == "en":
                en += len(frag.text) // 3
            elif frag.language == "mixed":
                zh += len(frag.text) // 2
        if zh or en:
            break
    return "zh" if zh > en else "en"
