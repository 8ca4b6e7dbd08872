"""Query understanding in Chinese as in English: people, intents, versions, time, and what a
query of several lines asks."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from precis import Conversation, Message
from precis.memory import Memory
from precis.memory.query import understand

TODAY = date(2024, 3, 20)  # a Wednesday


@pytest.mark.parametrize(("query", "names"), [
    ("张伟上周说了什么", ("张伟",)),
    ("小王负责回滚方案吗", ("小王",)),
    ("Bart在生日派对上收到了什么", ("Bart",)),  # a Latin name right before Chinese
    ("What did Caroline say about the move?", ("Caroline",)),
])
def test_people_named_in_either_language(query: str, names: tuple[str, ...]) -> None:
    assert understand(query, today=TODAY).names == names


@pytest.mark.parametrize(("query", "intent"), [
    ("Redis缓存怎么配置", "config"),
    ("how do I configure the Redis cache", "config"),
    ("这个bug怎么修的", "error-fix"),  # an English cue word right after Chinese
    ("我们当时为什么选了Postgres", "decision"),
    ("上线是哪一天", "event"),
])
def test_intent_words_in_either_language(query: str, intent: str) -> None:
    assert intent in understand(query, today=TODAY).intents


@pytest.mark.parametrize("query", ["v2接口用的哪个版本", "which version of the API do we run"])
def test_a_version_question_looks_for_versions(query: str) -> None:
    plan = understand(query, today=TODAY)
    assert plan.wants_version and {"version", "版本"} & (set(plan.expansions) | set(plan.words))


def test_why_adds_the_words_of_a_cause_in_chinese_too() -> None:
    assert "因为" in understand("为什么导出接口超时", today=TODAY).expansions


def test_a_statement_asks_for_no_card_type() -> None:
    assert understand("我喜欢苹果汁！", today=TODAY).intents == ()
    assert understand("你喜欢什么果汁？", today=TODAY).intents == ("preference",)
    assert understand("I like jazz.", today=TODAY).intents == ()
    assert understand("what music do I like", today=TODAY).intents == ("preference",)


def test_a_query_of_several_lines_asks_with_its_last_line() -> None:
    query = "我们上周讨论了缓存。\n后来决定用Redis。\nRedis缓存怎么配置？"
    plan = understand(query, today=TODAY)
    assert plan.intents == ("config",)  # not "decision" from the line before
    assert plan.time is None  # 上周 is in an earlier line, not in the question
    assert plan.end == "后来决定用Redis。\nRedis缓存怎么配置？"
    assert "配置" in plan.end_words and "讨论" not in plan.end_words
    assert understand("Redis缓存怎么配置？", today=TODAY).end is None


def test_chinese_time_words_filter_like_english_ones(tmp_path: Path) -> None:
    said = [("支付服务的超时改成了30秒。", "2024-03-12"),
            ("支付服务的重试次数改成了5次。", "2024-02-01"),
            ("The payment service timeout is now 30 seconds.", "2024-03-12"),
            ("The payment service retries are now 5.", "2024-02-01")]
    conv = Conversation([Message.of("user", text, timestamp=f"{day}T10:00:00")
                         for text, day in said], id="s")
    with Memory(tmp_path / "m.sqlite3", embedder="none") as memory:
        memory.ingest(conv)
        for query, found in (("上周支付服务改了什么", said[0][0]),
                             ("what changed in the payment service last week", said[2][0])):
            result = memory.search(query, today=TODAY)
            assert result.filters.since == "2024-03-11" and result.filters.until == "2024-03-17"
            assert result.hits[0].card.content == found  # (the other is a neighbour)
            assert said[1][0] not in [h.card.content for h in result.hits]


@pytest.mark.parametrize(("query", "since", "until"), [
    ("去年圣诞节我们去了哪里", "2023-12-24", "2023-12-25"),
    ("where did we go last Christmas", "2023-12-24", "2023-12-25"),
    ("三月初部署了什么", "2024-03-01", "2024-03-10"),
    ("what did we deploy in early March", "2024-03-01", "2024-03-10"),
])
def test_holidays_and_parts_of_months_filter(tmp_path: Path, query: str, since: str,
                                            until: str) -> None:
    said = [("圣诞节我们去了哈尔滨看冰雕。", "2023-12-25"),
            ("At Christmas we went to Harbin to see the ice sculptures.", "2023-12-25"),
            ("暑假我们去了青岛。", "2023-07-20"), ("In summer we went to Qingdao.", "2023-07-20"),
            ("三月初部署了支付服务的新版本。", "2024-03-05"),
            ("In early March we deployed the new payments release.", "2024-03-05")]
    conv = Conversation([Message.of("user", text, timestamp=f"{day}T10:00:00")
                         for text, day in said], id="s")
    with Memory(tmp_path / "m.sqlite3", embedder="none") as memory:
        memory.ingest(conv)
        result = memory.search(query, today=TODAY)
        assert (result.filters.since, result.filters.until) == (since, until)
        assert result.hits and all(since <= (h.card.event_time or "")[:10] <= until
                                   for h in result.hits)
