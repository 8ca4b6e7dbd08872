"""The fill reads the ranking of its candidates only as far as it needs: the order worked
out lazily is the order worked out whole, however it is read; and a one-fragment citation
takes a short path to the same text."""

from __future__ import annotations

from itertools import islice
from pathlib import Path

import pytest
from _builders import timeline_builder

import precis
from precis.compact.summary import SummaryItem, cite
from precis.compact.timeline import TimelineBuilder
from precis.compact.timeline._candidate import MESSAGE_LOG, PIN, Candidate

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "compact"


def _builder(name: str) -> TimelineBuilder:
    return timeline_builder(precis.load(FIXTURES / f"{name}.json"))


def _key(c: Candidate) -> tuple[float, int]:
    return (-c.priority, -c.order)


@pytest.mark.parametrize("name", ["coding_en", "coding_zh", "sql_en"])
def test_a_ranking_read_in_parts_is_the_whole_ranking(name: str) -> None:
    builder = _builder(name)
    present = "the recent messages mention port 8080"
    # room for none: the greedy decides the whole order
    whole = list(builder.ranking.order(_key, present, {}, room=1))
    assert len(whole) == len(builder.candidates) > 3
    ranked = builder.ranking.order(_key, present, {}, room=1)
    first = list(islice(ranked, 3))  # the fill stops reading early ...
    assert first == whole[:3]
    a, b = iter(ranked), iter(ranked)  # ... and reads it again from the start
    assert [next(a), next(a)] == whole[:2]
    assert list(b) == whole
    assert list(a) == whole[2:]
    assert list(ranked) == whole


def test_a_ranking_where_all_fit_is_pinned_then_by_priority() -> None:
    builder = _builder("coding_en")
    ranked = list(builder.ranking.order(_key, "", {}, room=10**9))
    assert sorted(ranked, key=_key) == ranked  # no choice to make: by priority
    assert ranked == list(builder.ranking.order(_key, "", {}, room=10**9))


def test_a_boosted_candidate_comes_right_after_the_pinned_ones() -> None:
    builder = _builder("coding_en")
    free = [c for c in builder.candidates if c.section != MESSAGE_LOG and c.priority < PIN]
    target = next(c for c in reversed(free)  # one whose fragment no other candidate cites
                  if not any(c.sources[0] in o.sources for o in free if o is not c))
    pinned = [c for c in builder.candidates if c.section != MESSAGE_LOG and c.priority >= PIN]
    ranked = list(builder.ranking.order(_key, "", {target.sources[0]: 6.0}, room=1))
    assert ranked[len(pinned)] is target
    assert ranked == list(builder.ranking.order(_key, "", {target.sources[0]: 6.0}, room=1))


@pytest.mark.parametrize(("sources", "expected"), [
    (("S12",), "[S12]"),
    (("S012",), "[S12]"),  # a number, as in a run of several
    (("tool-3",), "[tool-3]"),
    (("S12", "S13", "S14", "S2"), "[S2, S12-S14]"),
])
def test_a_citation_of_one_fragment_reads_as_one_of_many(sources: tuple[str, ...],
                                                           expected: str) -> None:
    assert cite(sources) == expected
    assert cite(list(sources)) == expected
    assert SummaryItem("Port 8080.", sources).render() == f"Port 8080. {expected}"
