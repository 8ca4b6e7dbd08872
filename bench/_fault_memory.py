"""Fault campaign, memory: the Memory API with arguments of every wrong type, hostile search
queries, and stores under ``kill -9`` and concurrent writers.

*Expected* is a :class:`~precis.PrecisError` (or a result); a *bug* is any other exception,
a store that fails SQLite's integrity check, a card a writer saw committed that is gone,
or a card lost between concurrent writers.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import traceback
from collections import Counter
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import precis
from precis.memory import Filters, Memory, MemoryCard

__all__ = ["WRITER", "api_cases", "concurrent_writers", "hostile_queries", "kill_during_ingest",
           "run_api_case"]

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "coding_session.json"
WRONG: tuple[Any, ...] = (5, -1, 1.5, True, None, [], ["a"], {}, {"a": 1}, b"x", "\ud800",
                          "", " ", date(2024, 1, 1), object(), ("fact",), "x" * 20000)


def api_cases() -> list[tuple[str, Callable[[Memory], Any]]]:
    """(label, call) for every Memory method and argument given each wrong value."""
    cases: list[tuple[str, Callable[[Memory], Any]]] = []
    filters = ("user", "agent", "session", "speaker", "since", "until")
    for value in WRONG:
        v = value
        cases += [
            (f"search({v!r:.20})", lambda m, v=v: m.search(v)),
            (f"search(k={v!r:.20})", lambda m, v=v: m.search("timeout", k=v)),
            (f"search(types={v!r:.20})", lambda m, v=v: m.search("timeout", types=v)),
            (f"search(context={v!r:.20})", lambda m, v=v: m.search("timeout", context=v)),
            (f"search(today={v!r:.20})", lambda m, v=v: m.search("last week", today=v)),
            (f"search(recap={v!r:.20})", lambda m, v=v: m.search("timeout", recap=v)),
            (f"get({v!r:.20})", lambda m, v=v: m.get(v)),
            (f"history({v!r:.20})", lambda m, v=v: m.history(v)),
            (f"delete({v!r:.20})", lambda m, v=v: m.delete(v)),
            (f"update(content={v!r:.20})",
             lambda m, v=v: m.update(next(iter(m.cards())).id, content=v)),
            (f"cards({v!r:.20})", lambda m, v=v: list(m.cards(v))),
            (f"cards(limit={v!r:.20})", lambda m, v=v: list(m.cards(limit=v))),
            (f"export({v!r:.20})", lambda m, v=v: list(m.export(v))),
            (f"ingest(session={v!r:.20})", lambda m, v=v: m.ingest(EXAMPLE, session=v)),
            (f"ingest({v!r:.20})", lambda m, v=v: m.ingest(v)),
            (f"import_lines([{v!r:.20}])", lambda m, v=v: m.import_lines([v])),
            (f"sources({v!r:.20})", lambda m, v=v: m.sources(v)),
        ]
        for name in filters:
            cases.append((f"search({name}={v!r:.20})",
                          lambda m, v=v, name=name: m.search("timeout", **{name: v})))
            cases.append((f"Filters({name}={v!r:.20})",
                          lambda m, v=v, name=name: list(m.cards(Filters(**{name: v})))))
    return cases


def run_api_case(memory: Memory, call: Callable[[Memory], Any]) -> tuple[str, str]:
    try:
        call(memory)
    except precis.PrecisError:
        return "expected", ""
    except Exception as err:
        frame = traceback.extract_tb(err.__traceback__)[-1]
        return "bug", f"{type(err).__name__} at {frame.filename.split('src/')[-1]}:" \
                      f"{frame.lineno}: {err}"[:200]
    return "ok", ""


_SYNTAX = ['"', "'", "AND", "OR", "NOT", "NEAR(", "*", "^", ":", "(", ")", "-", "+", "{",
           "}", "[", "]", "'; DROP TABLE cards; --", "\\", "%", "_", "\x00", "\u200b", "🙂",
           "\ud83d", "\ufffd", "导出", "超时", "timeout", "export", "\n", "\t", "..", "/*"]


def hostile_queries(n: int, rng: random.Random) -> list[str]:
    """``n`` queries of search syntax, SQL, control characters, surrogates and real words."""
    out = []
    for _ in range(n):
        kind = rng.random()
        if kind < 0.1:
            out.append("".join(chr(rng.randint(0, 0x2FFFF))
                               for _ in range(rng.randint(1, 40))))
        elif kind < 0.15:
            out.append(rng.choice(_SYNTAX) * rng.randint(1, 5000))
        else:
            out.append(" ".join(rng.choice(_SYNTAX) for _ in range(rng.randint(1, 12))))
    return out


WRITER = textwrap.dedent(
    """
    import sys
    from precis.memory import MemoryCard
    from precis.memory.store import open_store

    location, tag, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = open_store(location)
    for i in range(count):
        card = MemoryCard(id=f"{tag}-{i}", content=f"card {i} written by {tag} " + "x" * 300,
                          session_id=tag)
        store.add([card])           # one transaction per card
        print(card.id, flush=True)  # printed only once committed
    store.close()
    """
)
"""A writer process (the test suite's kill and concurrency tests use it too): ``location
tag count``, one transaction per card, each id printed once committed."""


def _spawn(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen([sys.executable, "-c", WRITER, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def _integrity(path: Path) -> str:
    db = sqlite3.connect(path)
    try:
        return str(db.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        db.close()


def kill_during_ingest(tmp: Path, runs: int, rng: random.Random
                       ) -> tuple[Counter[str], dict[str, str]]:
    """``runs`` writers killed with SIGKILL at a random moment: every card a writer printed
    (committed) must be in the store, which must pass SQLite's integrity check."""
    counts: Counter[str] = Counter()
    examples: dict[str, str] = {}
    for run in range(runs):
        path = tmp / f"killed-{run}.sqlite3"
        Memory(path, embedder="none").close()
        writer = _spawn(str(path), f"w{run}", "100000")
        time.sleep(rng.uniform(0.5, 2.0))
        os.kill(writer.pid, signal.SIGKILL)
        out, _ = writer.communicate()
        committed = {line for line in out.splitlines() if line.strip()}
        counts["cases"] += 1
        check = _integrity(path)
        with Memory(path, embedder="none") as memory:
            stored = {c.id for c in memory.cards()}
        lost = committed - stored
        if check != "ok" or lost:
            counts["bugs"] += 1
            examples.setdefault("kill -9", f"run {run}: integrity {check}, {len(lost)} of "
                                           f"{len(committed)} committed cards lost")
    return counts, examples


def concurrent_writers(tmp: Path, runs: int, rng: random.Random
                       ) -> tuple[Counter[str], dict[str, str]]:
    """2 to 4 processes writing at once: every card of every writer is stored, once."""
    counts: Counter[str] = Counter()
    examples: dict[str, str] = {}
    for run in range(runs):
        path = tmp / f"shared-{run}.sqlite3"
        Memory(path, embedder="none").close()
        writers = [_spawn(str(path), f"r{run}w{w}", "60") for w in range(rng.randint(2, 4))]
        done = [w.communicate(timeout=600) for w in writers]
        counts["cases"] += 1
        expected = {line for out, _ in done for line in out.splitlines() if line.strip()}
        failed = [err.strip().splitlines()[-1] for (_, err), w in zip(done, writers)
                  if w.returncode != 0 and err.strip()]
        with Memory(path, embedder="none") as memory:
            ids = [c.id for c in memory.cards()]
        if failed or set(ids) != expected or len(ids) != len(set(ids)) \
                or len(expected) != 60 * len(writers):
            counts["bugs"] += 1
            examples.setdefault("writers", f"run {run}: {len(writers)} writers, "
                                           f"{len(expected)} written, {len(ids)} stored; "
                                           f"{failed[:1]}")
    return counts, examples


def store_card(memory: Memory) -> MemoryCard:
    return next(iter(memory.cards()))
