"""Chinese and mixed-script memory: one tokenizer for the index and the query, and no
substantive Chinese statement left without a card."""

from __future__ import annotations

from pathlib import Path

import pytest

from precis import Conversation, Message
from precis.memory import Memory, extract_cards
from precis.memory.keywords import Terms, tokenize
from precis.memory.text import query_words, words


@pytest.mark.parametrize(("text", "terms"), [
    ("Postgres替换MySQL", ["postgr", "替换", "mysql"]),
    ("user_id字段", ["user", "id", "字", "段", "字段"]),
    ("v2版本", ["v2", "版本"]),
    ("Redis缓存", ["redi", "缓存"]),
    ("ＭｙＳＱＬ８版本", ["mysql8", "版本"]),  # full-width folded
    ("the payments were timing out", ["the", "payment", "were", "time", "out"]),
])
def test_tokenize_cuts_mixed_scripts_apart(text: str, terms: list[str]) -> None:
    assert tokenize(text) == terms


def test_query_words_and_card_terms_agree_on_mixed_scripts() -> None:
    # the query side once kept "postgres替换mysql" as one word, which no card holds
    assert query_words("Postgres替换MySQL") == ["postgres", "替换", "mysql"]
    card_terms = Terms().cards([("我们决定用Postgres替换MySQL", "")])[0].freqs
    assert set(Terms().query(query_words("Postgres替换MySQL"))) <= set(card_terms)
    # jieba cuts 字段 by its context: one word inside a sentence, two characters alone
    assert "字段" in words("字段") and "字段" in words("注意user_id字段的类型")


_DEV = [
    ("user", "我们决定用Postgres替换MySQL，主要是因为需要JSONB和更好的并发。"),
    ("assistant", "好的，迁移时要注意user_id字段的类型从INT改成BIGINT。"),
    ("user", "v2版本的接口要加上Redis缓存，过期时间设为300秒。"),
    ("assistant", "Redis缓存的配置写在config/cache.yaml里，key前缀是precis:v2。"),
    ("user", "导出接口超时了，原因是全表扫描，加了索引以后好了。"),
]


@pytest.mark.parametrize(("query", "expected"), [
    ("Postgres替换MySQL", "Postgres替换MySQL"),
    ("user_id字段", "user_id字段"),
    ("v2版本", "v2版本的接口"),
    ("Redis缓存配置", "config/cache.yaml"),
])
def test_mixed_script_queries_find_their_card(tmp_path: Path, query: str, expected: str) -> None:
    conv = Conversation([Message.of(role, text) for role, text in _DEV], id="dev")
    with Memory(tmp_path / "m.sqlite3", embedder="none") as memory:
        memory.ingest(conv)
        hits = memory.search(query, k=3).hits
        assert hits and expected in hits[0].card.content


_EVENTS = [
    "Bart从祖父那里收到了一块镀金的怀表，Bart很惊喜。",
    "Bart在动物园看到可爱的小熊猫感到非常开心。",
    "Bart在生日派对上收到花束并感到非常开心。",
    "Bart从父母那里得到了一套多彩各种形状的乐高积木。",
    "Bart在市集购买了一个红色鹰形的风筝。",
    "小明在图书馆发现了一本漫画书。",
]


@pytest.mark.parametrize("text", _EVENTS)
def test_a_short_chinese_event_statement_makes_a_card(text: str) -> None:
    cards = extract_cards(Conversation([Message.of("user", text)])).cards
    assert [c.content for c in cards] == [text]


def test_event_statements_are_typed_as_events() -> None:
    conv = Conversation([Message.of("user", t) for t in _EVENTS[:3]])
    assert [c.type for c in extract_cards(conv).cards] == ["event"] * 3
    # a statement the analysis has a cue for keeps its type
    decided = extract_cards(Conversation([Message.of("user", "我们决定下周上线支付服务。")]))
    assert [c.type for c in decided.cards] == ["decision"]


def test_a_near_copy_that_differs_in_a_detail_is_its_own_memory() -> None:
    first = "我们决定周五把支付服务部署到生产环境，回滚方案由小王负责。"
    second = "我们决定周五把订单服务部署到生产环境，回滚方案由小王负责。"
    conv = Conversation([Message.of("user", first), Message.of("assistant", "好的"),
                         Message.of("user", second)])
    assert [c.content for c in extract_cards(conv).cards] == [first, second]
    # a copy that adds nothing is still left out
    same = Conversation([Message.of("user", second), Message.of("assistant", "好的"),
                         Message.of("user", second)])
    extraction = extract_cards(same)
    assert len(extraction.cards) == 1 and extraction.skipped["said again later"] == 1
