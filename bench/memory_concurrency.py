"""Memory store under concurrent writers: nothing lost, nothing twice, a killed writer.

Three runs on a fresh store each (``--store sqlite`` or ``postgres``):

1. ``--writers`` processes each add ``--cards`` cards of their own (``--batch`` cards per
   transaction) at once; then the store must hold every card exactly once, and the keyword
   index must count each once (a word every card has finds them all).
2. the same, every writer adding the *same* cards (idempotent ingestion across processes):
   the store must hold each card once.
3. one writer killed with SIGKILL mid-stream while the others go on: every card whose commit
   it reported must be stored, and at most its batch in flight more.

Reported per run: seconds, cards/s over all writers, lost, duplicated (and for the kill:
reported commits, stored, unreported). Cards are the synthetic ones of the latency benchmark.

    python bench/memory_concurrency.py [--store postgres] [--writers 4] [--cards 10000]
        [--batch 10] [--json OUT]
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import parser, print_table, write_outputs

WRITER = """
import sys
sys.path.insert(0, {bench!r})
from _synthetic_cards import card
from precis.memory import MemoryCard
from precis.memory.store import open_store

location, prefix, count, batch = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
store = open_store(location)
for start in range(0, count, batch):
    cards = []
    for i in range(start, min(count, start + batch)):
        c = card(i)
        cards.append(MemoryCard(id=f"{{prefix}}{{i}}", content=c.text + " concurrency",
                                session_id=c.session, user_id=c.user, event_time=c.date))
    store.add(cards)
    print(start + len(cards), flush=True)  # committed
store.close()
"""


def _spawn(location: str, prefix: str, args: Any) -> subprocess.Popen[str]:
    script = WRITER.format(bench=str(Path(__file__).resolve().parent))
    return subprocess.Popen([sys.executable, "-c", script, location, prefix, str(args.cards),
                             str(args.batch)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _check(location: str, expected: set[str]) -> dict[str, int]:
    from precis.memory.store import Filters, open_store

    with open_store(location) as store:  # type: ignore[attr-defined]
        ids = [c.id for c in store.cards()]
        found = store.keyword_search(["concurrency"], Filters(), len(ids) + 10)
    return {"stored": len(ids), "lost": len(expected - set(ids)),
            "duplicated": len(ids) - len(set(ids)), "unexpected": len(set(ids) - expected),
            "keyword_hits": len(found)}


def _run(location: str, prefixes: list[str], args: Any, kill_after: int = 0
         ) -> dict[str, Any]:
    began = time.perf_counter()
    writers = [_spawn(location, prefix, args) for prefix in prefixes]
    reported = 0
    if kill_after:
        victim = writers[0]
        assert victim.stdout is not None
        while reported < kill_after:
            line = victim.stdout.readline()
            if not line:
                break
            reported = int(line)
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        tail = [int(x) for x in victim.stdout.read().split()]  # printed before the kill
        reported = max([reported, *tail])
    for w in writers[1 if kill_after else 0:]:
        _, err = w.communicate()
        if w.returncode:
            raise SystemExit(f"a writer failed: {err}")
    seconds = time.perf_counter() - began
    expected = {f"{p}{i}" for p in set(prefixes) for i in range(args.cards)}
    if kill_after:
        expected = {f"{p}{i}" for p in set(prefixes[1:]) for i in range(args.cards)} | {
            f"{prefixes[0]}{i}" for i in range(reported)}
    out: dict[str, Any] = {"seconds": seconds, **_check(location, expected)}
    written = len(prefixes) * args.cards if not kill_after else None
    out["cards_per_second"] = written / seconds if written else None
    if kill_after:
        out["reported_by_killed"] = reported
        out["unreported_stored"] = out.pop("unexpected")
    return out


def main() -> None:
    p = parser(__doc__ or "")
    p.add_argument("--store", choices=("sqlite", "postgres"), default="sqlite")
    p.add_argument("--pg-url", default=None, metavar="URL",
                   help="with --store postgres: a server to use instead of starting one")
    p.add_argument("--writers", type=int, default=4)
    p.add_argument("--cards", type=int, default=10_000, help="cards per writer")
    p.add_argument("--batch", type=int, default=10, help="cards per transaction")
    args = p.parse_args()
    server = None
    if args.store == "postgres":
        from _pg_server import start_server

        server = start_server(args.pg_url)
    scratch = Path(tempfile.mkdtemp(prefix="precis-concurrency-"))
    numbers = iter(range(1, 100))

    def fresh() -> str:
        if server is not None:
            url = server.new_database(migrated=False)
        else:
            url = str(scratch / f"store{next(numbers)}.sqlite3")
        from precis.memory.store import open_store

        open_store(url).close()  # created once, before the writers start
        return url

    try:
        writers = [f"w{i}-" for i in range(args.writers)]
        runs = {
            "own cards": _run(fresh(), writers, args),
            "same cards": _run(fresh(), ["same-"] * args.writers, args),
            "one killed": _run(fresh(), writers, args, kill_after=max(1, args.cards // 3)),
        }
    finally:
        if server is not None:
            server.close()
    print_table(["run", "writers", "cards each", "batch", "seconds", "cards/s", "stored",
                 "lost", "duplicated", "keyword hits", "killed: reported", "unreported"],
                [[name, args.writers, args.cards, args.batch, f"{r['seconds']:.1f}",
                  f"{r['cards_per_second']:,.0f}" if r.get("cards_per_second") else "",
                  r["stored"], r["lost"], r["duplicated"], r["keyword_hits"],
                  r.get("reported_by_killed", ""), r.get("unreported_stored", "")]
                 for name, r in runs.items()],
                title=f"concurrent writers, {args.store} store (load average "
                      f"{os.getloadavg()[0]:.1f})")
    write_outputs(args, {"benchmark": "memory_concurrency", "store": args.store,
                         "writers": args.writers, "cards": args.cards, "batch": args.batch,
                         "runs": runs})
    if any(r["lost"] or r["duplicated"] for r in runs.values()):
        raise SystemExit("cards were lost or duplicated")


if __name__ == "__main__":
    main()
