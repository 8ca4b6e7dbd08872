"""`precis serve --workers 2` as a user runs it (a real process on 127.0.0.1): keep-alive
connections opened at once are served by both workers (each worker has a socket of its own
with SO_REUSEPORT; uvicorn's shared socket gave every one of them to one worker), a killed
worker is replaced, SIGTERM stops every process, a worker that cannot start stops the
server with one line, and without SO_REUSEPORT uvicorn's own workers serve."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

pytest.importorskip("fastapi", reason="precis[server] is not installed")
pytest.importorskip("uvicorn", reason="precis[server] is not installed")

from precis.cli import main
from precis.service.workers import reuse_port_available

# `python -c` with SO_REUSEPORT hidden, as on a system without it, then `precis serve`
NO_REUSEPORT = ("import socket, runpy; del socket.SO_REUSEPORT; "
                "runpy.run_module('precis.cli', run_name='__main__')")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(tmp: Path, *args: str, python: tuple[str, ...] = ("-m", "precis.cli"),
           store: Path | None = None) -> tuple[subprocess.Popen[str], str]:
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "PRECIS_HOME": str(tmp)}
    process = subprocess.Popen(
        [sys.executable, *python, "serve", "--port", str(port), "--store",
         str(store or tmp / "memory.sqlite3"), "--embedder", "none", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    return process, f"http://127.0.0.1:{port}"


def _pids(url: str, want: int, process: subprocess.Popen[str], timeout: float = 120
          ) -> set[int]:
    """The worker pids that answer a new connection, until ``want`` of them have."""
    seen: set[int] = set()
    deadline = time.monotonic() + timeout
    while len(seen) < want and time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"precis serve stopped: {process.communicate()[1]}")
        try:
            seen.add(httpx.get(f"{url}/healthz", timeout=2).json()["pid"])
        except httpx.HTTPError:
            time.sleep(0.1)
    return seen


def _stop(process: subprocess.Popen[str]) -> tuple[int, str]:
    process.send_signal(signal.SIGTERM)
    try:
        _, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    return process.returncode, err


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (exited, not yet reaped by whoever adopted it) counts as gone
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z")


async def _clients(url: str, n: int, calls: int) -> list[list[int]]:
    """``n`` keep-alive clients connecting at once; the pid behind each call of each."""

    async def one(i: int) -> list[int]:
        async with httpx.AsyncClient(base_url=url, timeout=60) as http:
            pids = []
            for j in range(calls):
                added = await http.post("/v1/memories", json={
                    "text": f"Client {i} call {j}: the deploy window of api-{i} moved to "
                            f"{j:02d}:00 UTC", "user_id": f"u{i}"})
                assert added.status_code == 201, added.text
                found = await http.post("/v1/memories/search",
                                        json={"query": f"deploy window api-{i}"})
                assert found.status_code == 200, found.text
                pids.append((await http.get("/healthz")).json()["pid"])
            return pids

    return list(await asyncio.gather(*(one(i) for i in range(n))))


@pytest.fixture
def two_workers(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], str, set[int]]]:
    process, url = _serve(tmp_path, "--workers", "2")
    try:
        pids = _pids(url, 2, process)
        yield process, url, pids
    finally:
        if process.poll() is None:
            process.kill()  # its workers see they are orphans and stop within a second
            process.communicate(timeout=30)


@pytest.mark.skipif(not reuse_port_available(), reason="SO_REUSEPORT balancing is Linux's")
def test_keep_alive_clients_are_spread_over_both_workers_and_sigterm_stops_all(
        two_workers: tuple[subprocess.Popen[str], str, set[int]]) -> None:
    process, url, workers = two_workers
    assert len(workers) == 2 and process.pid not in workers
    served = asyncio.run(_clients(url, 16, 3))
    for pids in served:
        assert len(set(pids)) == 1  # one connection, one worker
    by_worker = {pid: sum(p[0] == pid for p in served) for pid in workers}
    assert all(by_worker.values()), by_worker  # both served some of the 16 connections
    assert set().union(*map(set, served)) == workers
    # what one worker wrote, the other finds (one store)
    with httpx.Client(base_url=url) as http:
        hits = http.post("/v1/memories/search", json={"query": "deploy window api-3",
                                                      "k": 50}).json()
    assert any("api-3 " in hit["card"]["content"] for hit in hits["hits"]), hits
    code, err = _stop(process)
    assert code == 0, err
    assert "Traceback" not in err, err
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in workers)


@pytest.mark.skipif(not reuse_port_available(), reason="SO_REUSEPORT balancing is Linux's")
def test_a_killed_worker_is_replaced(
        two_workers: tuple[subprocess.Popen[str], str, set[int]]) -> None:
    process, url, workers = two_workers
    dead = min(workers)
    os.kill(dead, signal.SIGKILL)
    now = _pids(url, 2, process, timeout=60)  # new connections: the dead one cannot answer
    assert dead not in now and len(now) == 2 and max(workers) in now, now  # and a new one
    assert process.poll() is None
    code, err = _stop(process)
    assert code == 0, err
    assert f"worker {dead} exited (code -9); starting another" in err


@pytest.mark.skipif(not reuse_port_available(), reason="SO_REUSEPORT balancing is Linux's")
def test_a_worker_that_cannot_start_stops_the_server(tmp_path: Path) -> None:
    store = tmp_path / "not-a-store.sqlite3"
    store.write_text("not a database\n", encoding="utf-8")
    process, _ = _serve(tmp_path, "--workers", "2", store=store)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 3, err
    assert "file is not a database" in err and "a worker could not start; stopping" in err
    assert "Traceback" not in err, err


@pytest.mark.skipif(not reuse_port_available(), reason="SO_REUSEPORT balancing is Linux's")
def test_port_taken_is_one_line_and_exit_2(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = main(["serve", "--port", str(port), "--workers", "2", "--store",
                     str(tmp_path / "m.sqlite3"), "--embedder", "none"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"cannot listen on 127.0.0.1:{port}" in err and "in use" in err


def test_without_reuseport_uvicorns_workers_serve(tmp_path: Path) -> None:
    process, url = _serve(tmp_path, "--workers", "2", python=("-c", NO_REUSEPORT))
    try:
        pids = _pids(url, 1, process)
        assert pids and process.pid not in pids  # a worker process answers, not the parent
        with httpx.Client(base_url=url) as http:
            assert http.post("/v1/memories", json={"text": "Fallback note: the cache TTL "
                                                           "is 30 s"}).status_code == 201
            assert http.post("/v1/memories/search", json={"query": "cache TTL"}).json()[
                "hits"]
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=60)
