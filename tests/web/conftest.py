"""Browser tests: Debian's Chromium driven by Playwright's Python package.

No browser is downloaded: Playwright launches the Chromium at ``$PRECIS_CHROMIUM`` (default
``/usr/bin/chromium``, Debian's ``chromium`` package, which ``.ci/run`` installs). Without
it, or without the ``playwright`` package, these tests skip, unless
``PRECIS_BROWSER_TESTS=required`` (as in CI), where that is a failure.

Screenshots go to ``build/screenshots/`` (not committed; ``$PRECIS_SCREENSHOTS`` moves them).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from precis.web import STATIC_DIR

CHROMIUM = Path(os.environ.get("PRECIS_CHROMIUM", "/usr/bin/chromium"))
SCREENSHOTS = Path(os.environ.get(
    "PRECIS_SCREENSHOTS", Path(__file__).resolve().parents[2] / "build" / "screenshots"))
WIDTHS = (1280, 390)
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def _unavailable(why: str) -> None:
    if os.environ.get("PRECIS_BROWSER_TESTS") == "required":
        pytest.fail(f"browser tests are required but {why}")
    pytest.skip(why)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is not installed (pip install playwright; "
                     "never `playwright install`: the tests use Debian's chromium)")
    if not CHROMIUM.exists():
        _unavailable(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


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
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on("console", lambda msg: self.errors.append(msg.text)
                     if msg.type == "error" and "status of 4" not in msg.text else None)
        self.page.route("**/*", self._route)

    def _route(self, route: Any) -> None:
        url = route.request.url
        if url.startswith(self.base) or url.startswith("data:"):
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
        assert not self.outside, f"requests left the server: {self.outside}"
        assert not self.errors, f"errors in the page: {self.errors}"

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def static_server() -> Iterator[str]:
    """The page's files over HTTP on 127.0.0.1 and a free port (the page without the API)."""
    handler = partial(_Quiet, directory=str(STATIC_DIR))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(params=WIDTHS, ids=[f"{w}px" for w in WIDTHS])
def width(request: pytest.FixtureRequest) -> int:
    return int(request.param)


@pytest.fixture
def tab(browser: Any, static_server: str, width: int) -> Iterator[Page]:
    page = Page(browser, static_server, width)
    yield page
    page.close()
