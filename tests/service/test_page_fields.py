"""What the web page asks of the API: compress's ``explain``, a context read without
compaction, and the page itself at ``/`` beside the API."""

from __future__ import annotations

import json

from _server import EXAMPLES, Server


def test_compress_explain_gives_every_fragment_its_fate(server: Server) -> None:
    text = (EXAMPLES / "coding_session.json").read_text("utf-8")
    with server.client() as http:
        plain = http.post("/v1/compress", json={"conversation": text, "keep_last": 4})
        explained = http.post("/v1/compress", json={"conversation": text, "keep_last": 4,
                                                     "explain": True})
    assert plain.status_code == explained.status_code == 200
    assert "explain" not in plain.json()
    data = explained.json()
    fragments = data["explain"]["fragments"]
    assert len(fragments) == data["fragments_total"]
    assert {f["status"] for f in fragments} >= {"kept", "summarized", "dropped"}
    for f in fragments:
        if f["status"] == "dropped":
            assert f["id"] in data["dropped"][f["reason"]]
    flow = data["explain"]["flow"]
    assert [s["key"] for s in flow["sections"]] == [s["key"] for s in data["summary"]["sections"]]
    assert flow["tail"]["messages"] == 4


def test_a_context_read_without_compaction_changes_nothing(server: Server) -> None:
    messages = json.loads((EXAMPLES / "coding_session.json").read_text("utf-8"))["messages"]
    with server.client() as http:
        assert http.post("/v1/sessions", json={"id": "s1", "max_tokens": 600,
                                               "token_ratio": 0.5}).status_code == 201
        assert http.post("/v1/sessions/s1/messages",
                         json={"messages": messages}).status_code == 200
        looked = http.get("/v1/sessions/s1/context", params={"compact": "false"}).json()
        assert looked["events"] == [] and len(looked["context"]) == len(messages)
        assert http.get("/v1/sessions/s1/events").json()["events"] == []
        compacted = http.get("/v1/sessions/s1/context").json()  # the default compacts
        assert compacted["events"] and len(compacted["context"]) < len(messages)


def test_the_page_is_served_at_the_root_beside_the_api(server: Server) -> None:
    with server.client() as http:
        page = http.get("/")
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        assert '<script type="module" src="app.js">' in page.text
        script = http.get("/compact.js")
        assert script.status_code == 200 and "javascript" in script.headers["content-type"]
        assert http.get("/healthz").json()["status"] == "ok"
        missing = http.get("/v1/no-such-route")
        assert missing.status_code == 404 and missing.json()["error"]["type"] == "NotFound"
