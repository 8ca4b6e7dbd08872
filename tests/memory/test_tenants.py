"""Tenants and API keys in the store: a store from before tenants keeps every row, two
tenants of one store never see each other's rows, keys are kept as digests only. Tests of
a store run on both stores (``new_store``: a SQLite file and a real PostgreSQL)."""

from __future__ import annotations

import gzip
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from _embedders import WordHashEmbedder

from precis import ConfigError, NotFoundError
from precis.cli import main
from precis.keys import authenticate, create_key, key_digest
from precis.memory import Filters, Memory
from precis.memory.store import open_store
from precis.runtime import ContextMemory

OLD_STORE = Path(__file__).resolve().parents[1] / "fixtures" / "memory" / "store_0003.sqlite3.gz"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TENANT_TABLES = ("sessions", "messages", "cards", "vectors", "card_terms", "history",
                 "embed_cache", "offloads", "runtime_state")


def _old_store(tmp_path: Path) -> Path:
    path = tmp_path / "old.sqlite3"
    with gzip.open(OLD_STORE) as src, path.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return path


def _rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    db = sqlite3.connect(path)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def test_a_store_written_before_tenants_keeps_every_row(tmp_path: Path) -> None:
    path = _old_store(tmp_path)
    assert [r[0] for r in _rows(path, "SELECT name FROM migrations ORDER BY name")] == [
        "0001_initial", "0002_runtime", "0003_keyword_terms"]
    before = {table: _rows(path, f"SELECT * FROM {table} ORDER BY 1, 2")
              for table in TENANT_TABLES}
    cards_before = {r[0]: r[1] for r in _rows(path, "SELECT id, content FROM cards")}
    assert len(cards_before) == 19 and len(before["vectors"]) == 19

    with Memory(path, embedder="none") as memory:
        store = memory.store
        assert store.tenant == "default"
        # every card, as it was
        got = store.get_many(sorted(cards_before))
        assert {c.id: c.content for c in got} == cards_before
        assert store.count() == 19 and memory.stats()["vectors"] == {"minilm-l6-v2": 19}
        # the history of the edited and of the deleted card
        edited = store.history("m_cb848149d3cc0df791bc")
        assert [v.action for v in edited] == ["created", "updated"]
        assert edited[1].card is not None and edited[1].card.content.endswith(" (edited)")
        assert edited[0].card is not None and not edited[0].card.content.endswith("(edited)")
        assert [v.action for v in store.history("m_a75add3a29c66a2fb4a6")] == [
            "created", "deleted"]
        assert store.get("m_cb848149d3cc0df791bc").superseded_by == "m_1bc47c9283f57e6f116f"
        # sources and sessions
        assert len(store.messages("s_93e754ab4c8bef63", 0, 100)) + len(
            store.messages("s_aa88c1900559dd1d", 0, 100)) == 23
        assert [s.id for s in store.sessions()] == ["s_93e754ab4c8bef63", "s_aa88c1900559dd1d"]
        # the same keyword ranking as precis at 11e5fbc gave on this file
        assert [h.card.id for h in memory.search("export timeout", k=3).hits] == [
            "m_fd801b3e50d5136d2c8d", "m_af30916b33c8e93db0bf", "m_e88d5e5db89f8691da62"]
        assert memory.search("导出接口超时的原因", k=1).hits[0].card.id == "m_cb848149d3cc0df791bc"
        # the stored vectors still answer: a card's own vector finds it first
        vec = np.frombuffer(before["vectors"][0][2], dtype=np.float32)
        rowid = before["vectors"][0][1]
        own = _rows(path, f"SELECT id FROM cards WHERE rowid = {rowid}")[0][0]
        assert store.vector_search(vec, "minilm-l6-v2", Filters(), 1)[0][0] == own
        # the agent runtime's saved state and offloads
        context = ContextMemory.load(store, "s1")
        assert len(context.original()) == 60
        assert set(context.offloaded()) == {"ctx-913fb7da3679", "ctx-9b29474f0d74"}
        assert context.reload("ctx-913fb7da3679")
        # another tenant of the same file sees none of it
        other = store.for_tenant("acme")
        assert other.count() == 0 and other.sessions() == [] and other.state_ids() == []
        assert other.keyword_search(["export", "timeout"], Filters(), 10) == []
        assert other.vector_search(vec, "minilm-l6-v2", Filters(), 10) == []
        assert other.get_offload("ctx-913fb7da3679") is None
        with pytest.raises(NotFoundError):
            other.get("m_cb848149d3cc0df791bc")

    after = {table: _rows(path, f"SELECT * FROM {table} ORDER BY 1, 2")
             for table in TENANT_TABLES}
    for table in TENANT_TABLES:
        assert len(after[table]) >= len(before[table]), table
        tenants = _rows(path, f"SELECT DISTINCT tenant FROM {table}")
        assert tenants in ([("default",)], []), table
    assert "0004_tenants" in {r[0] for r in _rows(path, "SELECT name FROM migrations")}


def _two_tenants(path: str) -> tuple[Memory, Memory]:
    a = Memory(path, tenant="a", embedder=WordHashEmbedder())
    b = Memory(store=a.store.for_tenant("b"), embedder=WordHashEmbedder())
    for memory in (a, b):
        memory.ingest(EXAMPLES / "coding_session.json", user="ana")
    a.ingest(EXAMPLES / "transcript_zh.txt", user="bo")
    return a, b


def test_the_same_conversation_in_two_tenants_is_two_sets_of_cards(new_store) -> None:  # type: ignore[no-untyped-def]
    a, b = _two_tenants(new_store("shared"))
    a_ids = {c.id for c in a.cards()}
    b_ids = {c.id for c in b.cards()}
    assert b_ids and b_ids < a_ids  # the same ids (same conversation), stored once each
    assert a.store.count() == len(a_ids) and b.store.count() == len(b_ids)
    # changes in one tenant leave the other's card alone
    card_id = sorted(b_ids)[0]
    original = b.get(card_id).content
    a.update(card_id, content="changed by a")
    assert b.get(card_id).content == original
    assert [v.action for v in b.history(card_id)] == ["created"]
    a.delete(card_id)
    assert b.get(card_id).content == original
    with pytest.raises(NotFoundError):
        a.get(card_id)
    # a's card ids that b does not hold are not found in b, whatever the method
    only_a = sorted(a_ids - b_ids)[0]
    for call in (lambda: b.get(only_a), lambda: b.history(only_a),
                 lambda: b.update(only_a, content="x"), lambda: b.delete(only_a)):
        with pytest.raises(NotFoundError):
            call()
    assert b.store.get_many([only_a]) == []
    assert a.get(only_a).content != "x"


def test_searches_and_filters_stay_inside_the_tenant(new_store) -> None:  # type: ignore[no-untyped-def]
    a, b = _two_tenants(new_store("shared"))
    b_ids = {c.id for c in b.cards()}
    for query in ("导出接口超时的原因", "export timeout", "bo"):
        for memory, ids in ((b, b_ids),):
            hits = memory.search(query, k=50).hits
            assert {h.card.id for h in hits} <= ids, query
    assert b.search("导出接口超时的原因", user="bo").hits == []
    assert list(b.cards(Filters(user="bo"))) == []
    assert a.search("导出接口超时的原因", user="bo").hits
    vector = WordHashEmbedder().embed(["export timeout"])[0]
    for memory, ids in ((a, {c.id for c in a.cards()}), (b, b_ids)):
        found = memory.store.vector_search(vector, "test-bow", Filters(), 100)
        assert found and {cid for cid, _ in found} <= ids
        assert memory.store.keyword_search(["export"], Filters(), 100)
    stats = b.stats()
    assert stats["tenant"] == "b" and stats["cards"] == len(b_ids)
    assert stats["sessions"] == 1 and stats["users"] == 1


def test_runtime_state_and_offloads_per_tenant(new_store) -> None:  # type: ignore[no-untyped-def]
    store = open_store(new_store("s"), tenant="a")
    other = store.for_tenant("b")
    store.put_offload("ctx-1", "s", '[{"role": "user", "content": "a"}]')
    store.save_state("s", "{}")
    assert other.get_offload("ctx-1") is None and other.offload_ids("s") == []
    assert other.load_state("s") is None and other.state_ids() == []
    assert other.delete_state("s") is False
    assert store.offload_ids("s") == ["ctx-1"]
    other.put_offload("ctx-1", "s", "[]")  # the same ids in another tenant
    assert store.get_offload("ctx-1") == '[{"role": "user", "content": "a"}]'
    assert store.state_ids() == ["s"]
    assert other.swap_state("s", "{}", "{1}") is False  # b has no state "s"
    assert other.swap_state("s", None, "{1}") is True
    assert store.swap_state("s", "{}", "{2}") is True and store.load_state("s") == "{2}"
    assert store.swap_state("s", "{}", "{3}") is False and store.load_state("s") == "{2}"
    assert other.load_state("s") == "{1}" and other.offload_ids("s") == ["ctx-1"]
    assert store.delete_state("s") is True
    assert store.load_state("s") is None and store.offload_ids("s") == []
    assert other.offload_ids("s") == ["ctx-1"] and other.load_state("s") == "{1}"
    store.close()


def test_tenant_names_are_checked(new_store) -> None:  # type: ignore[no-untyped-def]
    location = new_store("s")
    for bad in ("", "a b", "x" * 65, "a/b", "租户"):
        with pytest.raises(ConfigError, match="tenant"):
            open_store(location, tenant=bad)
    store = open_store(location)
    with pytest.raises(ConfigError):
        store.for_tenant("a b")
    store.close()


def test_keys_are_kept_as_digests_and_can_be_revoked(new_store, store_kind: str,  # type: ignore[no-untyped-def]
                                                     tmp_path: Path) -> None:
    location = new_store("s")
    store = open_store(location)
    key, record = create_key(store, "acme", "ci")
    assert key.startswith(f"pk_{record.id}_") and record.tenant == "acme" and record.active
    assert authenticate(store, key) == record
    assert authenticate(store, key + "x") is None and authenticate(store, "") is None
    second, _ = create_key(store.for_tenant("other"), "beta")
    # store-wide; keys made in the same second have no creation order in PostgreSQL
    assert sorted(k.tenant for k in store.api_keys()) == ["acme", "beta"]
    revoked = store.revoke_key(record.id)
    assert revoked.revoked_at and not revoked.active
    assert authenticate(store, key) is None
    assert authenticate(store, second) is not None
    with pytest.raises(NotFoundError):
        store.revoke_key("no-such-key")
    store.close()
    if store_kind == "postgres":
        import psycopg

        with psycopg.connect(location) as conn:
            data = repr(conn.execute("SELECT * FROM api_keys").fetchall()).encode()
    else:
        data = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert key.encode() not in data and second.encode() not in data
    assert key_digest(second).encode() in data


def test_keys_cli_and_memory_tenant_option(new_store, capsys: pytest.CaptureFixture[str]  # type: ignore[no-untyped-def]
                                           ) -> None:
    store = new_store("s")
    assert main(["keys", "--store", store, "create", "--tenant", "acme", "--name", "bot"]) == 0
    key = capsys.readouterr().out.strip()
    assert key.startswith("pk_")
    assert main(["keys", "--store", store, "list"]) == 0
    listing = capsys.readouterr().out
    assert "tenant=acme" in listing and "active" in listing and key not in listing
    assert main(["keys", "--store", store, "create", "--tenant", "a b"]) == 2
    assert "tenant" in capsys.readouterr().err
    assert main(["memory", "--store", store, "--tenant", "acme", "-e", "none", "ingest",
                 str(EXAMPLES / "coding_session.json")]) == 0
    capsys.readouterr()
    assert main(["memory", "--store", store, "-e", "none", "search", "export timeout"]) == 0
    default_out = capsys.readouterr().out
    assert main(["memory", "--store", store, "--tenant", "acme", "-e", "none", "search",
                 "export timeout"]) == 0
    acme_out = capsys.readouterr().out
    assert "m_" not in default_out and "m_" in acme_out
    key_id = key.split("_")[1]
    assert main(["keys", "--store", store, "revoke", key_id]) == 0
    assert "revoked" in capsys.readouterr().out
    assert main(["keys", "--store", store, "revoke", "nope"]) == 2
