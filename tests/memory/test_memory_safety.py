"""The store under concurrent writers and a writer killed with SIGKILL mid-stream."""

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

from precis.memory import Filters, Memory, SQLiteStore

WRITER = textwrap.dedent(
    """
    import sys
    from precis.memory import MemoryCard, SQLiteStore

    path, tag, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = SQLiteStore(path)
    for i in range(count):
        card = MemoryCard(id=f"{tag}-{i}", content=f"card {i} written by {tag} " + "x" * 200,
                          session_id=tag)
        store.add([card])           # one transaction per card
        print(card.id, flush=True)  # printed only once committed
    store.close()
    """
)


def _spawn(path: Path, tag: str, count: int) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen([sys.executable, "-c", WRITER, str(path), tag, str(count)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    SQLiteStore(path).close()  # created (and migrated) once
    writers = [_spawn(path, tag, 150) for tag in ("a", "b")]
    outputs = [w.communicate(timeout=120) for w in writers]
    assert [w.returncode for w in writers] == [0, 0], [o[1] for o in outputs]
    with SQLiteStore(path) as store:
        assert store.count() == 300
        ids = {c.id for c in store.cards()}
    assert ids == {f"{t}-{i}" for t in "ab" for i in range(150)}


def test_two_processes_creating_the_store_at_once(tmp_path: Path) -> None:
    path = tmp_path / "fresh.sqlite3"
    writers = [_spawn(path, tag, 20) for tag in ("a", "b")]
    outputs = [w.communicate(timeout=120) for w in writers]
    assert [w.returncode for w in writers] == [0, 0], [o[1] for o in outputs]
    with SQLiteStore(path) as store:
        assert store.count() == 40


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkill_mid_write_keeps_every_committed_card(tmp_path: Path) -> None:
    path = tmp_path / "killed.sqlite3"
    SQLiteStore(path).close()
    writer = _spawn(path, "k", 100_000)
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
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    db.close()
    with SQLiteStore(path) as store:
        stored = {c.id for c in store.cards()}
        # every card whose commit was reported is there; at most the one in flight is extra
        assert set(committed) <= stored
        assert len(stored - set(committed)) <= 1
        assert store.keyword_search(["written"], Filters(), 5)


def test_a_reader_sees_cards_another_process_added(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite3"
    with Memory(path, embedder="none") as memory:
        assert memory.stats()["cards"] == 0
        writer = _spawn(path, "w", 5)
        writer.communicate(timeout=60)
        assert memory.stats()["cards"] == 5
        assert memory.search("written", k=10).hits
