"""The browser tests' helpers: a tab that watches for errors and leaks, a real server."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

SCREENSHOTS = Path(os.environ.get(
    "PRECIS_SCREENSHOTS", Path(__file__).resolve().parents[2] / "build" / "screenshots"))


def unavailable(why: str) -> None:
    """Skip, or fail where the browser tests are required (``PRECIS_BROWSER_TESTS``)."""
    if os.environ.get("PRECIS_BROWSER_TESTS") == "required":
        pytest.fail(f"browser tests are required but {why}")
    pytest.skip(why)


class Page:
    """A browser tab on the server, that fails the test on a script error or a request
    to any other host (the page must work offline), and takes screenshots."""

    def __init__(self, browser: Any, base: str, width: int) -> None:
        self.base = base
        self.width = width
        self.context = browser.new_context(viewport={"width": width, "height": 900})
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.outside: list[str] = []
        self.api_calls: list[tuple[str, str]] = []
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on("console", lambda msg: self.errors.append(msg.text)
                     if msg.type == "error" and "status of 4" not in msg.text else None)
        self.page.route("**/*", self._route)

    def _route(self, route: Any) -> None:
        url = route.request.url
        if url.startswith(self.base) or url.startswith("data:"):
            path = url[len(self.base):].split("?")[0]
            if path.startswith("/v1/") or path == "/v1":
                self.api_calls.append((route.request.method, path))
            route.continue_()
        else:
            self.outside.append(url)
            route.abort()

    def goto(self, path: str = "/") -> Any:
        self.page.goto(self.base + path)
        self.page.wait_for_selector("body[data-ready='1']")
        return self.page

    def shot(self, name: str, full_page: bool = True) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}-{self.width}.png"
        self.page.screenshot(path=str(path), full_page=full_page)
        return path

    def check(self) -> None:
        """No request left the server, no script failed, and every API call the page made
        is a route of the published API (no private endpoint)."""
        assert not self.outside, f"requests left the server: {self.outside}"
        assert not self.errors, f"errors in the page: {self.errors}"
        import re
        import urllib.request

        with urllib.request.urlopen(f"{self.base}/openapi.json") as answer:
            spec = json.load(answer)
        routes = [(method.upper(), re.compile(re.sub(r"\{[^}]+\}", "[^/]+", path) + "$"))
                  for path, methods in spec["paths"].items() for method in methods]
        for method, path in self.api_calls:
            assert any(m == method and r.match(path) for m, r in routes), (
                f"{method} {path} is not in /openapi.json")

    def close(self) -> None:
        self.context.close()


def serve(store: Path) -> Iterator[str]:
    try:
        import fastapi  # noqa: F401
    except ImportError:
        unavailable("precis[server] is not installed")
    import socket
    import time

    import uvicorn

    from precis.service._context import ServiceSettings
    from precis.service.app import create_app

    app = create_app(ServiceSettings(store=str(store), embedder="none"), mcp=False)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
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
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
