"""The page itself: it loads from the package's files alone, offline, at both widths."""

from __future__ import annotations

import re

import pytest

from precis.web import STATIC_DIR


def test_every_asset_is_in_the_package() -> None:
    html = (STATIC_DIR / "index.html").read_text("utf-8")
    for name in re.findall(r'(?:href|src)="([^"#:]+)"', html):
        assert (STATIC_DIR / name).is_file(), name
    for path in STATIC_DIR.glob("*.js"):
        for name in re.findall(r'from "\./([^"]+)"', path.read_text("utf-8")):
            assert (STATIC_DIR / name).is_file(), f"{path.name} imports {name}"
    for path in STATIC_DIR.iterdir():
        assert "http://" not in path.read_text("utf-8").replace(
            "http://www.w3.org/2000/svg", ""), path.name
        assert "https://" not in path.read_text("utf-8"), path.name


def test_the_page_loads_offline_and_switches_views(tab) -> None:
    page = tab.goto("/")
    assert page.title() == "precis"
    assert page.is_visible("#view-compact") and not page.is_visible("#view-memory")
    tab.shot("shell-compact")
    page.click("nav a[data-view='memory']")
    page.wait_for_selector("#view-memory:not([hidden])")
    assert not page.is_visible("#view-compact")
    assert "active" in (page.get_attribute("nav a[data-view='memory']", "class") or "")
    # nothing wider than the window, at 390 px too
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the page is {overflow} px wider than the window"
    tab.check()


def test_compacting_nothing_says_what_is_missing(tab) -> None:
    page = tab.goto("/#compact")
    page.click("#compact-run")
    error = page.wait_for_selector("#compact-error:not([hidden])")
    assert "Choose a conversation file or paste one" in error.inner_text()
    tab.check()


def test_the_harness_catches_a_call_outside_the_api(tab) -> None:
    page = tab.goto("/")
    page.evaluate("fetch('/v1/private/thing').then(r => r.status)")
    with pytest.raises(AssertionError, match=r"GET /v1/private/thing is not in /openapi.json"):
        tab.check()
