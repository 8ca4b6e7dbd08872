"""Browser tests: Debian's Chromium driven by Playwright's Python package.

No browser is downloaded: Playwright launches the Chromium at ``$PRECIS_CHROMIUM`` (default
``/usr/bin/chromium``, Debian's ``chromium`` package, which ``.ci/run`` installs). Without
it, or without the ``playwright`` package, these tests skip, unless
``PRECIS_BROWSER_TESTS=required`` (as in CI), where that is a failure.

Screenshots go to ``build/screenshots/`` (not committed; ``$PRECIS_SCREENSHOTS`` moves them).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _browser import Page, serve, unavailable

CHROMIUM = Path(os.environ.get("PRECIS_CHROMIUM", "/usr/bin/chromium"))
WIDTHS = (1280, 390)
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium, for one test module: Playwright's sync API runs an event loop in this
    thread while it is open, which other tests' ``anyio.run`` (the MCP client) refuse."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("the playwright package is not installed (pip install playwright; "
                     "never `playwright install`: the tests use Debian's chromium)")
    if not CHROMIUM.exists():
        unavailable(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(params=WIDTHS, ids=[f"{w}px" for w in WIDTHS])
def width(request: pytest.FixtureRequest) -> int:
    return int(request.param)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """``precis serve``'s app (the API and the page) on 127.0.0.1 and a free port, uvicorn
    in a thread, over a SQLite store in a temporary folder."""
    yield from serve(tmp_path / "service.sqlite3")


@pytest.fixture
def tab(browser: Any, server: str, width: int) -> Iterator[Page]:
    page = Page(browser, server, width)
    yield page
    page.close()
