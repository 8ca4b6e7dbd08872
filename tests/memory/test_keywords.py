"""The in-memory BM25 index and filter columns, checked against SQLite's own FTS5 bm25()
and against brute force, and the store keeping them in step with the file."""

from __future__ import annotations

import math
import random
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from precis.memory import Memory, MemoryCard
from precis.memory.keywords import CardTerms, KeywordIndex, Terms
from precis.memory.store import open_store
from precis.memory.store.base import Filters

_WORDS = ("deploy rollback cache redis nginx gateway payments invoices timeout retries "  # noqa: SIM905
          "migration schema index latency queue worker cron billing export import").split()


def _texts(n: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    return [(" ".join(rng.choices(_WORDS, k=rng.randint(3, 15))),
             " ".join(rng.choices(_WORDS, k=rng.randint(0, 10)))) for _ in range(n)]


def _index(texts: list[tuple[str, str]], terms: Terms, batches: int
           ) -> tuple[KeywordIndex, dict[str, int]]:
    found = terms.cards(texts)
    vocabulary: dict[str, int] = {}
    index = KeywordIndex()
    step = -(-len(texts) // batches)
    for start in range(0, len(texts), step):
        part = found[start:start + step]
        ids = [vocabulary.setdefault(t, len(vocabulary)) for f in part for t in f.freqs]
        index.add(np.arange(start + 1, start + len(part) + 1, dtype=np.int64),
                  lengths=[f.length for f in part], counts=[len(f.freqs) for f in part],
                  terms=ids, freqs=[w for f in part for w in f.freqs.values()])
    return index, vocabulary


def test_scores_equal_sqlite_fts5_bm25() -> None:
    texts = _texts(300, seed=1)
    terms = Terms()
    index, vocabulary = _index(texts, terms, batches=3)  # three segments, merged or not
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE f USING fts5 (body, context, "
               "tokenize = 'porter unicode61 remove_diacritics 2')")
    db.executemany("INSERT INTO f (rowid, body, context) VALUES (?, ?, ?)",
                   [(i + 1, b, c) for i, (b, c) in enumerate(texts)])
    for query in (["payments", "timeout"], ["redis"], ["cron", "billing", "schema"]):
        ids, scores = index.search([vocabulary[t] for t in terms.query(query)], 20)
        expected = db.execute(
            "SELECT rowid, -bm25(f, 1.0, 0.5) AS s FROM f WHERE f MATCH ? "
            "ORDER BY s DESC, rowid LIMIT 20", (" OR ".join(query),)).fetchall()
        assert len(ids) == len(expected) == 20
        assert scores == pytest.approx([s for _, s in expected], rel=1e-4)
        # equal scores may order differently; the sets of ids per score agree
        assert sorted(zip(np.round(scores, 3), ids)) == sorted(
            (round(s, 3), i) for i, s in expected)


def test_top_k_is_exact_with_allowed_ids_and_appended_segments() -> None:
    texts = _texts(2000, seed=2)
    terms = Terms()
    index, vocabulary = _index(texts, terms, batches=7)
    query = [vocabulary[t] for t in terms.query(["gateway", "latency", "worker"])]
    everything, scores = index.search(query, 2000)
    assert np.all(np.diff(scores) <= 0)
    rng = np.random.default_rng(3)
    allowed = np.sort(rng.choice(np.arange(1, 2001), size=300, replace=False))
    ids, _ = index.search(query, 25, allowed=allowed)
    assert list(ids) == [i for i in everything if i in set(allowed)][:25]
    assert index.search([], 5)[0].size == 0
    assert index.search([10_000], 5)[0].size == 0  # a term no card has


def test_terms_stem_and_drop_stop_words_but_count_them_in_the_length() -> None:
    terms = Terms()
    [card] = terms.cards([("The payments were timing out", "the retry")])
    # Porter stems; "the", "were" and "out" are stop words; context words weigh half
    assert card.freqs == {"payment": 1.0, "time": 1.0, "retri": 0.5}
    assert card.length == 7
    assert terms.query(["Payments", "payment"]) == ["payment"]


def _card(i: int, text: str, **extra: object) -> MemoryCard:
    return MemoryCard(id=f"c{i}", content=text, session_id="s", **extra)  # type: ignore[arg-type]


def test_a_second_store_object_sees_adds_updates_and_deletes(new_store) -> None:  # type: ignore[no-untyped-def]
    path = new_store("m")
    with Memory(path, embedder="none") as writer, open_store(path) as reader:
        writer.add([_card(1, "the zephyr rollout is blocked")])
        assert [c for c, _ in reader.keyword_search(["zephyr"], Filters(), 5)] == ["c1"]
        writer.add([_card(2, "zephyr rollout resumes on monday", user_id="ana")])
        found = reader.keyword_search(["zephyr"], Filters(), 5)
        assert {c for c, _ in found} == {"c1", "c2"}  # appended without a reload
        assert [c for c, _ in reader.keyword_search(["zephyr"], Filters(user="ana"), 5)] == [
            "c2"]
        writer.store.update("c2", content="quokka rollout resumes on monday")
        assert [c for c, _ in reader.keyword_search(["zephyr"], Filters(), 5)] == ["c1"]
        assert [c for c, _ in reader.keyword_search(["quokka"], Filters(), 5)] == ["c2"]
        writer.store.update("c2", user_id="bo")  # a filter field changes: columns reload
        assert reader.keyword_search(["quokka"], Filters(user="ana"), 5) == []
        writer.store.delete("c1")
        assert reader.keyword_search(["zephyr"], Filters(), 5) == []


def test_filters_match_the_sql_conditions(new_store) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(4)
    cards = [_card(i, f"release note {i}", user_id=rng.choice(["ana", "bo", None]),
                   type=rng.choice(["fact", "decision", "todo"]),
                   event_time=f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}",
                   superseded_by=rng.choice([None, None, "c0"]))
             for i in range(400)]
    with Memory(new_store("f"), embedder="none") as mem:
        mem.add(cards)
        for filters in (Filters(user="ana"), Filters(types=("todo", "fact")),
                        Filters(since="2024-03-01", until="2024-05-19"),
                        Filters(user="bo", include_superseded=False),
                        Filters(user="nobody"), Filters(types=("plan",))):
            expected = {c.id for c in mem.store.cards(filters)}
            got = {c for c, _ in mem.store.keyword_search(["release"], filters, 1000)}
            assert got == expected, filters


def test_an_older_file_gets_its_terms_on_first_search(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    with Memory(path, embedder="none") as mem:
        mem.add([_card(i, f"invoice {i} exported to the ledger") for i in range(50)])
    db = sqlite3.connect(path)
    db.execute("DELETE FROM card_terms")  # as a file from before the keyword terms
    db.execute("UPDATE meta SET value = 'older-segmenter' WHERE key = 'segmenter'")
    db.commit()
    db.close()
    with Memory(path, embedder="none") as mem:
        assert len(mem.search("ledger invoice", k=50).hits) == 50
        # "7" tells c7 apart; the words every card holds score ~0 (no result) beside it
        assert [h.card.id for h in mem.search("ledger invoice 7", k=50).hits] == ["c7"]
    db = sqlite3.connect(path)
    assert db.execute("SELECT COUNT(*) FROM card_terms").fetchone()[0] == 50


@pytest.mark.parametrize("spread", [10, 10_000_000])  # dense ids: a bitmap; sparse: a search
def test_allowed_membership(spread: int) -> None:
    from precis.memory._ivf import Allowed

    rng = np.random.default_rng(5)
    ids = rng.choice(np.arange(1, 50 * spread), size=400, replace=False).astype(np.int64)
    allowed = np.unique(np.concatenate([ids[::3], rng.integers(1, 50 * spread, size=30)]))
    expected = [i in set(allowed.tolist()) for i in ids.tolist()]
    assert Allowed(allowed).member(ids).tolist() == expected
    assert not Allowed(allowed).member(np.array([-5, 10**12])).any()


def _bm25_by_hand(cards: list[CardTerms], query: list[str]) -> dict[int, float]:
    """BM25 as FTS5 defines it, computed card by card (ids from 1)."""
    n = len(cards)
    average = sum(c.length for c in cards) / n
    out: dict[int, float] = {}
    for term in query:
        holders = [i for i, c in enumerate(cards) if term in c.freqs]
        idf = math.log((n - len(holders) + 0.5) / (len(holders) + 0.5))
        idf = idf if idf > 0 else 1e-6
        for i in holders:
            f = cards[i].freqs[term]
            norm = 1.2 * (1 - 0.75 + 0.75 * cards[i].length / average)
            out[i + 1] = out.get(i + 1, 0.0) + idf * f * 2.2 / (f + norm)
    return out


def test_skipping_common_terms_keeps_the_exact_top_k() -> None:
    rng = random.Random(6)
    rare = [f"zq{i}x" for i in range(300)]  # each in a handful of cards
    texts = [(" ".join(rng.choices(_WORDS, k=rng.randint(4, 12)) + rng.sample(rare, 2)), "")
             for _ in range(3000)]
    terms = Terms()
    cards = terms.cards(texts)
    index, vocabulary = _index(texts, terms, batches=4)
    allowed = np.arange(1, 3001, 3, dtype=np.int64)  # many: a bitmap
    few = np.arange(1, 3001, 99, dtype=np.int64)  # few: each looked up
    for trial in range(60):
        # rare and common words (the common ones are mostly skipped), or only common ones
        # and as many results as there are cards (every card must be scored)
        query = terms.query(rng.sample(_WORDS, 3) + rng.sample(rare, 1 + trial % 2))
        k = 10
        if trial >= 40:
            query, k = terms.query(rng.sample(_WORDS, 2 + trial % 3)), 10 + 1000 * (trial % 4)
        for only in (None, allowed, few):
            ids, scores = index.search([vocabulary[t] for t in query if t in vocabulary], k,
                                       allowed=only)
            expected = _bm25_by_hand(cards, query)
            if only is not None:
                expected = {i: s for i, s in expected.items() if i in set(only.tolist())}
            best = sorted(expected.items(), key=lambda x: (-x[1], x[0]))[:k]
            assert scores == pytest.approx([s for _, s in best], rel=1e-5)
            assert list(ids) == [i for i, _ in best]


@pytest.mark.parametrize("base", [0, 70_000])  # term ids under and over 16 bits
def test_postings_keep_cards_in_order_for_any_term_ids(base: int) -> None:
    index = KeywordIndex()
    # cards 1..4: term base+2 in 1, 3, 4; term base+1 in 2, 3
    index.add(np.array([1, 2], dtype=np.int64), lengths=[3, 3], counts=[1, 1],
              terms=[base + 2, base + 1], freqs=[1.0, 2.0])
    index.add(np.array([3, 4], dtype=np.int64), lengths=[3, 6], counts=[2, 1],
              terms=[base + 1, base + 2, base + 2], freqs=[1.0, 1.0, 1.0])
    docs, freqs = index._postings(base + 2)
    assert docs.tolist() == [0, 2, 3] and freqs.tolist() == [1.0, 1.0, 1.0]
    docs, freqs = index._postings(base + 1)
    assert docs.tolist() == [1, 2] and freqs.tolist() == [2.0, 1.0]
    ids, _ = index.search([base + 1], 5)
    assert ids.tolist() == [2, 3]  # twice in card 2 beats once in card 3


def test_terms_stay_right_when_the_remembered_words_are_forgotten(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from precis.memory import keywords

    texts = _texts(50, seed=7)
    expected = Terms().cards(texts)
    monkeypatch.setattr(keywords, "_KNOWN_WORDS", 5)  # forgets on nearly every call
    small = Terms()
    assert small.cards(texts) == expected
    assert [small.cards([t])[0] for t in texts[:10]] == expected[:10]
    assert small.query(["Payments", "payment", "timeouts"]) == ["payment", "timeout"]
