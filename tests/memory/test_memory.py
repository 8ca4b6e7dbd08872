"""Memory cards, the stores and hybrid search: every store test runs on a real SQLite file
and on a real PostgreSQL (``new_store``, ``store_kind``: tests/conftest.py)."""

from __future__ import annotations

import json
import sqlite3
from datetime import date
from pathlib import Path

import pytest
from _embedders import WordHashEmbedder

from precis import InputError, Message, NotFoundError, QueryError, StoreError, load
from precis.memory import Filters, Memory, MemoryCard, SQLiteStore, extract_cards
from precis.model import Conversation

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "compact"


@pytest.fixture
def memory(new_store) -> Memory:  # type: ignore[no-untyped-def]
    with Memory(new_store("m"), embedder="none") as mem:
        yield mem


def test_cards_carry_provenance_types_and_resolved_dates() -> None:
    conv = load(FIX / "multiday_en.json")
    ex = extract_cards(conv, session="atlas", user="ana")
    by_text = {c.content: c for c in ex.cards}
    failed = next(c for c in ex.cards if "E4107" in c.content and c.speaker == "user")
    # "Yesterday" on 5 March is 4 March: resolved in the text and in the event time
    assert "(4 March 2024)" in failed.content
    assert failed.event_time == "2024-03-04"
    assert failed.message_indexes == (5,)
    assert failed.session_id == "atlas" and failed.user_id == "ana" and failed.scope == "user"
    assert "E4107" in failed.entities
    assert all(c.fragment_ids and c.fragment_ids[0].startswith("S") for c in ex.cards)
    decision = next(c for c in ex.cards if "cutover to Saturday" in c.content)
    assert decision.type == "decision"
    # the system prompt and the bare "Then start." carry no memory
    assert not any(c.content.startswith("You are a project assistant") for c in ex.cards)
    assert "Then start." not in by_text
    # original messages kept for every index
    assert [m.index for m in ex.messages] == list(range(len(conv.messages)))


def test_chinese_cards_and_code_cards() -> None:
    ex = extract_cards(load(FIX / "coding_zh.json"), session="zh")
    texts = [c.content for c in ex.cards]
    assert any("502" in t for t in texts)
    fix = next(c for c in ex.cards if "keepalive_timeout" in c.content and "75" in c.content)
    assert fix.language == "zh"
    assert "config/settings.toml" in fix.entities
    # a confirmation ("好的") alone makes no card
    assert "好的" not in texts
    # code blocks get their own card with a code type
    assert any(c.type in ("code", "config", "sql") for c in ex.cards)


def test_ingest_is_idempotent_and_search_leads_back_to_messages(memory: Memory) -> None:
    first = memory.ingest(FIX / "multiday_en.json", user="ana")
    assert first.added == first.cards > 0
    again = memory.ingest(FIX / "multiday_en.json", user="ana")
    assert again.added == 0 and memory.stats()["cards"] == first.cards
    result = memory.search("what error did the staging sync fail with?", k=3, user="ana")
    top = result.hits[0]
    assert "E4107" in top.card.content
    assert [m.message_id for m in top.sources] == list(top.card.message_ids)
    assert "staging sync failed" in top.sources[0].text


@pytest.mark.parametrize(("question", "answer"), [
    ("why did the nightly export time out", "It ran long because the index was dropped."),
    ("导出任务超时的原因是什么", "问题在于索引被删掉了，查询变成了全表扫描。"),
])
def test_a_why_question_finds_the_stated_cause(new_store, question: str,  # type: ignore[no-untyped-def]
                                               answer: str) -> None:
    from precis.memory.query import understand

    assert understand(question).expansions  # the words that introduce a cause
    assert not understand("when did the nightly export run").expansions
    others = ["The nightly export started at 02:00.", "导出任务每天凌晨两点开始。",
              "The export writes a CSV file.", "导出的文件是 CSV 格式。"]
    with Memory(new_store("why"), embedder="none") as mem:
        mem.add([MemoryCard(id=f"c{i}", content=text, session_id="s")
                 for i, text in enumerate([*others, answer])])
        # the cause shares no content word with the question but its "because" / "问题在于"
        assert "c4" in [h.card.id for h in mem.search(question, k=3).hits]


def test_chinese_keyword_search(memory: Memory) -> None:
    memory.ingest(FIX / "multiday_zh.json", session="zh")
    memory.ingest(FIX / "multiday_en.json", session="en")
    hits = memory.search("切换时间是什么时候", k=3).hits
    assert hits and "周六晚上" in hits[0].card.content
    assert hits[0].card.session_id == "zh"
    hits = memory.search("复制槽", k=2).hits
    assert hits and "复制槽" in hits[0].card.content


def test_filters_are_enforced_in_the_store(new_store) -> None:  # type: ignore[no-untyped-def]
    with Memory(new_store("f"), embedder=WordHashEmbedder()) as mem:
        mem.ingest(FIX / "multiday_en.json", user="ana", session="a")
        mem.ingest(FIX / "multiday_en.json", user="bo", session="b")
        for query in ("E4107 replication slot", "cutover Saturday"):
            hits = mem.search(query, k=50, user="bo").hits
            assert hits and all(h.card.user_id == "bo" for h in hits)
        decisions = mem.search("cutover Saturday", k=50, types=["decision"]).hits
        assert decisions and all(h.card.type == "decision" for h in decisions)
        # vector side alone: a query with no shared keyword still finds by meaning, filtered
        only = mem.search("replication slot resized", k=5, session="a").hits
        assert only and all(h.card.session_id == "a" for h in only)
        assert "cosine" in only[0].why


def test_time_filters_and_time_words_in_the_query(memory: Memory) -> None:
    memory.ingest(FIX / "multiday_en.json")
    on_day = memory.search("cutover", k=10, since="2024-03-05", until="2024-03-05").hits
    assert on_day and all(h.card.event_time[:10] == "2024-03-05" for h in on_day)  # type: ignore[index]
    none = memory.search("cutover", k=10, since="2030-01-01").hits
    assert none == []
    # "yesterday" read from the query against `today` becomes a range
    r = memory.search("what failed yesterday", k=5, today=date(2024, 3, 5))
    assert r.plan.time is not None and r.plan.time.first == date(2024, 3, 4)
    assert r.hits and all(h.card.event_time[:10] == "2024-03-04" for h in r.hits)  # type: ignore[index]
    # a time range that matches nothing is dropped, and the result says so
    r = memory.search("cutover last year", k=5, today=date(2030, 1, 1))
    assert r.hits and r.notes and "searched all times" in r.notes[0]
    with pytest.raises(QueryError, match="not an ISO date"):
        memory.search("cutover", since="last tuesday")


@pytest.mark.parametrize(
    "query",
    ['"unbalanced', "cutover AND OR NOT", "NEAR(cutover", "cut* ^over", "'; DROP TABLE cards; --",
     "cutover) OR (1=1", "col:cutover", "{cutover}"],
)
def test_fts_syntax_and_sql_in_queries_are_plain_words(memory: Memory, query: str) -> None:
    memory.ingest(FIX / "multiday_en.json")
    before = memory.stats()["cards"]
    result = memory.search(query, k=5)
    assert memory.stats()["cards"] == before
    if "cutover" in query:
        assert any("cutover" in h.card.content.lower() for h in result.hits)


def test_unusable_queries_raise_query_errors(memory: Memory) -> None:
    memory.ingest(FIX / "multiday_en.json")
    for bad, message in (("", "empty"), ("   ", "empty"), ("the of and", "no searchable"),
                         ("x" * 10_001, "limit is 10,000"), ("ab\x00cd", "binary")):
        with pytest.raises(QueryError, match=message):
            memory.search(bad)
    long = " ".join(["cutover"] + [f"word{i}" for i in range(1500)])  # about 10 KB
    r = memory.search(long[:9_999], k=3)
    assert r.notes and "cut to its first" in r.notes[0]
    with pytest.raises(QueryError):
        memory.search("cutover", k=0)
    with pytest.raises(QueryError, match="unknown card type"):
        memory.search("cutover", types=["nonsense"])


def test_update_delete_history_and_supersession(memory: Memory) -> None:
    memory.ingest(FIX / "multiday_en.json")
    card = memory.search("cutover Saturday", k=1).hits[0].card
    new = memory.update(card.id, content="Cutover moved to Sunday morning.")
    assert memory.get(card.id).content == "Cutover moved to Sunday morning."
    assert memory.search("Sunday morning", k=1).hits[0].card.id == card.id
    found = [h.card for h in memory.search("cutover", k=50).hits if h.card.id == card.id]
    assert found and found[0].content == "Cutover moved to Sunday morning."
    other = next(c for c in memory.cards() if c.id != card.id)
    memory.update(other.id, superseded_by=new.id)
    assert memory.history(other.id)[-1].action == "superseded"
    assert other.id not in {h.card.id for h in memory.search(other.content[:40], k=50,
                                                              current_only=True).hits}
    memory.delete(card.id)
    with pytest.raises(NotFoundError):
        memory.get(card.id)
    history = memory.history(card.id)
    assert [v.action for v in history] == ["created", "updated", "deleted"]
    assert history[0].card is not None and "Saturday" in history[0].card.content
    assert memory.get(other.id).superseded_by is None  # the link to a deleted card is cut
    with pytest.raises(NotFoundError):
        memory.delete("m_missing")


def test_history_of_an_unchanged_card_and_of_one_added_again_after_a_delete(
        memory: Memory) -> None:
    card = MemoryCard(id="c1", content="The cutover is on Saturday.", session_id="s")
    memory.add([card])
    [only] = memory.history("c1")  # never changed: the stored card is version 1
    assert (only.version, only.action) == (1, "created")
    assert only.card is not None and only.card.content == card.content
    memory.delete("c1")
    memory.add([card.with_changes(content="The cutover is on Sunday.")])
    memory.update("c1", content="The cutover is on Monday.")
    history = memory.history("c1")
    assert [(v.version, v.action) for v in history] == [
        (1, "created"), (2, "deleted"), (3, "created"), (4, "updated")]
    assert [v.card.content if v.card else None for v in history] == [
        "The cutover is on Saturday.", None, "The cutover is on Sunday.",
        "The cutover is on Monday."]
    with pytest.raises(NotFoundError):
        memory.history("c2")


def test_export_import_round_trip(new_store, memory: Memory) -> None:  # type: ignore[no-untyped-def]
    memory.ingest(FIX / "sql_en.json", user="ana")
    lines = list(memory.export())
    sessions = [line for line in lines if line.startswith('{"session"')]
    cards = [line for line in lines if not line.startswith('{"session"')]
    assert len(sessions) == 1  # the session's record and messages come first
    with Memory(new_store("copy"), embedder="none") as copy:
        assert copy.import_lines(lines) == (len(cards), len(cards))
        assert copy.import_lines(lines) == (len(cards), 0)
        assert [c.to_dict() for c in copy.cards()] == [json.loads(line) for line in cards]
        assert copy.stats()["messages"] == memory.stats()["messages"]
    bad = [cards[0], '{"id": "x", "content": "y", "type": "weird"}']
    with Memory(new_store("bad"), embedder="none") as other:
        with pytest.raises(Exception, match=r"<input>:2: unknown card type 'weird'"):
            other.import_lines(bad)
        assert other.stats()["cards"] == 0  # nothing written from a file with a bad line


def test_import_takes_lines_read_as_bytes_and_names_a_line_that_is_not_text(
        new_store, memory: Memory) -> None:  # type: ignore[no-untyped-def]
    """The fault campaign's find: a line that was no text (None, a number) raised a bare
    AttributeError from deep down; bytes (a file opened in binary mode) are read as UTF-8."""
    memory.ingest(FIX / "sql_en.json", user="ana")
    lines = list(memory.export())
    with Memory(new_store("bytes"), embedder="none") as copy:
        assert copy.import_lines([line.encode() for line in lines])[1] > 0
    with Memory(new_store("junk"), embedder="none") as other:
        for junk, says in ((None, "must be text, got NoneType"), (5, "must be text, got int"),
                           (b"\xff\xfe{}", "not UTF-8")):
            with pytest.raises(InputError, match=says) as info:
                other.import_lines([lines[0], junk])  # type: ignore[list-item]
            assert info.value.where == "<input>:2"
        assert other.stats()["cards"] == 0


def test_store_refuses_what_it_cannot_open(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite3"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="cannot open"):
        SQLiteStore(junk)
    with pytest.raises(StoreError, match="not a file"):
        SQLiteStore(tmp_path)
    with pytest.raises(StoreError, match="does not exist"):
        SQLiteStore(tmp_path / "no" / "such" / "dir.sqlite3")
    newer = tmp_path / "newer.sqlite3"
    SQLiteStore(newer).close()
    db = sqlite3.connect(newer)
    db.execute("INSERT INTO migrations VALUES ('9999_future', 'x')")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="newer precis"):
        SQLiteStore(newer)


def test_store_file_is_wal_and_migrations_are_recorded(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    SQLiteStore(path).close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert [r[0] for r in db.execute("SELECT name FROM migrations ORDER BY name")] == [
        "0001_initial", "0002_runtime", "0003_keyword_terms", "0004_tenants"]


def test_cards_from_a_conversation_without_ids_or_times() -> None:
    conv = Conversation(messages=[
        Message.of("user", "Please always deploy the billing service with Helm chart v3.2."),
        Message.of("assistant", "Understood: billing deploys use Helm chart v3.2 from now on."),
    ])
    ex = extract_cards(conv)
    # the assistant restates the request: one card, which notes the earlier message
    assert len(ex.cards) == 1 and ex.cards[0].message_ids == ("#1",)
    assert ex.cards[0].metadata["also_said_in"] == ["#0"]
    assert ex.cards[0].metadata["level"] in ("LOW", "MEDIUM", "HIGH")
    assert ex.session.id.startswith("s_") and ex.cards[0].event_time is None
    again = extract_cards(conv)
    assert [c.id for c in again.cards] == [c.id for c in ex.cards]


def test_card_from_dict_rejects_bad_fields() -> None:
    good = MemoryCard(id="m_1", content="x").to_dict()
    assert MemoryCard.from_dict(good) == MemoryCard(id="m_1", content="x")
    for change, message in (({"tags": "a"}, "list of strings"), ({"extra": 1}, "unknown card"),
                            ({"scope": "world"}, "unknown card scope"),
                            ({"content": ""}, "non-empty"),
                            ({"message_indexes": [-1]}, "non-negative")):
        with pytest.raises(Exception, match=message):
            MemoryCard.from_dict({**good, **change}, where="line 3")


def test_listing_and_counts(memory: Memory) -> None:
    memory.ingest(FIX / "multiday_en.json", user="ana")
    memory.ingest(FIX / "multiday_zh.json", user="bo")
    every = list(memory.cards())
    assert len(every) == memory.stats()["cards"]
    ana = list(memory.cards(Filters(user="ana")))
    assert ana and all(c.user_id == "ana" for c in ana)
    times = [c.event_time or "" for c in ana]
    assert times == sorted(times)
    page = list(memory.cards(Filters(user="ana"), limit=2, offset=1))
    assert [c.id for c in page] == [c.id for c in ana[1:3]]




def test_a_closed_store_says_so(new_store) -> None:  # type: ignore[no-untyped-def]
    memory = Memory(new_store("closed"), embedder="none")
    memory.add([MemoryCard(id="c1", content="The cutover is on Saturday.", session_id="s")])
    memory.close()
    for call in (lambda: memory.get("c1"), lambda: memory.search("cutover"),
                 lambda: memory.add([MemoryCard(id="c2", content="x", session_id="s")])):
        with pytest.raises(StoreError, match="closed"):
            call()
