"""Stores under concurrent writers and a writer killed with SIGKILL mid-stream: every test
runs on a SQLite file and on a real PostgreSQL (``new_store``: tests/conftest.py)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from precis.memory import Filters, Memory
from precis.memory.store import open_store

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "compact"

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from _fault_memory import WRITER  # noqa: E402  (the fault campaign's writer process)

INGEST = textwrap.dedent(
    """
    import sys
    from precis.memory import Memory

    with Memory(sys.argv[1], embedder="none") as memory:
        print(memory.ingest(sys.argv[2], user="ana").added, flush=True)
    """
)


def _spawn(location: str, *args: str, script: str = WRITER) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen([sys.executable, "-c", script, location, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_two_processes_writing_at_once_lose_nothing(new_store) -> None:  # type: ignore[no-untyped-def]
    location = new_store("shared")
    open_store(location).close()  # created (and migrated) once
    writers = [_spawn(location, tag, "150") for tag in ("a", "b")]
    outputs = [w.communicate(timeout=120) for w in writers]
    assert [w.returncode for w in writers] == [0, 0], [o[1] for o in outputs]
    with open_store(location) as store:
        assert store.count() == 300
        ids = [c.id for c in store.cards()]
        assert len(ids) == len(set(ids)) == 300
        assert set(ids) == {f"{t}-{i}" for t in "ab" for i in range(150)}
        assert [h for h, _ in store.keyword_search(["written"], Filters(), 500)]  # indexed
        hits = store.keyword_search(["b"], Filters(session="a"), 500)
        assert hits == []  # "b" is in every b card, none of session a


def test_two_processes_creating_the_store_at_once(new_store) -> None:  # type: ignore[no-untyped-def]
    location = new_store("fresh", empty=True)
    writers = [_spawn(location, tag, "20") for tag in ("a", "b")]
    outputs = [w.communicate(timeout=120) for w in writers]
    assert [w.returncode for w in writers] == [0, 0], [o[1] for o in outputs]
    with open_store(location) as store:
        assert store.count() == 40


def test_one_session_ingested_by_two_processes_at_once_is_stored_once(new_store) -> None:  # type: ignore[no-untyped-def]
    location = new_store("twice")
    open_store(location).close()
    workers = [_spawn(location, str(FIX / "multiday_en.json"), script=INGEST) for _ in range(2)]
    outputs = [w.communicate(timeout=120) for w in workers]
    assert [w.returncode for w in workers] == [0, 0], [o[1] for o in outputs]
    with Memory(location, embedder="none") as memory:
        single = memory.ingest(FIX / "multiday_en.json", user="ana")
        assert single.added == 0
        assert sum(int(o[0]) for o in outputs) == single.cards  # each card added by one
        assert memory.stats()["cards"] == single.cards
        ids = [c.id for c in memory.cards()]
        assert len(ids) == len(set(ids))
        # the keyword statistics count each card once: the top hit scores as in a store
        # that ingested the session once
        top = memory.search("staging sync error", k=1).hits[0]
    with Memory(new_store("once"), embedder="none") as once:
        once.ingest(FIX / "multiday_en.json", user="ana")
        alone = once.search("staging sync error", k=1).hits[0]
    assert (top.card.id, top.score) == pytest.approx((alone.card.id, alone.score))


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkill_mid_write_keeps_every_committed_card(new_store, store_kind: str) -> None:  # type: ignore[no-untyped-def]
    location = new_store("killed")
    open_store(location).close()
    writer = _spawn(location, "k", "100000")
    assert writer.stdout is not None
    committed: list[str] = []
    deadline = time.monotonic() + 60
    while len(committed) < 300 and time.monotonic() < deadline:
        line = writer.stdout.readline()
        if not line:
            break
        committed.append(line.strip())
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=30)
    committed.extend(x for x in writer.stdout.read().split() if x)  # printed before the kill
    writer.stdout.close()
    assert writer.returncode == -signal.SIGKILL
    assert len(committed) >= 300
    if store_kind == "sqlite":
        db = sqlite3.connect(location)
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        db.close()
    with open_store(location) as store:
        stored = {c.id for c in store.cards()}
        # every card whose commit was reported is there; at most the one in flight is extra
        assert set(committed) <= stored
        assert len(stored - set(committed)) <= 1
        assert len(store.keyword_search(["written"], Filters(), 10_000)) == len(stored)


def test_a_reader_sees_cards_another_process_added(new_store) -> None:  # type: ignore[no-untyped-def]
    location = new_store("r")
    with Memory(location, embedder="none") as memory:
        assert memory.stats()["cards"] == 0
        writer = _spawn(location, "w", "5")
        writer.communicate(timeout=60)
        assert memory.stats()["cards"] == 5
        assert memory.search("written", k=10).hits
