"""What only the PostgreSQL store has: URLs, its migrations, its errors, the search it runs in
SQL (checked against the SQLite store's), the HNSW path. Against a real server
(tests/_postgres.py); the behaviour both stores share is tested once for both elsewhere."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest

from precis.cli import main
from precis.errors import MissingDependencyError, StoreError
from precis.memory import Filters, Memory, MemoryCard
from precis.memory.store import open_store
from precis.memory.store._pg_terms import FANOUT

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "compact"
_WORDS = ("deploy rollback cache redis nginx gateway payments invoices timeout retries "  # noqa: SIM905
          "migration schema index latency queue worker cron billing export import "
          "部署 回滚 缓存 网关 支付 发票 超时 重试 迁移 索引").split()


def _cards(n: int, seed: int) -> list[MemoryCard]:
    rng = random.Random(seed)
    return [MemoryCard(id=f"c{i}", content=" ".join(rng.choices(_WORDS, k=rng.randint(3, 14))),
                       session_id="s", user_id=rng.choice(["ana", "bo"]),
                       type=rng.choice(["fact", "decision"]),
                       event_time=f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}")
            for i in range(n)]


def _vectors(n: int, dim: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_keyword_and_vector_scores_equal_the_sqlite_store(
        postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from precis.memory.store import _pg_search

    cards = _cards(600, seed=1)
    vectors = _vectors(600, 32, seed=2)
    with open_store(postgres_url) as pg, open_store(str(tmp_path / "s.sqlite3")) as lite:
        for store in (pg, lite):
            # 300 one-card transactions (a common term's blocks merge twice over), then
            # batches of 50
            for start, size in [(i, 1) for i in range(300)] + [(i, 50) for i in
                                                               range(300, 600, 50)]:
                store.add(cards[start:start + size], vectors=vectors[start:start + size],
                          model="m")
            for gone in ("c7", "c100", "c450"):
                store.delete(gone)
            store.update("c8", content="rollback of the billing gateway")
            store.update("c301", content="缓存 超时 of the payments gateway")
        for words, filters in ((["payments", "timeout"], Filters()), (["缓存", "超时"], Filters()),
                               (["rollback", "billing", "gateway"], Filters(user="bo")),
                               (["cron"], Filters(types=("decision",), since="2024-03-01"))):
            got = pg.keyword_search(words, filters, 50)
            want = lite.keyword_search(words, filters, 50)
            assert len(got) == len(want) > 0
            assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-5)
            # the same cards with the same scores (cards tied at the cut may differ)
            cut = want[-1][1] + 1e-4
            assert {c for c, s in got if s > cut} == {c for c, s in want if s > cut}
            mine = dict(got)
            assert all(mine[c] == pytest.approx(s, rel=1e-5) for c, s in want if c in mine)
        # a filter checked on the best cards first, and on every allowed card when too few
        # of the best pass: both exact
        monkeypatch.setattr(_pg_search, "_CHECKED", 1)  # the best 100 cards are checked
        for filters in (Filters(user="bo"), Filters(user="bo", types=("decision",),
                                                    since="2024-09-15")):
            got = pg.keyword_search(["rollback", "cache", "部署"], filters, 5)
            want = lite.keyword_search(["rollback", "cache", "部署"], filters, 5)
            assert [c for c, _ in got] == [c for c, _ in want] and len(got) == 5
            assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-5)
        monkeypatch.undo()
        # a process that keeps no blocks (each search reads them all) answers the same
        with open_store(postgres_url, cache_mb=0) as uncached:
            for words in (["payments", "timeout"], ["缓存", "超时"]):
                assert uncached.keyword_search(words, Filters(), 50) == pg.keyword_search(
                    words, Filters(), 50)
        import psycopg

        with psycopg.connect(postgres_url) as conn:  # merged: a few blocks per term
            levels, rows = conn.execute(
                "SELECT max(level), max(c) FROM (SELECT term_id, max(level) level, count(*) c "
                "FROM postings GROUP BY term_id) x").fetchone()
            assert levels >= 1 and rows < 2 * FANOUT
        query = _vectors(1, 32, seed=3)[0]
        for filters in (Filters(), Filters(user="ana")):
            got = pg.vector_search(query, "m", filters, 20)
            want = lite.vector_search(query, "m", filters, 20)
            assert [c for c, _ in got] == [c for c, _ in want]
            assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-5)
        assert pg.vector_search(query, "other-model", Filters(), 5) == []


def test_the_hnsw_walk_with_filters_and_its_exact_fallback(
        postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from precis.memory.store import _pg_search

    cards = _cards(400, seed=5)
    vectors = _vectors(400, 16, seed=6)
    with open_store(postgres_url) as store:
        store.add(cards, vectors=vectors, model="m")
        first = next(i for i, c in enumerate(cards) if c.user_id == "ana")
        query = vectors[first]
        narrow = Filters(user="ana", since="2024-09-19")
        exact = store.vector_search(query, "m", Filters(user="ana"), 10)
        exact_narrow = store.vector_search(query, "m", narrow, 10)
        assert 0 < len(exact_narrow) < 10  # fewer cards pass than asked for
        monkeypatch.setattr(_pg_search, "EXACT_BELOW", 4)  # every search walks the index
        walked = store.vector_search(query, "m", Filters(user="ana"), 10)
        assert walked[0] == (f"c{first}", pytest.approx(1.0, abs=1e-5))
        assert len({c for c, _ in walked} & {c for c, _ in exact}) >= 8  # approximate
        assert {c for c, _ in walked} <= {c.id for c in cards if c.user_id == "ana"}
        # a filter so narrow that the walk finds too few falls back to the exact answer
        assert store.vector_search(query, "m", narrow, 10) == exact_narrow
    with pytest.raises(StoreError, match="vectors of 8 values"), open_store(postgres_url) as store:
        store.add([MemoryCard(id="x", content="x", session_id="s")],
                  vectors=_vectors(1, 8, 0), model="m")


def test_migrations_are_recorded_and_a_newer_database_is_refused(postgres_url: str) -> None:
    import psycopg

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM precis_migrations ORDER BY name")]
        assert names == ["0001_initial"]
        indexes = {r[0] for r in conn.execute("SELECT indexname FROM pg_indexes")}
        assert {"cards_by_user", "postings_pkey"} <= indexes
        conn.execute("INSERT INTO precis_migrations VALUES ('9999_future', 'x')")
    with pytest.raises(StoreError, match="newer precis"):
        open_store(postgres_url)


def test_bad_locations_give_clear_errors(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(StoreError, match="unknown kind of store 'mysql'") as info:
        open_store("mysql://root:hunter2@localhost/db")
    assert "hunter2" not in str(info.value)
    url = "postgresql://precis:hunter2@127.0.0.1:9/nowhere?connect_timeout=2"
    with pytest.raises(StoreError, match="cannot open the memory store") as info:
        open_store(url)
    assert "hunter2" not in str(info.value) and "precis:***@127.0.0.1:9" in str(info.value)
    code = main(["memory", "--store", url, "stats"])
    err = capsys.readouterr().err
    assert code == 2 and "cannot open the memory store" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and "hunter2" not in err


def test_missing_packages_give_the_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    for module in ("psycopg", "psycopg_pool", "pgvector.psycopg"):
        with monkeypatch.context() as patch:
            patch.setitem(sys.modules, module, None)
            with pytest.raises(MissingDependencyError, match=r"precis\[postgres\]") as info:
                open_store("postgresql://localhost/precis")
            assert info.value.extra == "postgres"
            assert info.value.package == module.split(".")[0]


def test_cards_of_another_segmenter_get_their_terms_again(postgres_url: str) -> None:
    import psycopg

    with Memory(postgres_url, embedder="none") as memory:
        memory.add([MemoryCard(id=f"c{i}", content=f"invoice {i} exported to the ledger",
                               session_id="s") for i in range(50)])
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("UPDATE meta SET value = 'older-segmenter' WHERE key = 'segmenter'")
        conn.execute("UPDATE terms SET term = term || '~'")  # as another cut would give
    with Memory(postgres_url, embedder="none") as memory:
        assert len(memory.search("ledger invoice", k=50).hits) == 50
        # "7" tells c7 apart; the words every card holds score ~0 (no result) beside it
        assert [h.card.id for h in memory.search("ledger invoice 7", k=50).hits] == ["c7"]
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM cards WHERE length IS NULL").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM terms WHERE term LIKE '%~'").fetchone() == (0,)
