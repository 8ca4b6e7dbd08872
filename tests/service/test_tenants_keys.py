"""Keys and tenants through the API: two tenants of one store, every endpoint tried with
the other tenant's ids and filters: no cross-tenant read, write or delete."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from _server import Server, start_server

from precis.cli import main
from precis.keys import create_key
from precis.memory.store import SQLiteStore
from precis.service._context import Limits


@pytest.fixture
def keyed(tmp_path: Path) -> Iterator[tuple[Server, str, str]]:
    path = tmp_path / "keyed.sqlite3"
    with SQLiteStore(path) as store:
        key_a, _ = create_key(store, "alpha", "a")
        key_b, _ = create_key(store, "beta", "b")
    for server in start_server(path, Limits(rate=1000, burst=1000)):
        yield server, key_a, key_b


def test_a_store_with_keys_refuses_calls_without_a_valid_one(keyed: tuple[Server, str, str]
                                                            ) -> None:
    server, key_a, _ = keyed
    with server.client() as anonymous:
        for method, path in (("GET", "/v1/memories"), ("POST", "/v1/memories/search"),
                             ("GET", "/v1/sessions"), ("POST", "/v1/compress")):
            r = anonymous.request(method, path, json={})
            assert r.status_code == 401 and r.json()["error"]["type"] == "Unauthorized"
        assert anonymous.get("/healthz").status_code == 200
        r = anonymous.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert r.status_code == 401
    with server.client(key_a + "x") as wrong:
        assert wrong.get("/v1/memories").status_code == 401
    with server.client(headers={"X-API-Key": key_a}) as by_header:
        assert by_header.get("/v1/memories").status_code == 200
    with SQLiteStore(server.store) as store:
        store.revoke_key(key_a.split("_")[1])
    with server.client(key_a) as revoked:
        assert revoked.get("/v1/memories").status_code == 401


def test_two_tenants_never_see_each_others_data(keyed: tuple[Server, str, str],
                                               conversation: object) -> None:
    server, key_a, key_b = keyed
    with server.client(key_a) as a, server.client(key_b) as b:
        a_cards = a.post("/v1/memories", json={"conversation": conversation,
                                               "user_id": "ana"}).json()["added"]
        a_text = a.post("/v1/memories", json={"text": "Alpha's secret: the vault code is 4711",
                                              "user_id": "ana"}).json()["added"][0]
        assert len(a_cards) == 16  # 15 statements and the session's summary
        a.post("/v1/sessions", json={"id": "shared-name", "max_tokens": 400,
                                     "msg_threshold": 4})
        a.post("/v1/sessions/shared-name/messages", json={"messages": [
            {"role": "user", "content": f"alpha step {i} " * 40} for i in range(8)]})
        a_context = a.get("/v1/sessions/shared-name/context").json()
        offload = a.get("/v1/sessions/shared-name").json()["offloads"][0]
        assert a_context["events"]

        # b reads nothing of a's, by id, filter, search or listing
        secret = a_text["id"]
        for path in (f"/v1/memories/{secret}", f"/v1/memories/{secret}/history",
                     "/v1/sessions/shared-name", "/v1/sessions/shared-name/events",
                     "/v1/sessions/shared-name/context",
                     f"/v1/sessions/shared-name/offloads/{offload}"):
            r = b.get(path)
            assert r.status_code == 404, (path, r.text)
            assert "4711" not in r.text and "alpha step" not in r.text
        assert b.get("/v1/memories", params={"user_id": "ana"}).json() == {
            "memories": [], "next_cursor": None, "total": 0}
        assert b.get("/v1/memories").json()["total"] == 0
        assert b.get("/v1/sessions").json() == {"sessions": []}
        for query in ("vault code", "导出接口超时的原因", "alpha"):
            found = b.post("/v1/memories/search", json={"query": query, "k": 50}).json()
            assert found["hits"] == []
        # b writes and deletes nothing of a's
        assert b.patch(f"/v1/memories/{secret}", json={"content": "b was here"}
                       ).status_code == 404
        assert b.delete(f"/v1/memories/{secret}").status_code == 404
        assert b.delete("/v1/memories", params={"user_id": "ana"}).json() == {"deleted": []}
        assert b.post("/v1/sessions/shared-name/messages", json={"messages": [
            {"role": "user", "content": "b"}]}).status_code == 404
        assert b.delete("/v1/sessions/shared-name").status_code == 404
        assert b.patch(f"/v1/memories/{a_cards[0]['id']}",
                       json={"superseded_by": secret}).status_code == 404
        # the same ids in b are b's own
        b_cards = b.post("/v1/memories", json={"conversation": conversation}).json()["added"]
        assert {c["id"] for c in b_cards} == {c["id"] for c in a_cards}
        assert b.post("/v1/sessions", json={"id": "shared-name"}).status_code == 201
        b.delete(f"/v1/memories/{b_cards[0]['id']}")
        b.delete("/v1/sessions/shared-name")
        # a's data is all there, unchanged
        assert a.get(f"/v1/memories/{secret}").json()["memory"]["content"] == a_text["content"]
        assert a.get(f"/v1/memories/{b_cards[0]['id']}").status_code == 200
        # the conversation's 15 cards, its summary card and the text's card
        assert a.get("/v1/memories").json()["total"] == 17
        assert a.get("/v1/sessions/shared-name").json()["original_messages"] == 8
        hits = a.post("/v1/memories/search", json={"query": "vault code"}).json()["hits"]
        assert hits[0]["id"] == secret


def test_rate_limit_per_key(tmp_path: Path) -> None:
    for server in start_server(tmp_path / "s.sqlite3", Limits(rate=0.5, burst=3)):
        with server.client() as http:
            codes = [http.get("/v1/sessions").status_code for _ in range(5)]
            assert codes[:3] == [200, 200, 200] and codes[3:] == [429, 429]
            r = http.get("/v1/sessions")
            assert r.json()["error"]["type"] == "TooManyRequests"
            assert int(r.headers["retry-after"]) >= 1


def test_serve_refuses_to_listen_beyond_loopback_without_keys(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = str(tmp_path / "s.sqlite3")
    assert main(["serve", "--host", "0.0.0.0", "--store", store]) == 2
    err = capsys.readouterr().err
    assert "without API keys" in err and "precis keys create" in err
