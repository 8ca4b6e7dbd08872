"""Load on `precis serve` over loopback: mixed compress / add / search from concurrent clients,
against 1 and 2 worker processes, and what the HTTP layer costs over a library call.

A store of 10,000 synthetic cards (``_synthetic_cards``; keyword search, no embedder) is made
in a temporary folder; ``precis serve`` runs on 127.0.0.1 with it. Clients (asyncio + httpx,
``--clients`` at once) send ``--requests`` calls in all: searches (the synthetic queries),
adds (a new statement each) and compressions of a ~20,000-token agent session (a prefix of
``transcripts/claude-code/python-to-rust-port.transcript.jsonl``, or of the example session
repeated when the data folder is absent) to a 4,000-token budget. Then, one client at a time,
the same three calls over HTTP and as library calls in this process: the difference of the
medians is the HTTP layer's cost.

Targets (issue 19): search p95 <= 25 ms and add p95 <= 25 ms at 32 clients on a 10k-card
store; compress of a 20k-token session p95 <= 300 ms; 0 errors. The machine is shared and
has 2 cores: figures are noisy, run it twice.

    python bench/service_load.py [--requests 20000] [--clients 32] [--workers 1,2] [--json OUT]
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import ROOT, parser, print_table, write_json
from _synthetic_cards import card, queries

_TYPE = {"decision": "decision", "config": "config", "sql": "sql", "error": "error-fix",
         "preference": "preference", "event": "event", "person": "fact", "ticket": "fact"}
SESSION = ("transcripts", "claude-code", "python-to-rust-port.transcript.jsonl")


def build_store(path: Path, n: int) -> None:
    from precis.memory import MemoryCard, SQLiteStore

    with SQLiteStore(path) as store:
        store.set_meta("embedder", "none")
        batch: list[MemoryCard] = []
        for i in range(n):
            c = card(i)
            batch.append(MemoryCard(
                id=c.id, content=c.text, type=_TYPE[c.type],  # type: ignore[arg-type]
                tags=(c.type,), session_id=c.session, user_id=c.user, scope="user",
                event_time=c.date, language=c.lang))
            if len(batch) == 1000:
                store.add(batch)
                batch = []
        if batch:
            store.add(batch)


def session_messages(data: Path, tokens: int) -> list[dict[str, Any]]:
    """A prefix of a real agent session of about ``tokens`` tokens, as OpenAI messages."""
    from precis import get_counter, load
    from precis.formats.export import to_openai

    path = data.joinpath(*SESSION)
    source = path if path.exists() else ROOT / "examples" / "coding_session.json"
    messages = load(source).messages
    while sum(get_counter().count_each(messages)) < tokens:
        messages = messages + messages  # the example is short: repeat it
    counter = get_counter()
    out, total = [], 0
    for m in messages:
        total += counter.count_message(m)
        if total > tokens:
            break
        out.append(m)
    return to_openai(out)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(store: Path, workers: int, home: Path
          ) -> tuple[subprocess.Popen[bytes], str, set[int]]:
    """The server, its URL and its workers' process ids (once every worker answers)."""
    port = free_port()
    env = {**os.environ, "PRECIS_HOME": str(home)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "precis.cli", "serve", "--port", str(port), "--store",
         str(store), "--workers", str(workers), "--embedder", "none", "--rate", "1000000",
         "--burst", "1000000", "--log-level", "error"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    import httpx

    deadline = time.monotonic() + 120
    pids: set[int] = set()
    while time.monotonic() < deadline:  # until every worker answers (a new connection each)
        try:
            pids.add(httpx.get(f"{url}/healthz", timeout=1).json()["pid"])
            if len(pids) >= workers:
                return proc, url, pids
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    if pids:  # some worker never answered a new connection (uvicorn's shared socket)
        print(f"warning: {len(pids)} of {workers} workers answered", file=sys.stderr)
        return proc, url, pids
    proc.kill()
    raise RuntimeError(f"the server did not start: {proc.stderr.read().decode()[-2000:]}")


def cpu_seconds(pid: int) -> float:
    """A process's CPU time so far (user + system), from /proc (Linux; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()


def requests_plan(total: int, mix: dict[str, float], seed: int) -> list[str]:
    rng = random.Random(seed)
    kinds = list(mix)
    return rng.choices(kinds, weights=[mix[k] for k in kinds], k=total)


async def load(url: str, plan: list[str], clients: int, session: list[dict[str, Any]],
               searches: list[str], budget: int) -> dict[str, Any]:
    import httpx

    latencies: dict[str, list[float]] = {k: [] for k in ("search", "add", "compress")}
    errors: dict[str, int] = {}
    queue: asyncio.Queue[tuple[int, str]] = asyncio.Queue()
    for item in enumerate(plan):
        queue.put_nowait(item)

    async def client() -> None:
        async with httpx.AsyncClient(base_url=url, timeout=120) as http:
            while True:
                try:
                    i, kind = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                if kind == "search":
                    call = http.post("/v1/memories/search", json={
                        "query": searches[i % len(searches)], "k": 10})
                elif kind == "add":
                    call = http.post("/v1/memories", json={
                        "text": f"Load test note {i}: deploy window for service-{i % 97} "
                                f"moved to {i % 24:02d}:00 UTC", "user_id": f"u{i % 100}"})
                else:
                    call = http.post("/v1/compress", json={
                        "conversation": session, "budget": budget, "timings": False})
                started = time.perf_counter()
                try:
                    response = await call
                    ok = response.status_code < 400
                    if not ok:
                        key = f"{kind} {response.status_code}"
                        errors[key] = errors.get(key, 0) + 1
                except httpx.HTTPError as err:
                    ok = False
                    errors[f"{kind} {type(err).__name__}"] = errors.get(
                        f"{kind} {type(err).__name__}", 0) + 1
                if ok:
                    latencies[kind].append(time.perf_counter() - started)

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    elapsed = time.perf_counter() - started
    return {"elapsed_s": elapsed, "throughput_rps": len(plan) / elapsed, "errors": errors,
            "latency_ms": {k: summary(v) for k, v in latencies.items() if v}}


def summary(values: list[float]) -> dict[str, float]:
    ms = sorted(v * 1000 for v in values)

    def pct(p: float) -> float:
        return ms[min(len(ms) - 1, int(p / 100 * len(ms)))]

    return {"n": len(ms), "p50": pct(50), "p95": pct(95), "p99": pct(99),
            "mean": statistics.fmean(ms)}


def overhead(url: str, store: Path, session: list[dict[str, Any]], searches: list[str],
             budget: int, repeat: int) -> dict[str, dict[str, float]]:
    """Median of one client's calls over HTTP and as library calls (this process)."""
    import httpx

    from precis.compact import compress
    from precis.memory import Memory

    out: dict[str, dict[str, float]] = {}
    lib_store = store.with_name("library.sqlite3")
    shutil.copy(store, lib_store)
    with httpx.Client(base_url=url, timeout=120) as http, \
            Memory(lib_store, embedder="none") as memory:
        from precis import load as load_conversation

        conversation = load_conversation(session)
        memory.search(searches[0])  # indexes loaded, as in the running server
        calls = {
            "search": (lambda i: http.post("/v1/memories/search", json={
                "query": searches[i % len(searches)], "k": 10}),
                lambda i: memory.search(searches[i % len(searches)], k=10)),
            "add": (lambda i: http.post("/v1/memories", json={
                "text": f"Overhead note {i}: cache TTL of api-{i} is {i % 60} s"}),
                lambda i: memory.ingest(load_conversation([{
                    "role": "user", "content": f"Overhead note {i}: cache TTL of lib-{i} is "
                                               f"{i % 60} s"}]))),
            "compress": (lambda i: http.post("/v1/compress", json={
                "conversation": session, "budget": budget, "timings": False}),
                lambda i: compress(conversation, budget=budget).to_dict(timings=False)),
        }
        for kind, (over_http, in_process) in calls.items():
            n = repeat if kind != "compress" else max(5, repeat // 10)
            h, lib = [], []
            for i in range(n):
                t = time.perf_counter()
                over_http(i)
                h.append(time.perf_counter() - t)
                t = time.perf_counter()
                in_process(i)
                lib.append(time.perf_counter() - t)
            out[kind] = {"http_p50_ms": statistics.median(h) * 1000,
                         "library_p50_ms": statistics.median(lib) * 1000,
                         "overhead_ms": (statistics.median(h) - statistics.median(lib)) * 1000}
    return out


def main() -> None:
    p = parser(__doc__.split("\n\n")[0])
    p.add_argument("--requests", type=int, default=20_000)
    p.add_argument("--clients", type=int, default=32)
    p.add_argument("--workers", default="1,2", help="worker counts to run, e.g. 1,2")
    p.add_argument("--cards", type=int, default=10_000)
    p.add_argument("--session-tokens", type=int, default=20_000)
    p.add_argument("--budget", type=int, default=4_000)
    p.add_argument("--mix", default="search=0.6,add=0.38,compress=0.02",
                   help="shares of each call")
    p.add_argument("--overhead-repeat", type=int, default=200)
    args = p.parse_args()
    mix = {k: float(v) for k, v in (part.split("=") for part in args.mix.split(","))}
    session = session_messages(args.data, args.session_tokens)
    searches = [q.text for q in queries(args.cards, 500)]
    figures: dict[str, Any] = {"requests": args.requests, "clients": args.clients,
                               "cards": args.cards, "mix": mix,
                               "session_messages": len(session), "runs": {}}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base.sqlite3"
        t = time.perf_counter()
        build_store(base, args.cards)
        print(f"store: {args.cards} cards in {time.perf_counter() - t:.1f} s; session: "
              f"{len(session)} messages (~{args.session_tokens} tokens)")
        rows = []
        for workers in [int(w) for w in args.workers.split(",")]:
            store = Path(tmp) / f"w{workers}.sqlite3"
            shutil.copy(base, store)
            proc, url, pids = start(store, workers, Path(tmp))
            try:
                plan = requests_plan(args.requests, mix, seed=workers)
                asyncio.run(load(url, plan[:64], min(args.clients, 8), session, searches,
                                 args.budget))  # warm every worker
                cpu = {pid: cpu_seconds(pid) for pid in pids}
                run = asyncio.run(load(url, plan, args.clients, session, searches,
                                       args.budget))
                # how the run's work fell on the workers (one with all of it: no spreading)
                run["worker_cpu_s"] = sorted((round(cpu_seconds(p) - c, 2)
                                              for p, c in cpu.items()), reverse=True)
                if workers == 1:
                    figures["overhead"] = overhead(url, store, session, searches, args.budget,
                                                   args.overhead_repeat)
            finally:
                stop(proc)
            figures["runs"][str(workers)] = run
            for kind, lat in run["latency_ms"].items():
                rows.append([workers, kind, lat["n"], f"{lat['p50']:.1f}", f"{lat['p95']:.1f}",
                             f"{lat['p99']:.1f}", f"{run['throughput_rps']:.0f}",
                             sum(run["errors"].values())])
    print_table(["workers", "call", "n", "p50 ms", "p95 ms", "p99 ms", "req/s (all)",
                 "errors"], rows, title=f"{args.requests} requests, {args.clients} clients, "
                                        f"{args.cards}-card store")
    if "overhead" in figures:
        print_table(["call", "HTTP p50 ms", "library p50 ms", "HTTP layer ms"],
                    [[k, f"{v['http_p50_ms']:.1f}", f"{v['library_p50_ms']:.1f}",
                      f"{v['overhead_ms']:.1f}"] for k, v in figures["overhead"].items()],
                    title="one client: over HTTP vs a library call")
    for workers, run in figures["runs"].items():
        print(f"CPU seconds of each worker during the run ({workers} worker(s)): "
              + " / ".join(f"{s:.1f}" for s in run["worker_cpu_s"]))
        if run["errors"]:
            print(f"errors ({workers} worker(s)): {json.dumps(run['errors'])}")
    if args.json:
        write_json(args.json, figures)


if __name__ == "__main__":
    main()
