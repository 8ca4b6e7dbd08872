"""The page against a real server: compaction with citations, memory search in Chinese and
English, a session's events, and the key prompt of a server with keys."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from _browser import Page, serve

from precis.keys import create_key
from precis.memory.store import SQLiteStore

ROOT = Path(__file__).resolve().parents[2]
CODING_ZH = ROOT / "examples" / "coding_session.json"
CODING_EN = ROOT / "tests" / "fixtures" / "compact" / "coding_en.json"


def test_compaction_view_links_citations_to_their_sources(tab, server) -> None:
    page = tab.goto("/#compact")
    page.set_input_files("#compact-file", str(CODING_ZH))
    page.fill("#compact-keep-last", "4")
    page.click("#compact-run")
    page.wait_for_selector("#compact-out:not([hidden])")
    # the same answer the API gives any client
    expected = httpx.post(f"{server}/v1/compress", json={
        "conversation": CODING_ZH.read_text("utf-8"), "keep_last": 4, "explain": True},
        timeout=60).json()
    fates = {f["id"]: f for f in expected["explain"]["fragments"]}
    cited = [(s["key"], i, item) for s in expected["summary"]["sections"]
             for i, item in enumerate(s["items"])]
    key, i, item = cited[0]
    sid = item["sources"][0]
    # every citation of the summary is a link; clicking one highlights its fragment
    assert page.locator("#compact-result a.cite").count() == sum(
        len(it["sources"]) for _, _, it in cited) + sum(
        len(it["sources"]) for it in expected["summary"]["short"])
    page.locator(f"#line-{key}-{i} a.cite[data-id='{sid}']").click()
    source = page.locator(f"#src-{sid}")
    source.wait_for()
    assert "highlight" in (source.get_attribute("class") or "")
    assert fates[sid]["text"] in source.inner_text()
    assert source.is_visible()
    # scrolled to (smoothly: wait for it to come into the window)
    page.wait_for_function(
        "id => { const r = document.getElementById(id).getBoundingClientRect();"
        " return r.top >= 0 && r.top < window.innerHeight; }", arg=f"src-{sid}", timeout=5000)
    # its fate names the line it went into, and a dropped fragment says why
    assert "summarized" in source.locator(".fate").inner_text()
    for reason, words in (("budget", "no room in the budget"), ("chitchat", "small talk")):
        dropped = next(f for f in fates.values()
                       if f["status"] == "dropped" and f["reason"] == reason)
        fate = page.locator(f"#src-{dropped['id']} .fate").inner_text()
        assert "dropped" in fate and words in fate, fate
    # the token bars: one per section, the verbatim tail and what was dropped
    bars = page.locator("#compact-bars .bar-row")
    flow = expected["explain"]["flow"]
    assert bars.count() == len(flow["sections"]) + 2
    tail = bars.nth(len(flow["sections"])).inner_text()
    before, after = flow["tail"]["before"], flow["tail"]["after"]
    assert "Recent messages" in tail and f"{before:,} → {after:,}" in tail
    tab.shot("compact", full_page=False)
    source.scroll_into_view_if_needed()
    tab.shot("compact-source", full_page=False)
    tab.check()


def _ingest(server: str) -> None:
    for path, user in ((CODING_ZH, "ana"), (CODING_EN, "bo")):
        r = httpx.post(f"{server}/v1/memories", json={
            "conversation": path.read_text("utf-8"), "user_id": user}, timeout=60)
        assert r.status_code == 201, r.text


def test_memory_search_in_chinese_and_english(tab, server) -> None:
    _ingest(server)
    page = tab.goto("/#memory")
    page.fill("#memory-query", "导出接口超时的原因")
    page.click("#memory-form button[type=submit]")
    first = page.locator("#memory-hits .hit").first
    first.wait_for()
    assert "导出" in first.inner_text() and "bm25" in first.inner_text()
    tab.shot("memory-zh")
    first.locator(".hit-open").click()
    page.wait_for_selector("#memory-card .sources")
    card = page.inner_text("#memory-card")
    assert "(source)" in card and "History" in card and "created" in card

    page.fill("#memory-query", "connection pool")
    page.click("#memory-form details summary")  # the filters
    page.fill("#memory-user", "bo")
    page.click("#memory-form button[type=submit]")
    page.wait_for_selector("#memory-hits-title:has-text('connection pool')")
    hits = page.locator("#memory-hits .hit")
    assert hits.count() >= 1
    assert "pool" in hits.first.inner_text().lower()
    assert all("user bo" in hits.nth(i).inner_text() for i in range(hits.count()))
    # the card of the earlier search is not left beside these hits
    assert "Choose a hit" in page.inner_text("#memory-card")
    tab.shot("memory-en")
    tab.check()


def test_session_summaries_by_their_type(tab, server) -> None:
    _ingest(server)
    page = tab.goto("/#memory")
    page.click("#memory-form details summary")  # the filters
    # the types are the API's own: every one the search takes, the summary among them
    page.wait_for_selector("#memory-type option[value='summary']", state="attached")
    spec = httpx.get(f"{server}/openapi.json").json()
    types = spec["components"]["schemas"]["SearchFilters"]["properties"]["types"]["items"]
    offered = page.eval_on_selector_all("#memory-type option", "os => os.map(o => o.value)")
    assert offered == ["", *types["enum"]]
    page.select_option("#memory-type", "summary")
    page.click("#memory-list")
    page.wait_for_selector("#memory-hits-title:has-text('of 2 cards')")
    hits = page.locator("#memory-hits .hit")
    assert hits.count() == 2  # one per session: the Chinese and the English one
    texts = sorted(hits.nth(i).locator(".content").inner_text() for i in range(2))
    assert "Primary Request and Intent" in texts[0] and "主要请求与意图" in texts[1]
    cards = httpx.get(f"{server}/v1/memories", params={"type": "summary"}).json()["memories"]
    # a line per section, as written
    assert [t.splitlines() for t in texts] == sorted(c["content"].splitlines() for c in cards)
    tab.shot("memory-summaries")
    tab.check()


def test_deleting_a_card_from_the_page(tab, server) -> None:
    _ingest(server)
    page = tab.goto("/#memory")
    page.click("#memory-list")
    first = page.locator("#memory-hits .hit").first
    first.wait_for()
    card_id = first.get_attribute("data-id")
    first.locator(".hit-open").click()
    page.wait_for_selector("#memory-card .danger")
    page.once("dialog", lambda d: d.accept())
    page.click("#memory-card .danger")
    page.wait_for_selector(f"#memory-card:has-text('Card {card_id} deleted')")
    assert httpx.get(f"{server}/v1/memories/{card_id}").status_code == 404
    tab.check()


def _session(server: str) -> str:
    with httpx.Client(base_url=server, timeout=60) as http:
        r = http.post("/v1/sessions", json={"id": "demo", "max_tokens": 1200,
                                             "token_ratio": 0.5, "msg_threshold": 100,
                                             "last_keep": 4, "large_payload": 600,
                                             "preview_chars": 80})
        assert r.status_code == 201, r.text
        messages = json.loads(CODING_EN.read_text("utf-8"))["messages"]
        r = http.post("/v1/sessions/demo/messages", json={"messages": messages})
        assert r.status_code == 200, r.text
        r = http.get("/v1/sessions/demo/context")
        assert r.status_code == 200 and r.json()["events"], r.text
    return "demo"


def test_a_sessions_events_context_and_offloads(tab, server) -> None:
    _session(server)
    events = httpx.get(f"{server}/v1/sessions/demo/events").json()["events"]
    page = tab.goto("/#sessions")
    page.wait_for_selector("#session-select option[value='demo']", state="attached")
    page.select_option("#session-select", "demo")
    page.wait_for_selector("#session-out:not([hidden])")
    assert page.locator("#session-chart svg g.event").count() == len(events)
    rows = page.locator("table.events tbody tr")
    assert rows.count() == len(events)
    assert events[0]["strategy"] in rows.first.inner_text()
    # the page's look changes nothing: same events after it
    assert httpx.get(f"{server}/v1/sessions/demo/events").json()["events"] == events
    offloads = [o for e in events for o in e.get("offload_ids", [])]
    if offloads:
        box = page.locator(f"#offload-{offloads[0]}")
        box.locator("button").click()
        box.locator(".offload-body .msg, .offload-body pre").first.wait_for()
    tab.shot("sessions")
    tab.check()


def test_a_server_with_keys_asks_for_one(browser, tmp_path: Path, width: int) -> None:
    store = tmp_path / "keyed.sqlite3"
    with SQLiteStore(store) as opened:
        key, _ = create_key(opened, "acme")
    running = serve(store)
    url = next(running)
    tab = Page(browser, url, width)
    try:
        r = httpx.post(f"{url}/v1/memories", headers={"Authorization": f"Bearer {key}"},
                       json={"conversation": CODING_EN.read_text("utf-8")}, timeout=60)
        assert r.status_code == 201, r.text
        page = tab.goto("/#memory")
        page.click("#memory-list")
        dialog = page.wait_for_selector("#key-dialog[open]")
        tab.shot("key")
        page.fill("#key-input", "not-a-key")
        page.click("#key-form button[value=ok]")
        page.wait_for_selector("#key-error:has-text('refused')")
        assert dialog.is_visible()
        page.fill("#key-input", key)
        page.click("#key-form button[value=ok]")
        page.wait_for_selector("#memory-hits .hit")
        assert not dialog.is_visible()
        assert f"of {len(r.json()['added'])} cards" in page.inner_text("#memory-hits-title")
        assert page.is_visible("#key-button")
        # forgetting the key: the next call asks again
        page.click("#key-button")
        page.click("#key-forget")
        assert page.evaluate("sessionStorage.length") == 0
        page.click("#memory-list")
        page.wait_for_selector("#key-dialog[open]")
        tab.check()
    finally:
        tab.close()
        running.close()
