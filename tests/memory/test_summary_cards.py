"""Session summary cards: one per ingested session, its digest (the handover's), updated in
place when the session grows; found for "what did we do in ..." questions in English and
Chinese, kept below the cards that hold a fact's evidence otherwise. Both stores (``new_store``:
a SQLite file and a real PostgreSQL)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _embedders import WordHashEmbedder
from tests.events._sessions import ClaudeLog, coding_session

from precis import ConfigError
from precis.memory import Filters, Memory
from precis.memory.query import understand

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "compact"
CODING_ZH = ROOT / "examples" / "coding_session.json"


@pytest.fixture
def memory(new_store) -> Memory:  # type: ignore[no-untyped-def]
    with Memory(new_store("m"), embedder="none") as mem:
        yield mem


def _prefix(log: ClaudeLog, lines: int) -> ClaudeLog:
    """The session as it was after its first ``lines`` log lines."""
    early = ClaudeLog(log.cwd)
    early.lines = log.lines[:lines]
    return early


def _summaries(memory: Memory, session: str) -> list[str]:
    return [c.id for c in memory.cards(Filters(session=session, types=("summary",)))]


def test_the_summary_names_the_request_in_force_what_was_done_and_what_is_next(
        memory: Memory, tmp_path: Path) -> None:
    path = coding_session().write(tmp_path / "session.jsonl")
    report = memory.ingest(path, user="ana")
    card = memory.get(report.summary_id or "")
    assert card.type == "summary" and card.session_id == "s-1" and card.user_id == "ana"
    assert report.summary_id in report.added_ids and report.cards == len(report.added_ids)
    text = card.content
    # the user's requests, the one in force named
    assert "Work on bead shop-abc" in text
    assert "also make the discount show on the receipt" in text and "In force" in text
    # what was done, with its exact values, and what is left
    assert "3f2a9c1" in text and "lib/shop/receipt.ex" in text
    assert "Document the discount field" in text and "Next" in text
    # a readable digest, not a transcript: a few lines, a few hundred tokens at most
    assert len(text.splitlines()) <= 10 and len(text) < 2000
    assert "[S" not in text  # no fragment citations in the text: they are its fields
    # it cites the messages its lines came from: the first request, the queued one ...
    sources = memory.sources(card)
    assert [m.index for m in sources] == list(card.message_indexes)
    said = [m.text for m in sources]
    assert said[0].startswith("Work on bead shop-abc")
    assert "also make the discount show on the receipt" in said
    # ... and only those, not every message between the first and the last
    assert len(sources) < max(card.message_indexes) - min(card.message_indexes) + 1
    assert card.fragment_ids and "3f2a9c1" in card.entities


def test_a_grown_session_updates_its_one_summary_card(new_store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    log = coding_session()
    with Memory(new_store("m"), embedder=WordHashEmbedder()) as memory:
        first = memory.ingest(_prefix(log, 20).write(tmp_path / "early.jsonl"))
        early = memory.get(first.summary_id or "")
        assert "3f2a9c1" in early.content and "receipt" not in early.content
        grown = memory.ingest(log.write(tmp_path / "later.jsonl"))
        assert grown.session_id == first.session_id == "s-1"
        assert grown.summary_id == first.summary_id
        assert grown.updated_ids == (first.summary_id,)
        assert first.summary_id not in grown.added_ids and grown.added  # its new statements
        assert _summaries(memory, "s-1") == [first.summary_id]
        card = memory.get(first.summary_id or "")
        assert "also make the discount show on the receipt" in card.content
        assert card.created_at == early.created_at and card.updated_at >= early.updated_at
        assert card.metadata["summary"]["messages"] > early.metadata["summary"]["messages"]
        history = memory.history(card.id)
        assert [v.action for v in history] == ["created", "updated"]
        assert history[0].card is not None and history[0].card.content == early.content
        # the new text has its vector (found by meaning), none is missing
        assert memory.store.missing_vectors(WordHashEmbedder().name, 10) == []
        hits = memory.search("discount receipt session", k=3, types=["summary"]).hits
        assert [h.card.id for h in hits] == [card.id] and "cosine" in hits[0].why
        # the same session again changes nothing
        again = memory.ingest(log.write(tmp_path / "again.jsonl"))
        assert again.added_ids == () and again.updated_ids == ()
        assert len(memory.history(card.id)) == 2


def test_an_edited_summary_stays_until_the_session_grows(memory: Memory, tmp_path: Path
                                                         ) -> None:
    log = coding_session()
    path = _prefix(log, 20).write(tmp_path / "early.jsonl")
    summary_id = memory.ingest(path).summary_id or ""
    memory.update(summary_id, content="Discount field for shop-abc.1, committed 3f2a9c1.")
    assert memory.ingest(path).updated_ids == ()  # the same session: the edit is kept
    assert memory.get(summary_id).content.startswith("Discount field for shop-abc.1")
    memory.ingest(log.write(tmp_path / "later.jsonl"))  # grown: its digest again
    assert "receipt" in memory.get(summary_id).content
    contents = [v.card.content for v in memory.history(summary_id) if v.card]
    assert "Discount field for shop-abc.1, committed 3f2a9c1." in contents


def test_what_did_we_do_questions_find_the_session_summary(memory: Memory, tmp_path: Path
                                                           ) -> None:
    memory.ingest(coding_session().write(tmp_path / "shop.jsonl"), user="ana")
    memory.ingest(CODING_ZH, session="export", user="ana")
    memory.ingest(FIX / "multiday_en.json", session="atlas", user="ana")
    zh = memory.get(next(iter(_summaries(memory, "export"))))
    assert zh.language == "zh" and "主要请求与意图" in zh.content and "导出接口" in zh.content
    for query, session in (("what did we do in the shop-abc session?", "s-1"),
                           ("where did we leave off with the receipt discount?", "s-1"),
                           ("导出接口那个会话做到哪了？", "export"),
                           ("订单导出的进展如何", "export")):
        top = memory.search(query, k=5, user="ana").hits[0]
        assert (top.card.type, top.card.session_id) == ("summary", session), query
        assert top.why["type"] > 1
    # what is pending is the digest's too
    top = memory.search("what is pending on the discount?", k=3, user="ana").hits[0]
    assert top.card.type == "summary" and "Document the discount field" in top.card.content
    # a question about one fact gets the cards that say it, not the session's digest (at
    # full weight it came second for both)
    for query, said in (("which commit added the discount field?", "git commit"),
                        ("what is in the receipt module?", "receipt")):
        hits = memory.search(query, k=3, user="ana").hits
        assert "summary" not in [h.card.type for h in hits], query
        assert said in hits[0].card.content.lower(), query
    digest = [h for h in memory.search("discount receipt", k=30, user="ana").hits
              if h.card.type == "summary"]
    assert digest and all(h.why["unasked"] < 1 for h in digest)


def test_no_summary_when_turned_off_for_short_sessions_and_for_small_talk(
        memory: Memory, tmp_path: Path) -> None:
    path = coding_session().write(tmp_path / "shop.jsonl")
    report = memory.ingest(path, summary=False)
    assert report.summary_id is None and _summaries(memory, "s-1") == []
    # a short exchange: its cards say all there is, even when a summary is asked for
    short = ClaudeLog()
    short.user("Rename the receipt module to invoice.").say("Done: lib/shop/invoice.ex.")
    assert memory.ingest(short.write(tmp_path / "short.jsonl"), session="short",
                         summary=True).summary_id is None
    # small talk gets one only when asked for: its cards are its memories
    assert memory.ingest(FIX / "chat_en.json", session="talk").summary_id is None
    asked = memory.ingest(FIX / "chat_en.json", session="talk", summary=True)
    assert asked.summary_id is not None and _summaries(memory, "talk") == [asked.summary_id]
    assert memory.get(asked.summary_id).metadata["summary"]["template"] == "log"
    # metadata of the caller's is stored with the summary too, not over what it was made from
    tagged = memory.ingest(coding_session().write(tmp_path / "tagged.jsonl"), session="tagged",
                           metadata={"summary": "mine", "app": "shop"})
    card = memory.get(tagged.summary_id or "")
    assert card.metadata["app"] == "shop" and card.metadata["summary"]["messages"] > 0
    assert memory.ingest(tmp_path / "tagged.jsonl", session="tagged",
                         metadata={"summary": "mine"}).updated_ids == ()
    with pytest.raises(ConfigError, match="summary"):
        memory.ingest(path, summary="yes")  # type: ignore[arg-type]


def test_the_session_summary_is_deterministic(tmp_path: Path, new_store) -> None:  # type: ignore[no-untyped-def]
    path = coding_session().write(tmp_path / "shop.jsonl")
    cards = []
    for name in ("a", "b"):
        with Memory(new_store(name), embedder="none") as memory:
            cards.append(memory.get(memory.ingest(path).summary_id or ""))
    assert cards[0].id == cards[1].id and cards[0].content == cards[1].content
    assert cards[0].message_ids == cards[1].message_ids


def test_queries_about_a_session_ask_for_its_summary() -> None:
    for query in ("which session fixed the 502s?", "what did we do in the billing session?",
                  "what is the progress on the export?",
                  "where did we leave off?", "上次那个会话做到哪了", "订单导出的进展",
                  "what is pending?", "下一步做什么"):
        assert "summary" in understand(query).intents, query
    # "session" said of the work itself, "上次" in a chat and a person's progress (LoCoMo)
    # ask for no summary
    for query in ("why does the session timeout expire early?", "上次我和家人一起吃早餐了吗",
                  "What did Jon say about Gina's progress with her store?",
                  "What prompted her to reflect on her progress as a writer?"):
        assert "summary" not in understand(query).intents, query
    plan = understand("上次那个会话做到哪了")
    assert plan.wants_recent and "summary" in plan.expansions
    # the words that ask about a session name none: the rest are searched
    assert understand("git 那个会话做到哪了").words == ("git",)
    assert understand("导出接口那个会话做到哪了？").words == ("导出", "接口")
    assert understand("what did we do in the billing session?").words == ("billing",)


def test_a_real_claude_code_session_gets_its_summary(shared_data: Path, tmp_path: Path) -> None:
    transcript = shared_data / "transcripts" / "claude-code" / \
        "python-to-rust-port.transcript.jsonl"
    with Memory(tmp_path / "m.sqlite3", embedder="none") as memory:
        report = memory.ingest(transcript)
        card = memory.get(report.summary_id or "")
        assert "Port this Python project to Rust" in card.content
        assert "Committed 7e2d976" in card.content and "Justfile" in card.content
        hits = memory.search("what did we do in the rust port session?", k=3).hits
        assert hits[0].card.id == card.id
        # its sources are the user's request and the messages its lines came from
        assert memory.sources(card)[0].text.startswith("Port this Python project to Rust")


def test_a_question_about_a_session_gets_its_summary_first(memory: Memory, tmp_path: Path
                                                           ) -> None:
    memory.ingest(coding_session().write(tmp_path / "shop.jsonl"), user="ana")
    memory.ingest(CODING_ZH, session="export", user="ana")
    summaries = {c.session_id: c for c in memory.cards(Filters(types=("summary",)))}
    assert set(summaries) == {"s-1", "export"}
    # the question's own words ("做到哪了", "next step", "where did we leave off") name no
    # session; the rest do, and the summary that holds them comes first, ahead of shorter
    # cards that say those words more often; naming none, it asks for the latest session
    # (by score alone, "where did we leave off?" got the other one)
    latest = max(summaries.values(), key=lambda c: c.event_time or c.created_at)
    asked = {"导出接口那个会话做到哪了？": summaries["export"].id,
             "what is the next step on the discount?": summaries["s-1"].id,
             "which session added the receipt discount?": summaries["s-1"].id,
             "where did we leave off?": latest.id, "上次做到哪了": latest.id}
    tops = {q: memory.search(q, k=3, user="ana").hits[0] for q in asked}
    assert {q: h.card.id for q, h in tops.items()} == asked
    assert all(h.why["session"] == 1.0 for h in tops.values())
    # a type filter that leaves summaries out is obeyed
    hits = memory.search("导出接口那个会话做到哪了？", k=3, types=["decision", "fact"]).hits
    assert hits and {h.card.type for h in hits} <= {"decision", "fact"}
    # a summary's entities are the exact values of its lines, no label words taken for names
    for card in summaries.values():
        assert not {"User", "In", "Next", "Then"} & set(card.entities), card.entities
        assert all("\n" not in e for e in card.entities)
