"""Two `precis serve --store postgresql://…` processes over one real PostgreSQL: stateless
workers sharing one memory (what one writes the other finds at once, ingestion idempotent
across them, sessions continued on either), tenants kept apart by their keys."""

from __future__ import annotations

import os
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

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(url: str) -> tuple[subprocess.Popen[str], str]:
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    process = subprocess.Popen(
        [sys.executable, "-m", "precis.cli", "serve", "--port", str(port), "--store", url,
         "--embedder", "none"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"precis serve stopped: {process.stderr.read()}")  # type: ignore[union-attr]
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return process, base
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("precis serve did not start")


@pytest.fixture
def two_workers(postgres_url: str) -> Iterator[tuple[str, str, str]]:
    workers = [_serve(postgres_url) for _ in range(2)]
    try:
        yield postgres_url, workers[0][1], workers[1][1]
    finally:
        for process, _ in workers:
            process.terminate()
            process.wait(timeout=30)


def _key(url: str, tenant: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["keys", "--store", url, "create", "--tenant", tenant]) == 0
    return capsys.readouterr().out.strip()


def test_two_workers_share_one_memory_and_keep_tenants_apart(
        two_workers: tuple[str, str, str], capsys: pytest.CaptureFixture[str]) -> None:
    import json

    url, a, b = two_workers
    acme, globex = _key(url, "acme", capsys), _key(url, "globex", capsys)
    conversation = json.loads((EXAMPLES / "coding_session.json").read_text(encoding="utf-8"))
    with httpx.Client(base_url=a, headers={"Authorization": f"Bearer {acme}"}) as one, \
            httpx.Client(base_url=b, headers={"Authorization": f"Bearer {acme}"}) as two, \
            httpx.Client(base_url=b, headers={"Authorization": f"Bearer {globex}"}) as other:
        added = one.post("/v1/memories", json={"conversation": conversation,
                                               "user_id": "ana"})
        assert added.status_code == 201
        ids = [c["id"] for c in added.json()["added"]]
        assert len(ids) == 16  # 15 statements and the session's summary
        # the other worker finds it at once, and adds nothing when given it again
        hits = two.post("/v1/memories/search", json={
            "query": "导出接口超时的原因", "k": 3, "filters": {"user_id": "ana"}}).json()["hits"]
        assert hits and "导出接口" in hits[0]["card"]["content"] and hits[0]["sources"]
        assert two.post("/v1/memories", json={"conversation": conversation,
                                              "user_id": "ana"}).json()["added"] == []
        assert two.patch(f"/v1/memories/{ids[0]}", json={"content": "changed"}).status_code \
            == 200
        history = one.get(f"/v1/memories/{ids[0]}/history").json()["history"]
        assert [h["action"] for h in history] == ["created", "updated"]
        # a runtime session started on one worker goes on on the other
        assert one.post("/v1/sessions", json={"id": "run-1", "max_tokens": 4000}
                        ).status_code in (200, 201)
        assert two.post("/v1/sessions/run-1/messages", json={"messages": [
            {"role": "user", "content": "Deploy the billing service on Friday."}]}
                        ).status_code in (200, 201)
        context = one.get("/v1/sessions/run-1/context").json()
        assert "billing service" in json.dumps(context)
        # another tenant sees none of it, through either worker
        assert other.post("/v1/memories/search", json={"query": "导出接口超时的原因"}
                          ).json()["hits"] == []
        assert other.get(f"/v1/memories/{ids[1]}").status_code == 404
        assert other.get("/v1/memories").json()["total"] == 0
        assert one.get("/v1/memories").json()["total"] == 16
