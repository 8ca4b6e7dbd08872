"""The memory benchmarks' helpers: LoCoMo turns and evidence, recall@k, synthetic cards."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from precis.model import Conversation, Message

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from _locomo_retrieval import (
    distinct,
    evidence_ids,
    evidence_questions,
    locomo_conversations,
    percentile,
    recall_at,
    turns,
)
from _synthetic_cards import TYPES, USERS, card, cards, queries

BENCH = Path(__file__).resolve().parents[2] / "bench"

# ---------------------------------------------------------------------- evidence


def test_evidence_ids_clean_ids_pass_unchanged() -> None:
    assert evidence_ids(["D1:3", "D10:19"]) == ["D1:3", "D10:19"]


def test_evidence_ids_split_repair_and_drop() -> None:
    # several ids in one string, a stray colon, leading zeros, a bare "D", a duplicate
    raw = ["D8:6; D9:17", "D:11:26", "D01:05", "D", "D8:6", 12, None]
    assert evidence_ids(raw) == ["D8:6", "D9:17", "D11:26", "D1:5"]
    assert evidence_ids(["D1:2,D1:3 D1:4"]) == ["D1:2", "D1:3", "D1:4"]
    assert evidence_ids([]) == []


def _sample(qa: list[dict[str, object]]) -> Conversation:
    messages = [Message.of("user", f"turn {n}", name="Ann", id=f"D1:{n}") for n in (1, 2, 3)]
    return Conversation(messages=messages, id="conv-x", metadata={"locomo": {"qa": qa}})


def test_evidence_questions_normalise_filter_and_exclude() -> None:
    conv = _sample([
        {"question": "a", "answer": "x", "evidence": ["D1:1"], "category": 4},
        {"question": "b", "answer": "x", "evidence": ["D1:2; D1:3"], "category": 1},
        {"question": "c", "adversarial_answer": "x", "evidence": ["D1:1"], "category": 5},
        {"question": "d", "answer": "x", "evidence": ["D", "D1:9"], "category": 2},
        {"question": "e", "answer": "x", "evidence": [], "category": 3},
        {"question": "f", "answer": "x", "evidence": ["D:1:3", "D7:1"], "category": 2},
        "not a question",
    ])
    questions, stats = evidence_questions(conv)
    assert [(q.index, q.category, q.evidence) for q in questions] == [
        (0, 4, ("D1:1",)), (1, 1, ("D1:2", "D1:3")), (5, 2, ("D1:3",))]
    assert stats.questions == 5  # categories 1-4 only
    assert stats.strings == 6  # a, b, 2 of d, none of e, 2 of f
    assert stats.repaired == ["conv-x q#1 'D1:2; D1:3' -> D1:2, D1:3",
                              "conv-x q#5 'D:1:3' -> D1:3"]
    assert stats.unreadable == ["conv-x q#3 'D'"]
    assert stats.unknown == ["conv-x q#3 D1:9", "conv-x q#5 D7:1"]
    assert stats.excluded == ["conv-x q#3", "conv-x q#4"]


def test_evidence_questions_without_qa() -> None:
    questions, stats = evidence_questions(Conversation(messages=[Message.of("user", "hi")]))
    assert questions == [] and stats.questions == 0


# ------------------------------------------------------------------------ scoring


def test_distinct_keeps_first_k_distinct_in_order() -> None:
    assert distinct(["a", "b", "a", "c", "b", "d"], 3) == ["a", "b", "c"]
    assert distinct(["a", "a"], 5) == ["a"]
    assert distinct([], 5) == []


def test_recall_at_counts_distinct_ids_only() -> None:
    returned = ["D1:1", "D1:2", "D1:1", "D1:3", "D2:5"]
    gold = ["D1:3", "D2:5"]
    assert recall_at(returned, gold, 2) == 0.0  # D1:1, D1:2
    assert recall_at(returned, gold, 3) == 0.5  # the repeated D1:1 takes no slot
    assert recall_at(returned, gold, 4) == 1.0
    assert recall_at(returned, ["D1:2", "D9:9", "D9:8"], 25) == pytest.approx(1 / 3)
    assert recall_at(returned, [], 10) == 0.0
    assert recall_at([], gold, 10) == 0.0


def test_percentile() -> None:
    assert percentile([4.0, 1.0, 3.0, 2.0], 50) == 2.5
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 95) == pytest.approx(4.8)  # 4 + 0.8 * 1
    assert percentile([7.0], 95) == 7.0
    assert percentile([], 50) == 0.0


# --------------------------------------------------------------------------- turns


def test_turns_of_a_locomo_file_speaker_text_and_caption(tmp_path: Path) -> None:
    sample = {
        "sample_id": "conv-t",
        "conversation": {
            "speaker_a": "Caroline", "speaker_b": "Melanie",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Caroline", "dia_id": "D1:1", "text": "Hey Mel!"},
                {"speaker": "Melanie", "dia_id": "D1:2", "text": "Look at this.",
                 "img_url": ["https://example.com/a.jpg"],
                 "blip_caption": "a photo of a dog on a beach"},
            ],
        },
        "qa": [{"question": "What did Melanie share?", "answer": "a dog photo",
                "evidence": ["D1:2"], "category": 4}],
    }
    (tmp_path / "locomo").mkdir()
    (tmp_path / "locomo" / "locomo_dev.json").write_text(json.dumps([sample]))
    [conv] = locomo_conversations(tmp_path)
    got = turns(conv)
    assert [(t.dia_id, t.text, t.session, t.date) for t in got] == [
        ("D1:1", "Caroline: Hey Mel!", 1, "8 May 2023"),
        ("D1:2", "Melanie: Look at this.\n[image: a photo of a dog on a beach]", 1,
         "8 May 2023"),
    ]
    questions, _ = evidence_questions(conv)
    assert [q.evidence for q in questions] == [("D1:2",)]


def test_real_locomo_evidence(shared_data: Path) -> None:
    """The dev file's evidence quirks, counted by hand from the raw JSON."""
    scored, excluded, repaired, unreadable, unknown = 0, [], [], [], []
    for conv in locomo_conversations(shared_data):
        questions, stats = evidence_questions(conv)
        scored += len(questions)
        excluded += stats.excluded
        repaired += stats.repaired
        unreadable += stats.unreadable
        unknown += stats.unknown
    assert scored == 760  # 762 questions of categories 1-4, 2 with an empty evidence list
    assert excluded == ["conv-26 q#30", "conv-26 q#46"]
    assert repaired == ["conv-26 q#37 'D8:6; D9:17' -> D8:6, D9:17",
                        "conv-43 q#18 'D:11:26' -> D11:26"]
    assert unreadable == ["conv-42 q#88 'D'"]
    assert unknown == ["conv-42 q#58 D10:19"]  # session 10 of conv-42 has 16 turns


# ----------------------------------------------------------------- synthetic cards


def test_cards_are_deterministic_per_seed_and_index() -> None:
    first = list(cards(50, seed=3))
    assert first == list(cards(50, seed=3))
    assert first[17] == card(17, seed=3)  # random access gives the same card
    assert [c.id for c in first[:2]] == ["card-0000000", "card-0000001"]
    assert [c.text for c in cards(50, seed=4)] != [c.text for c in first]


def test_cards_do_not_depend_on_hash_seed() -> None:
    code = (f"import sys; sys.path.insert(0, {str(BENCH)!r}); "
            "from _synthetic_cards import cards, queries; "
            "print([c.text for c in cards(30, 5)], queries(30, 10, 5))")
    outputs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       check=True, env={"PYTHONHASHSEED": seed}).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1


def test_cards_mix_languages_kinds_and_metadata() -> None:
    sample = list(cards(3000, seed=0))
    zh = sum(c.lang == "zh" for c in sample) / len(sample)
    assert 0.25 < zh < 0.35
    assert all(any("\u4e00" <= ch <= "\u9fff" for ch in c.text) == (c.lang == "zh")
               for c in sample)
    assert {c.type for c in sample} == set(TYPES)
    users = {c.user for c in sample}
    assert len(users) == USERS and all(u.startswith("user-") for u in users)
    assert all(c.session.startswith(c.user + "/s") for c in sample)
    days = [date.fromisoformat(c.date) for c in sample]
    assert min(days) >= date(2024, 1, 1) and max(days) <= date(2025, 12, 31)
    assert max(days) - min(days) > (date(2025, 12, 1) - date(2024, 2, 1))
    assert len({c.text for c in sample}) == len(sample)  # no two cards alike
    assert sample[0].metadata() == {"user": sample[0].user, "session": sample[0].session,
                                    "type": sample[0].type, "date": sample[0].date,
                                    "lang": sample[0].lang}


def test_card_text_carries_identifiers() -> None:
    sample = list(cards(400, seed=1))
    by_type = {t: [c.text for c in sample if c.type == t] for t in TYPES}
    assert any("SELECT" in text and "FROM" in text for text in by_type["sql"])
    assert all("/" in text for text in by_type["config"])  # a config path
    assert any(text.split(":")[0].split("-")[-1].isdigit() for text in by_type["ticket"])


def test_queries_aim_at_cards_and_filters_match_their_target() -> None:
    asked = queries(5000, 200, seed=2)
    assert asked == queries(5000, 200, seed=2)
    assert len({q.target for q in asked}) == 200
    filtered = [q for q in asked if q.filters]
    assert 0.15 < len(filtered) / len(asked) < 0.45
    for q in asked:
        target = card(int(q.target.split("-")[1]), seed=2)
        assert q.text == target.query
        if "user" in q.filters:
            assert q.filters == {"user": target.user}
        elif "type" in q.filters:
            assert q.filters == {"type": target.type}
        elif q.filters:
            assert q.filters["date_from"] <= target.date <= q.filters["date_to"]
            window = (date.fromisoformat(q.filters["date_to"])
                      - date.fromisoformat(q.filters["date_from"]))
            assert window.days == 60
    assert {next(iter(q.filters)) for q in filtered} == {"user", "type", "date_from"}


def test_queries_on_a_tiny_corpus() -> None:
    asked = queries(3, 10, seed=0)
    assert len(asked) == 10 and {q.target for q in asked} <= {
        "card-0000000", "card-0000001", "card-0000002"}
    assert queries(0, 10) == []
