"""Moving a store between SQLite and PostgreSQL (``precis memory migrate``): everything
copied with its provenance, and a stopped run finished by running it again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _embedders import WordHashEmbedder

from precis.cli import main
from precis.errors import ConfigError
from precis.memory import Memory
from precis.memory.migrate import migrate
from precis.memory.store import open_store

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "compact"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _fill(location: str) -> None:
    """A store with what a real one holds: two users' sessions with vectors, changed,
    superseded and deleted cards, a card added again after its delete, a runtime state."""
    with Memory(location, embedder=WordHashEmbedder()) as memory:
        memory.ingest(FIX / "multiday_en.json", user="ana")
        memory.ingest(FIX / "multiday_zh.json", user="bo")
        memory.ingest(EXAMPLES / "coding_session.json", user="ana", agent="coder")
        cards = list(memory.cards())
        memory.update(cards[0].id, content="The cutover moved to Sunday morning.")
        memory.update(cards[1].id, superseded_by=cards[0].id)
        memory.delete(cards[2].id)
        again = cards[3]
        memory.delete(again.id)
        memory.add([again])
        memory.store.put_offload("ctx-1", "run-1", '[{"role": "user", "content": "big"}]')
        memory.store.save_state("run-1", '{"version": 1}')


def _everything(location: str) -> dict[str, object]:
    """All a tenant holds, as comparable values (vectors rounded)."""
    with open_store(location) as store:
        cards = [c.to_dict() for c in store.cards()]
        ids = [c["id"] for c in cards]
        history = store.history_after(("", 0), 100_000)
        return {
            "cards": cards,
            "history": history,
            "sessions": store.sessions(),
            "messages": {s.id: store.messages(s.id, 0, 10_000) for s in store.sessions()},
            "vectors": {i: [round(float(x), 5) for x in v]
                        for i, v in sorted(store.vectors_of("test-bow", ids).items())},
            "versions": {i: [(v.version, v.action, v.card.to_dict() if v.card else None)
                             for v in store.history(i)] for i in ids},
            "state": (store.load_state("run-1"), store.offload_ids("run-1"),
                      store.get_offload("ctx-1")),
            "embedder": store.get_meta("embedder"),
        }


def _searches(location: str) -> list[list[tuple[str, float]]]:
    with Memory(location, embedder=WordHashEmbedder()) as memory:
        return [[(h.card.id, round(h.score, 4)) for h in memory.search(q, k=8, **f).hits]
                for q, f in (("staging sync error code", {}), ("切换时间", {"user": "bo"}),
                             ("export timeout cause", {"user": "ana"}),
                             ("cutover", {"current_only": True}))]


def test_a_store_moves_both_ways_with_everything_intact(new_store, store_kind: str,  # type: ignore[no-untyped-def]
                                                        postgres_server, tmp_path: Path) -> None:
    source = new_store("source")
    other = (lambda: postgres_server.new_database()) if store_kind == "sqlite" else (
        lambda: str(tmp_path / "other.sqlite3"))
    _fill(source)
    middle = other()
    with open_store(source) as src, open_store(middle) as dst:
        report = migrate(src, dst, batch=7)  # many batches
    original = _everything(source)
    assert report.cards == report.added == len(original["cards"]) > 20  # type: ignore[arg-type]
    assert report.vectors == {"test-bow": len(original["vectors"])}  # type: ignore[arg-type]
    assert report.history == len(original["history"]) > 0  # type: ignore[arg-type]
    assert report.states == 1 and report.sessions == 3
    assert _everything(middle) == original
    assert _searches(middle) == _searches(source)
    # and back, through the command line, into a third store of the first kind
    back = new_store("back")
    assert main(["memory", "migrate", middle, back, "--json"]) == 0
    assert _everything(back) == original


def test_a_stopped_migration_is_finished_by_running_it_again(new_store, store_kind: str,  # type: ignore[no-untyped-def]
                                                             postgres_server,
                                                             tmp_path: Path) -> None:
    source = new_store("source")
    target = postgres_server.new_database() if store_kind == "sqlite" else str(
        tmp_path / "target.sqlite3")
    _fill(source)

    class Stop(Exception):
        pass

    def stop_midway(step: str, done: int, total: int) -> None:
        if step == "cards" and done >= 10:
            raise Stop

    with open_store(source) as src, open_store(target) as dst:
        with pytest.raises(Stop):
            migrate(src, dst, batch=5, progress=stop_midway)
        assert 10 <= dst.count() < src.count()  # batches committed before the stop stay
        copied = dst.count()
        report = migrate(src, dst, batch=5)
        assert report.added == src.count() - copied  # nothing twice
        again = migrate(src, dst, batch=5)
        assert (again.added, again.history, again.states, sum(again.vectors.values())) == (
            0, 0, 0, 0)
    assert _everything(target) == _everything(source)


def test_migrate_refuses_the_same_store_and_names_bad_input(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(tmp_path / "one.sqlite3")
    with open_store(path) as store, pytest.raises(ConfigError, match="same store"):
        migrate(store, store)
    code = main(["memory", "migrate", path, "mysql://x/y"])
    err = capsys.readouterr().err
    assert code == 2 and "unknown kind of store 'mysql'" in err and "Traceback" not in err
    code = main(["memory", "migrate", path, path])
    assert code == 2 and "same store" in capsys.readouterr().err
    assert main(["memory", "--tenant", "acme", "migrate", path,
                 str(tmp_path / "two.sqlite3"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cards"] == 0
