"""The Memory API refuses arguments of the wrong type with a typed error naming the argument,
and cleans lone surrogates out of text it is given (issue 18, item 2): never an
AttributeError, TypeError, sqlite3 or UnicodeEncodeError from deep down."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from precis import Conversation, Message, NotFoundError, PrecisError, QueryError, load
from precis.memory import Filters, Memory

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "coding_session.json"


@pytest.fixture
def memory(new_store) -> Memory:  # type: ignore[no-untyped-def]
    m = Memory(new_store(), embedder="none")
    m.ingest(EXAMPLE)
    return m


WRONG: list[tuple[str, Callable[[Memory], Any], str]] = [
    ("since=123", lambda m: m.search("timeout", since=123), "since"),
    ("until=date", lambda m: m.search("timeout", until=[2024]), "until"),
    ("agent=list", lambda m: m.search("timeout", agent=["a"]), "agent"),
    ("user=int", lambda m: m.search("timeout", user=5), "user"),
    ("session=bytes", lambda m: m.search("timeout", session=b"s"), "session"),
    ("speaker=dict", lambda m: m.search("timeout", speaker={}), "speaker"),
    ("types=int", lambda m: m.search("timeout", types=5), "types"),
    ("types=[int]", lambda m: m.search("timeout", types=[1]), "types"),
    ("current_only=str", lambda m: m.search("timeout", current_only="yes"), "current_only"),
    ("today=str", lambda m: m.search("timeout last week", today="2024-05-01"), "today"),
    ("cards(Filters(agent=list))", lambda m: list(m.cards(Filters(agent=["a"]))), "agent"),
    ("cards(Filters(since=int))", lambda m: list(m.cards(Filters(since=5))), "since"),
    ("cards(str)", lambda m: list(m.cards("ana")), "filters"),  # type: ignore[arg-type]
    ("cards(limit=str)", lambda m: list(m.cards(limit="3")), "limit"),  # type: ignore[arg-type]
    ("cards(offset=-1)", lambda m: list(m.cards(offset=-1)), "offset"),
    ("export(dict)", lambda m: list(m.export({"user": "a"})), "filters"),  # type: ignore[arg-type]
    ("get(int)", lambda m: m.get(5), "card_id"),  # type: ignore[arg-type]
    ("history(None)", lambda m: m.history(None), "card_id"),  # type: ignore[arg-type]
    ("delete(list)", lambda m: m.delete(["x"]), "card_id"),  # type: ignore[arg-type]
    ("ingest(session=int)", lambda m: m.ingest(EXAMPLE, session=5), "session"),
    ("ingest(user=list)", lambda m: m.ingest(EXAMPLE, user=["ana"]), "user"),
    ("ingest(progress=str)", lambda m: m.ingest(EXAMPLE, progress="bar"), "progress"),
]


@pytest.mark.parametrize(("label", "call", "argument"), WRONG, ids=[w[0] for w in WRONG])
def test_a_wrong_argument_type_is_a_typed_error_naming_it(
    memory: Memory, label: str, call: Callable[[Memory], Any], argument: str
) -> None:
    with pytest.raises(PrecisError) as info:
        call(memory)
    assert info.value.where == argument, str(info.value)


def test_one_type_name_is_taken_as_a_type_not_as_letters(memory: Memory) -> None:
    assert Filters(types="fact").types == ("fact",)
    with pytest.raises(QueryError, match="'fcat'"):
        memory.search("timeout", types="fcat")


def test_lone_surrogates_in_ids_are_no_crash(memory: Memory) -> None:
    for call in (memory.get, memory.history, memory.delete):
        with pytest.raises(NotFoundError):
            call("\ud800")
    assert memory.search("timeout", user="\ud800").hits == []


def test_a_query_with_a_lone_surrogate_is_searched(memory: Memory) -> None:
    """The fault campaign's find: a Chinese query with a lone surrogate (a model cut an
    emoji in half) raised UnicodeEncodeError from the store; it is searched as if the
    surrogate were a replacement character."""
    for query in ("导出\ud800超时", "export\udc00 timeout", "\ud83d导出接口"):
        result = memory.search(query)
        assert "\ud800" not in result.query and "\udc00" not in result.query
    assert memory.search("导出接口\ud800超时").hits  # the words around it still count


def test_python_data_with_a_lone_surrogate_is_stored_cleaned(memory: Memory) -> None:
    text = "the deploy key \ud800 rotates every 30 days and lives in vault/prod/deploy"
    conv = Conversation([Message.of("user", text)], id="s-surrogate")
    report = memory.ingest(conv, user="ana\udc00")
    assert report.added >= 1
    card = next(memory.cards(Filters(session="s-surrogate")))
    assert "\ud800" not in card.content and "\ufffd" in card.content
    assert card.user_id == "ana\ufffd"
    # and from OpenAI dicts through precis.load
    memory.ingest(load([{"role": "user", "content": "the backup bucket \udfff is s3://b/nightly"}]))
    # an update with a lone surrogate is stored cleaned too
    updated = memory.update(card.id, content="rotates every 60 days \ud800 now")
    assert updated.content == "rotates every 60 days \ufffd now"
    assert memory.get(card.id).content == updated.content
