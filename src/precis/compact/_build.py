"""Build the summary of the older messages from the analysis: candidates, then a greedy fill.

Every fragment of the summarized range becomes at most one candidate item, in the section
that takes its type (see :mod:`precis.compact.templates`); consolidation shapes the items
(duplicates collapse to one line with a count and the fullest wording, requirement chains
show their history on the current version, confirmations fold away). Candidates are taken
by priority (importance score, level, pins) while they fit the token allowance; the summary
lists them by section, in time order. Fragments that end up in no item are recorded with
the reason.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from precis.analysis import Analysis
from precis.analysis.model import Chain
from precis.compact._dates import DateFormatter
from precis.compact._digest import core_text, digest, tool_call_digest
from precis.compact._facts import facts
from precis.compact._labels import label
from precis.compact.levels import LevelPreset
from precis.compact.quality import Presence
from precis.compact.summary import HEADER, Summary, SummaryItem, SummarySection, render_items
from precis.compact.templates import SectionSpec, Template
from precis.model import Text, ToolCall
from precis.segment.model import Fragment

__all__ = ["Candidate", "SummaryBuilder"]

_LEVEL_BONUS = {"HIGH": 2.0, "MEDIUM": 1.0, "LOW": 0.0}
_PIN = 10.0
_FACT_SCAN_CHARS = 2000  # exact facts are looked for in the head of long tool output
_TOOL_OUTPUT_PENALTY = 1.0
_SPECIFICITY = 2.0  # weight of rare-word content in the priority
_STRUCTURED = frozenset({"code", "sql", "json", "table", "tool_call"})
_STRUCTURED_SPECIFICITY = 0.5  # code and calls name specific things by nature
_SPREAD = 0.35  # priority given up per item already taken from the same stretch of time
_STRETCHES = 12
_CONTENT_WORD = re.compile(r"[a-z][a-z'-]{2,}|\d+(?:[.,:]\d+)*|[\u4e00-\u9fff]{2,4}")
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
_CITATION_TAIL = re.compile(r"\s*\[(?:S\d+(?:-S\d+)?(?:, )?)+\]\s*$")
_BULLET = re.compile(r"^\s*[-*+]\s+")
_HISTORY_CHARS = 90
_CONCEPTS = 12
_MAX_MISSES = 150
_TOP_UPS = 3
_TOP_UP_MIN = 24
_EXTRA_TITLES = {"log": ("Conversation log", "对话记录"),
                 "details": ("Exact details", "原样细节")}
_DETAILS_SHARE = 0.35  # at most this share of the allowance is held for the details list
_SPOKEN = frozenset({"sentence", "paragraph", "list_item", "heading"})


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
    _text: str | None = field(default=None, repr=False)
    _cost: int | None = field(default=None, repr=False)

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = self.make_text()
        return self._text

    def item(self) -> SummaryItem:
        return SummaryItem(self.text, self.sources, self.type, self.level, self.date)

    def cost(self, count: Callable[[str], int]) -> int:
        """Tokens of its bullet line (with its date), counted once."""
        if self._cost is None:
            self._cost = count(render_items([self.item()])[0]) + 1
        return self._cost


class SummaryBuilder:
    """The summary of ``analysis``'s messages ``[start, end)`` (system messages excluded)."""

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
        self.specificity = self._specificity()
        self._cited: set[str] = set()  # sources of the items taken so far (during a fill)
        self.candidates = self._candidates()
        self.high_facts = self._high_facts()

    # -- candidates ---------------------------------------------------------------------

    def _drop(self, reason: str, fragment_id: str) -> None:
        self.dropped.setdefault(reason, []).append(fragment_id)

    def _priority(self, i: int) -> float:
        """Importance without its recency part (the summary covers the whole past; what is
        recent is kept verbatim), plus how specific the fragment's words are."""
        imp = self.analysis.importance[i]
        priority = imp.score - imp.factors.get("recency", 0.0) + _LEVEL_BONUS[imp.level]
        kind = self.fragments[i].kind
        if kind == "image" or (kind == "tool_result"
                               and self.analysis.classifications[i].type != "error"):
            priority -= _TOOL_OUTPUT_PENALTY  # raw output / a picture: the talk says more
        default = _STRUCTURED_SPECIFICITY if kind in _STRUCTURED else 0.0
        return priority + _SPECIFICITY * self.specificity.get(i, default)

    def _specificity(self) -> dict[int, float]:
        """0-1 per spoken fragment: how many rare words (by inverse document frequency over
        the range) it carries; generic talk ("that's great!") scores near 0."""
        words: dict[int, set[str]] = {}
        df: dict[str, int] = {}
        for i in self.range:
            frag = self.fragments[i]
            if frag.kind not in _SPOKEN:
                continue
            found = {w for w in _CONTENT_WORD.findall(frag.text.lower()) if w not in _COMMON}
            words[i] = found
            for w in found:
                df[w] = df.get(w, 0) + 1
        if not words:
            return {}
        n = len(words)
        mass = {i: sum(math.log(n / df[w]) for w in ws) for i, ws in words.items()}
        top = max(mass.values()) or 1.0
        return {i: m / top for i, m in mass.items()}

    def _digest(self, i: int, limit: int | None = None) -> str:
        frag = self.fragments[i]
        text = digest(frag, self.conv, limit or self.preset.item_chars, self.language,
                      self.call_names)
        if frag.kind in _SPOKEN:
            text = self.dates.annotate(text, frag.provenance.message)
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
            superseded = cons.superseded_by.get(fid)
            if superseded and not members:
                target = self.position.get(superseded)
                if target is not None and target in self.in_range:
                    continue  # shown in the history of the current version
                self._drop("superseded", fid)
                continue
            if cls.type == "chitchat":
                self._drop("chitchat", fid)
                continue
            if level not in allowed:
                self._drop("below_level", fid)
                continue
            section = owner.get(cls.type)
            if section is None:
                self._drop("no_section", fid)
                continue
            sources = tuple(m for m in (members or (fid,)) if self.position[m] in self.in_range)
            make = self._maker(i, members, fullest.get(fid), chain_of.get(fid), lead_in)
            if lead_in is not None:
                sources = (self.fragments[lead_in].id, *sources)
                lead_in = None
            if fid in chain_of:
                sources = tuple(dict.fromkeys(
                    [s for s in chain_of[fid].fragments if self.position[s] in self.in_range]
                    + list(sources)
                ))
            priority = self._priority(i)
            if cls.type == "constraint" and frag.role == "user" and level == "HIGH":
                priority += _PIN  # the user's own rules are carried verbatim
            out.append(Candidate(section, i, sources, priority, make, cls.type,
                                 level, self._date(i)))
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
        if self.preset.per_message:
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
                earlier = [
                    self._digest(self.position[f], _HISTORY_CHARS)
                    for f in chain.fragments[:-1]
                    if self.position[f] in self.in_range
                ]
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
                if not text:
                    continue
                out.append(Candidate(section, i, (frag.id,), _PIN + self._priority(i),
                                     _constant(text), "summary", "HIGH"))
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
                    make, fix_id = cand.make_text, frag.id
                    fix = self._digest(j, 160)
                    cand.make_text = _with_fix(make, fix, label(self.language, "fix"))
                    cand.sources = (*cand.sources, fix_id)
                    cand.priority = max(cand.priority, self._priority(j))
                    used.add(fix_id)
                    break
        out[:] = [c for c in out if len(c.sources) != 1 or c.sources[0] not in used]

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
        """What we are doing now: current goal, latest request, last decision, next step."""
        a = self.analysis
        types = a.classifications
        frags = self.fragments
        everything = [i for i, f in enumerate(frags)
                      if f.role != "system" and _substantive(f.text)
                      and a.importance[i].level in self.levels
                      and f.provenance.message not in self.summaries]
        superseded = a.consolidation.superseded_by
        picks: list[tuple[str, int]] = []
        goal = next((i for i in reversed(everything)
                     if types[i].type == "goal" and frags[i].id not in superseded), None)
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
            SummaryItem(label(self.language, key) + colon + self._digest(i, 140),
                        (frags[i].id,), types[i].type, a.importance[i].level)
            for key, i in picks
        ]

    def high_ids(self) -> list[str]:
        a = self.analysis
        return [self.fragments[i].id for i in self.range if a.importance[i].level == "HIGH"]

    def retention_facts(self) -> list[tuple[str, str, str]]:
        """(fact, kind, fragment id) for the quality check."""
        return [(text, kind, self.fragments[i].id) for text, kind, i in self.high_facts]

    def _high_facts(self) -> list[tuple[str, str, int]]:
        """The exact facts of the range's HIGH fragments: (fact, kind, fragment index), each
        fact once (where it first appears), fragments by priority."""
        a = self.analysis
        high = sorted((i for i in self.range if a.importance[i].level == "HIGH"),
                      key=lambda i: (-self._priority(i), -i))
        seen: set[str] = set()
        out: list[tuple[str, str, int]] = []
        for i in high:
            for fact in facts(self.fragments[i].text[:_FACT_SCAN_CHARS]):
                if fact.text not in seen:
                    seen.add(fact.text)
                    out.append((fact.text, fact.kind, i))
        return out

    def _details(self, shown: str, remaining: int) -> list[Candidate]:
        """Facts of HIGH fragments that the output does not show yet, one line per fragment
        (``"`app/db.py`, 8080 [S12]"``), by priority while they fit ``remaining``."""
        present = Presence(shown)
        missing: dict[int, list[str]] = {}
        for text, _, i in self.high_facts:
            if text not in present:
                missing.setdefault(i, []).append(text)
        out: list[Candidate] = []
        started = False
        for i, values in missing.items():
            line = ", ".join(v if v.replace(".", "").replace(",", "").isdigit() else f"`{v}`"
                             for v in values if "`" not in v)
            if not line:
                continue
            cand = Candidate("details", i, (self.fragments[i].id,), 0.0, _constant(line),
                             "details", "HIGH", self._date(i))
            cost = self.count(render_items([cand.item()])[0]) + 1
            if not started:
                cost += self.count(f"## {self.section_title('details')}") + 2
            if cost > remaining:
                continue
            out.append(cand)
            remaining -= cost
            started = True
        return out

    # -- fill -----------------------------------------------------------------------------

    def section_title(self, key: str) -> str:
        if key in _EXTRA_TITLES:
            return _EXTRA_TITLES[key][self.language == "zh"]
        spec = next(s for s in self.template.sections if s.key == key)
        return spec.title_in(self.language)

    def fill(
        self, allowance: int, boost: dict[str, float] | None = None, present: str = ""
    ) -> tuple[Summary, list[Candidate]]:
        """The summary that fits ``allowance`` tokens; ``boost`` raises the priority of
        candidates citing the given fragment ids (the quality check's re-fit). ``present``
        is the rest of the output (system prompt, recent messages): facts it shows need no
        place in the details list."""
        boost = boost or {}
        self._cited = set()
        for cand in self.candidates:
            if cand.section == "log":  # its text depends on what is taken before it
                cand._text = cand._cost = None
        short = self.short()
        summary = self._summary(short, [])
        remaining = allowance - self.count(summary.render())
        if remaining < 0:
            short = []
            summary = self._summary(short, [])
            remaining = allowance - self.count(summary.render())

        reserve = 0
        if self.high_facts:
            needed = self.count(" ".join(f for f, _, _ in self.high_facts)) + 4 * len(
                {i for _, _, i in self.high_facts})
            reserve = min(needed, int(max(0, remaining) * _DETAILS_SHARE))
        remaining -= reserve

        overview = {s for item in short for s in item.sources}

        def key(c: Candidate) -> tuple[float, int]:
            extra = max((boost.get(s, 0.0) for s in c.sources), default=0.0)
            if c.section != "log" and not overview.isdisjoint(c.sources):
                # the overview is rebuilt on every compaction: what it names must also be
                # an item, or a later compaction loses it
                extra = max(extra, _PIN)
            return (-(c.priority + extra), -c.order)

        ranked = self._spread(sorted(self.candidates, key=key), key)
        chosen: list[Candidate] = []
        started: set[str] = set()
        remaining = self._greedy(ranked, chosen, started, remaining)
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
            self._greedy([c for c in ranked if id(c) not in taken], chosen, started, remaining)
        summary = self._summary(short, chosen)
        for _ in range(_TOP_UPS):
            # Lines counted one by one add up to more than the text counted whole: use the
            # difference for more items.
            slack = allowance - self.count(summary.render())
            if slack < _TOP_UP_MIN:
                break
            taken = {id(c) for c in chosen}
            before = len(chosen)
            self._greedy([c for c in ranked if id(c) not in taken], chosen, started,
                         int(slack * 0.9))
            if len(chosen) == before:
                break
            summary = self._summary(short, chosen)
        return summary, chosen

    def _spread(self, ranked: list[Candidate],
                key: Callable[[Candidate], tuple[float, int]]) -> list[Candidate]:
        """Reorder so the summary covers the whole past: each candidate gives up
        ``_SPREAD`` priority per better candidate from the same stretch of the range."""
        if not self.range:
            return ranked
        first, span = self.range[0], max(1, self.range[-1] - self.range[0] + 1)
        taken: dict[int, int] = {}
        scored: list[tuple[float, int, Candidate]] = []
        for cand in ranked:
            stretch = min(_STRETCHES - 1, max(0, (cand.order - first) * _STRETCHES // span))
            rank = taken.get(stretch, 0)
            taken[stretch] = rank + 1
            primary, order = key(cand)
            scored.append((primary + _SPREAD * rank, order, cand))
        scored.sort(key=lambda t: (t[0], t[1]))
        return [c for _, _, c in scored]

    def _greedy(self, ranked: list[Candidate], chosen: list[Candidate], started: set[str],
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
        keys = [s.key for s in self.template.sections] + list(_EXTRA_TITLES)
        by_section: dict[str, list[Candidate]] = {k: [] for k in keys}
        for cand in chosen:
            by_section[cand.section].append(cand)
        sections = tuple(
            SummarySection(k, self.section_title(k),
                           tuple(c.item() for c in sorted(by_section[k], key=lambda c: c.order)))
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

    def unused(self, cited: set[str]) -> list[str]:
        """Fragments of the range in no item and not dropped for a reason: no room."""
        dropped = {fid for ids in self.dropped.values() for fid in ids}
        return [self.fragments[i].id for i in self.range
                if self.fragments[i].id not in cited
                and self.fragments[i].id not in dropped]


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
