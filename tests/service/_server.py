"""A real precis service on 127.0.0.1 (uvicorn in a thread, a random port) over a real
SQLite store in a temporary directory; httpx talks to it. (A module of its own, not
conftest: ``from conftest import`` would find another folder's conftest.)"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

pytest.importorskip("fastapi", reason="precis[server] is not installed")
pytest.importorskip("uvicorn", reason="precis[server] is not installed")

import uvicorn

from precis.service._context import Limits, ServiceSettings
from precis.service.app import create_app

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@dataclass
class Server:
    url: str
    store: Path
    app: object

    def client(self, key: str | None = None, headers: dict[str, str] | None = None
               ) -> httpx.Client:
        sent = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers={**sent, **(headers or {})},
                            timeout=60)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(store: Path, limits: Limits | None = None, **settings: object
                 ) -> Iterator[Server]:
    app = create_app(ServiceSettings(store=str(store), embedder="none",
                                     limits=limits or Limits(), **settings))  # type: ignore[arg-type]
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield Server(f"http://127.0.0.1:{port}", store, app)
    finally:
        server.should_exit = True
        thread.join(timeout=30)
