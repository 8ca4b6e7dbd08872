"""What makes ``compress()`` fast without changing what it returns: the garbage collector
paused for the run, token counts of the input reused for the messages the repair keeps, a
summary item's line and a candidate's item worked out once, and the coverage index the
fill's ranking is built on."""

from __future__ import annotations

import gc
import heapq
import math
import weakref
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from _builders import timeline_builder

import precis
from precis import ConfigError, Conversation, Message, ToolCall, ToolResult
from precis.compact import compress
from precis.compact._compress import _list_tokens
from precis.compact.summary import SummaryItem
from precis.compact.timeline import TimelineBuilder
from precis.compact.timeline._candidate import MESSAGE_LOG, PIN, Candidate
from precis.compact.timeline._ranking import estimate, units
from precis.tokens import TokenCounter, get_counter

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "compact"


def load(name: str) -> Conversation:
    return precis.load(FIXTURES / f"{name}.json")


class Recording(TokenCounter):
    """One token per word; remembers every text it counted and whether the garbage
    collector was on at the time."""

    name = "recording"

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.gc_on: list[bool] = []

    def count(self, text: str) -> int:
        self.texts.append(text)
        self.gc_on.append(gc.isenabled())
        return len(text.split())

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return [self.count(t) for t in texts]


# -- the garbage collector -------------------------------------------------------------------


def test_the_collector_is_paused_during_a_run_and_on_again_after() -> None:
    assert gc.isenabled()
    counter = Recording()
    result = compress(load("coding_en"), level="heavy", tokenizer=counter)
    assert result.summary is not None
    assert counter.gc_on and not any(counter.gc_on)
    assert gc.isenabled()


def test_a_collector_the_caller_disabled_stays_disabled() -> None:
    gc.disable()
    try:
        compress(load("coding_en"), level="heavy")
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_collector_is_on_again_when_compress_raises() -> None:
    with pytest.raises(ConfigError):
        compress(load("coding_en"), budget=3)
    assert gc.isenabled()


# -- token counts of repaired lists ----------------------------------------------------------


def _needs_repair() -> list[Message]:
    """Two calls share the id ``c1``: the repair renames the second (a new message)."""
    return [
        Message.of("user", "Please look at the two config files and tell me what differs."),
        Message("assistant", [ToolCall("c1", "read", '{"path": "a.toml"}')]),
        Message("tool", [ToolResult("c1", "port = 8080\nhost = example.org")]),
        Message("assistant", [ToolCall("c1", "read", '{"path": "b.toml"}')]),
        Message("tool", [ToolResult("c1", "port = 9090\nhost = example.org")]),
        Message.of("assistant", "Only the port differs: 8080 in a.toml, 9090 in b.toml."),
    ]


def test_tokens_of_a_list_count_only_messages_unlike_the_input() -> None:
    messages = _needs_repair()
    counter = Recording()
    tokens = _list_tokens(messages, counter.count_each(messages), counter)
    counter.texts.clear()
    copy = replace(messages[0])  # equal, another object: its size is known
    renamed = replace(messages[0], name="bob")  # the same parts, but a name to count
    new = Message.of("user", "three more words")
    # by hand: 12 words + 4 framing; + "bob" and 1 for a name; 6 words + 4; 3 + 4; priming 3
    assert tokens([copy, renamed, messages[2], new]) == 16 + 18 + 10 + 7 + 3
    assert sorted(counter.texts) == sorted(["bob", messages[0].text, "three more words"])
    assert tokens([]) == 3


def test_unchanged_result_of_a_repaired_input_counts_its_texts_once() -> None:
    counter = Recording()
    result = compress(_needs_repair(), budget=10_000, tokenizer=counter)
    assert result.summary is None and len(result.repairs) == 1  # the second c1 renamed
    # by hand: 16 + 10 + 10 + 10 + 10 + 14 and priming 3 (a renamed id costs nothing)
    assert result.compressed_tokens == result.original_tokens == 73
    # only the call renamed and its result (changed messages) are counted again
    again = sorted(t for t, n in Counter(counter.texts).items() if n > 1)
    assert again == ['port = 9090\nhost = example.org', "read", '{"path": "b.toml"}']


def test_compressed_tokens_are_those_of_the_list_as_sent() -> None:
    conv = load("coding_en")
    counter = get_counter("estimate")
    budget = counter.count_messages(conv.messages) // 2
    result = compress(conv, budget=budget, tokenizer=counter)
    assert result.compressed_tokens == counter.count_messages(result.messages) <= budget
    result = compress(conv, level="heavy", tokenizer=counter)
    assert result.compressed_tokens == counter.count_messages(result.messages)


# -- summary items -----------------------------------------------------------------------------


def test_an_item_renders_the_same_line_every_time_and_stays_equal() -> None:
    item = SummaryItem("Port is 8080.", ("S4", "S2", "S3"))
    fresh = SummaryItem("Port is 8080.", ("S4", "S2", "S3"))
    assert item.render() == "Port is 8080. [S2-S4]"
    assert item.render() is item.render()
    assert item == fresh and hash(item) == hash(fresh) and repr(item) == repr(fresh)
    assert item.to_dict() == {"text": "Port is 8080.", "sources": ["S4", "S2", "S3"]}


def test_an_item_with_a_list_of_sources_cites_them_as_they_are_now() -> None:
    sources = ["S1"]
    item = SummaryItem("Uses Postgres.", sources)  # type: ignore[arg-type]
    assert item.render() == "Uses Postgres. [S1]"
    sources.append("S9")
    assert item.render() == "Uses Postgres. [S1, S9]"


def test_a_candidate_gives_the_same_item_until_it_changes() -> None:
    texts = iter(["first wording", "second wording"])
    cand = Candidate("facts", 3, ("S3",), 1.0, lambda: next(texts), "fact", "HIGH")
    item = cand.item()
    assert cand.item() is item
    assert item.render() == "first wording [S3]"
    cand.sources = ("S3", "S4")
    assert cand.item().render() == "first wording [S3, S4]"
    cand._text = None  # its text made again
    assert cand.item().render() == "second wording [S3, S4]"
    cand.speaker = "Tom"
    assert cand.item().text == "Tom: second wording"


# -- the coverage index and the ranking --------------------------------------------------------


def _builder(name: str) -> TimelineBuilder:
    return timeline_builder(load(name))


@pytest.mark.parametrize("name", ["coding_en", "coding_zh"])
def test_unit_weights_are_the_inverse_document_frequency(name: str) -> None:
    builder = _builder(name)
    cov = builder.ranking._index()
    weight = dict(zip(cov.ids, cov.weights))
    holders = {u: cov.held_by[n] for u, n in cov.ids.items()}
    # the units of a line that its fragments say (a tool's label and line count aside)
    said = [builder.ranking._said_units(c) if c.section != MESSAGE_LOG else set()
            for c in builder.candidates]
    n = sum(1 for c in builder.candidates if c.section != MESSAGE_LOG) + 1
    df = Counter(u for found in said for u in found)
    assert set(weight) == set(df)
    for u, d in df.items():
        w = 1000 * math.log((n + 1) / (d + 0.5)) / math.log(n + 1)
        assert weight[u] == int(w if u.isalpha() else w * 2.0)  # facts weigh twice
        assert holders[u] == [k for k, found in enumerate(said) if u in found]
    assert cov.total == [sum(weight[u] for u in found) for found in said]
    rare = [u for u, d in df.items() if d == 1 and u.isalpha()]
    common = [u for u, d in df.items() if d == max(df.values()) and u.isalpha()]
    if rare and common and max(df.values()) > 1:
        assert weight[rare[0]] > weight[common[0]]


def _reference_order(builder: TimelineBuilder, free: list[Candidate], covered: set[str]
                     ) -> list[Candidate]:
    """The greedy for maximum coverage written plainly (dicts by candidate, a lazy heap; a
    question costs twice its tokens)."""
    said = {id(c): builder.ranking._said_units(c) for c in builder.candidates
            if c.section != MESSAGE_LOG}
    df = Counter(u for found in said.values() for u in found)
    n = len(said) + 1
    weight = {u: int(1000 * math.log((n + 1) / (d + 0.5)) / math.log(n + 1)
                     * (1.0 if u.isalpha() else 2.0)) for u, d in df.items()}
    gain = {id(c): sum(weight[u] for u in said[id(c)] - covered) for c in free}
    base = {id(c): int(max(0.0, c.priority) * 0.15 * 1000) for c in free}
    cost = {id(c): (estimate(c.text) + 10) * (2.0 if c.text.rstrip().endswith(("?", "？"))
                                              else 1.0) for c in free}
    by_id = {id(c): c for c in free}
    heap = [(-(base[id(c)] + gain[id(c)]) / cost[id(c)], -c.order, k, id(c))
            for k, c in enumerate(free)]
    heapq.heapify(heap)
    order = []
    while heap:
        _, tie, k, cid = heapq.heappop(heap)
        fresh = -(base[cid] + gain[cid]) / cost[cid]
        if heap and fresh > heap[0][0]:
            heapq.heappush(heap, (fresh, tie, k, cid))
            continue
        order.append(by_id[cid])
        for u in said[cid] - covered:
            covered.add(u)
            for other in said:
                if other in gain and u in said[other]:
                    gain[other] -= weight[u]
    return order


@pytest.mark.parametrize("name", ["coding_en", "coding_zh", "sql_en"])
def test_ranking_is_the_plain_greedy_for_coverage(name: str) -> None:
    builder = _builder(name)
    present = "the recent messages mention port 8080"

    def key(c: Candidate) -> tuple[float, int]:
        return (-c.priority, -c.order)

    ranked = list(builder.ranking.order(key, present, {}, room=1))
    pinned = sorted((c for c in builder.candidates
                     if c.section != MESSAGE_LOG and c.priority >= PIN), key=key)
    free = [c for c in builder.candidates if c.section != MESSAGE_LOG and c.priority < PIN]
    covered = units(present)
    for c in pinned:
        covered |= builder.ranking._said_units(c)
    assert len(free) > 3
    assert ranked[:len(pinned)] == pinned
    assert ranked[len(pinned):] == _reference_order(builder, free, covered)


def test_a_closed_builder_is_freed_without_the_garbage_collector() -> None:
    builder = _builder("coding_en")
    summary = builder.fill(200)[0]  # (not keeping the candidates it chose)
    assert summary.items
    ref = weakref.ref(builder)
    gc.disable()
    try:
        builder.close()
        del builder
        assert ref() is None  # no cycle through its candidates' closures is left
    finally:
        gc.enable()


def test_an_open_builder_is_held_by_its_candidates() -> None:
    builder = _builder("coding_en")
    builder.fill(200)
    ref = weakref.ref(builder)
    gc.disable()
    try:
        del builder
        assert ref() is not None  # why compress() closes it
    finally:
        gc.enable()
        gc.collect()
