"""The "Exact details" list: facts of HIGH fragments that no other line of the output shows.

The list is a greedy for budgeted maximum coverage: the fact that shows the most facts not
shown yet per token first (a command line shows the paths in it and their folders, a chain
of commands each of its commands), each cited by as few fragments as can be. Facts are
listed in time order, separated by spaces (a fact holding a space in backticks), the facts
of neighbouring fragments sharing a line and its citation
(``"app/db.py 8080 `make test` [S12, S14]"``). The list may hold a share of the summary's
room (:func:`room_share`).
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Collection, Sequence

from precis.analysis import Analysis
from precis.compact._dates import DateFormatter
from precis.compact._facts import minor
from precis.compact._retained import high_facts
from precis.compact.quality import Presence
from precis.compact.summary import render_items
from precis.compact.timeline._candidate import Candidate, constant

__all__ = ["DETAILS", "DETAILS_SHARE", "FACTS_FIRST_ROOM", "HEADER_TOKENS", "DetailsList",
           "room_share"]

DETAILS = "details"  # the list's section key
DETAILS_SHARE = 0.6  # at most this share of the allowance is held for the details list
FACTS_FIRST_ROOM = 400  # in a summary this small the details may take all the room
HEADER_TOKENS = 6  # "\n## Exact details\n"
_DETAIL_FACTS = 64  # at most this many facts of one fragment in the details list
_DETAIL_CHARS = 300  # facts of neighbouring fragments share a details line up to this length
# (a line costs its bullet and citation brackets: fewer, longer lines leave a small summary
# room for more facts)
_CITE_TOKENS = 4  # tokens a fragment adds to a citation (", S12")
# fits of the details list to its room (the fact costs are estimates; a list that ends a
# few tokens short of the room in a small summary is a fact lost)
_DETAIL_TRIES = 6
_DETAIL_SLACK = 2  # tokens left over that are worth another fit
_USER_FACT = 100.0  # a fact the user gave counts as this many the agent met (see _picker)
_NOTHING = 1e-9  # a gain this small is none (weights are not whole numbers)
_URL_FACT = 2.0  # a URL counts as this many facts (see _fact_weight)
_MINOR_FACT = 0.1  # a name (db_host, --verbose) or a script's own line (fi, x=$((x+1)))
_LINE_TOKENS = 4  # tokens of a details line besides its facts and citations ("- ", " []")
_DETAIL_LINE = 5  # tokens a fragment adds to the details besides its facts (its share of a line)
_DATE_TOKENS = 8  # "[25 May 2023] "
_NEEDS_QUOTES = re.compile(r"\s")  # a fact with a space is shown in backticks


class DetailsList:
    """The exact facts of the HIGH fragments of ``fragments_in_range`` (of an earlier
    summary, messages ``prior``, only its items) and the details lines for those the output
    does not show, dated by ``dates``, under the heading ``title``."""

    def __init__(self, analysis: Analysis, fragments_in_range: Sequence[int],
                 prior: Collection[int], count: Callable[[str], int], dates: DateFormatter,
                 title: str) -> None:
        self.fragments = analysis.segmentation.fragments
        self.count = count
        self.dates = dates
        # fact -> the HIGH fragments holding it, by priority (its first is the one in
        # facts; a details line may cite any of them)
        self.homes: dict[str, list[int]] = {}
        self.facts = high_facts(analysis, fragments_in_range, prior, self.homes)
        self.header = count(f"## {title}") + 2  # tokens of the list's heading
        self._fact_tokens: dict[str, int] = {}  # see _fact_cost
        self._held_facts: dict[str, frozenset[str]] | None = None  # see _holds
        self._need: tuple[str, int] | None = None  # see need

    def missing(self, shown: str) -> dict[int, list[str]]:
        """Fragment -> its facts that ``shown`` does not show (by priority; at most
        ``_DETAIL_FACTS`` per fragment, so a long listing does not crowd out the rest)."""
        present = Presence(shown)
        missing: dict[int, list[str]] = {}
        for text, _, i in self.facts:
            if text not in present and "`" not in text:
                got = missing.setdefault(i, [])
                if len(got) < _DETAIL_FACTS:
                    got.append(text)
        return missing

    def need(self, present: str) -> int:
        """Tokens the details list would take if no item showed a fact: the facts the rest
        of the output does not show, one line (bullet, date, citation) per fragment. (The
        re-fits ask again with the same ``present``: the last answer is remembered.)"""
        if self._need is not None and self._need[0] == present:
            return self._need[1]
        lines = self.missing(present)
        need = 0
        if lines:
            dates = {self.date_of(i) for i in lines} - {None}
            need = (self.count(" ".join(t for ts in lines.values() for t in ts))
                    + _DETAIL_LINE * len(lines) + _DATE_TOKENS * len(dates) + HEADER_TOKENS)
        self._need = (present, need)
        return need

    def date_of(self, i: int) -> str | None:
        """The date of fragment ``i`` (of its message)."""
        return self.dates.of_message(self.fragments[i].provenance.message)

    def lines(self, shown: str, remaining: int) -> list[Candidate]:
        """Facts of HIGH fragments that the output (``shown``) does not show yet, as many
        as fit ``remaining`` (its heading included; chosen by :meth:`_picker`), as lines."""
        missing = self.missing(shown)
        if not missing:
            return []
        header = self.header
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
            lines = self._lines(sorted(chosen), shown_facts)
            # the lines as the summary shows them, counted together (lines counted one by
            # one add up to more); the same list comes back on the next try: counted once
            block = "\n".join(render_items([line.item() for line in lines]))
            used = counted.get(block)
            if used is None:
                used = counted[block] = header + 1 + self.count(block)
            return lines, used

        # the costs are estimates: the list is counted; a room whose list is over is made
        # smaller, one whose list leaves enough over larger
        pick = self._picker(missing)
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

    def _picker(self, missing: dict[int, list[str]]
                ) -> Callable[[int], list[tuple[int, str, int]]]:
        """Given a room, ``(fragment cited, fact, estimated tokens)`` in the order taken by
        a greedy for the budgeted maximum coverage of the missing facts. A fact shows itself
        and the missing facts it holds whole (:func:`_held`: the paths and parent folders of
        a command line, the commands of a chain); the fact that shows the most facts not
        shown yet per token comes first (ties: the fragment of higher priority). A fact of
        the user's own messages (the task's paths, URLs, ids) counts as :data:`_USER_FACT`
        others; one the agent met as :func:`_fact_weight` says (a URL more, a name less). A
        fact is cited by a fragment the list cites already when one of those holds it too;
        else it pays for a new citation, of the fragment holding the most missing facts."""
        entries = [(i, text) for i, texts in missing.items() for text in texts]
        held = self._holds([text for _, text in entries])
        shows = [held[text] for _, text in entries]
        costs = [self._fact_cost(text) for _, text in entries]
        cheapest = min(costs, default=1)
        homes = [self.homes.get(text) or [i] for i, text in entries]
        holding: dict[int, list[int]] = {}  # fragment -> the entries it holds
        for k, places in enumerate(homes):
            for h in places:
                holding.setdefault(h, []).append(k)
        index = {text: k for k, (_, text) in enumerate(entries)}
        kinds = {text: kind for text, kind, _ in self.facts}
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
            every = {text for text, _, _ in self.facts}
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

    def _lines(self, picked: list[int], shown_facts: dict[int, str]) -> list[Candidate]:
        out: list[Candidate] = []
        group: list[int] = []

        def flush() -> None:
            if group:
                text = " ".join(shown_facts[i] for i in group)
                out.append(Candidate(DETAILS, group[0],
                                     tuple(self.fragments[i].id for i in group), 0.0,
                                     constant(text), "details", "HIGH", self.date_of(group[0])))
                group.clear()

        for i in picked:
            if group and (self.date_of(i) != self.date_of(group[0]) or sum(
                    len(shown_facts[g]) for g in group) + len(shown_facts[i]) > _DETAIL_CHARS):
                flush()
            group.append(i)
        flush()
        return out


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


def room_share(allowance: int) -> float:
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
