"""The REST API against a real server: compress, inspect, memories, sessions, health, and
bad requests answered with a 4xx JSON error that names the problem."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
from _server import Server, start_server

from precis.compact import result_schema
from precis.service._context import Limits


def _error(response: Any, status: int, kind: str | None = None) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()["error"]
    assert set(body) == {"type", "message", "where"} and body["message"]
    if kind is not None:
        assert body["type"] == kind, body
    assert "Traceback" not in response.text
    return dict(body)


def test_compress_answers_the_clis_json_and_the_other_outputs(server: Server,
                                                              conversation: object) -> None:
    with server.client() as http:
        r = http.post("/v1/compress", json={"conversation": conversation, "budget": 400})
        assert r.status_code == 200
        result = r.json()
        jsonschema.validate(result, result_schema())
        assert result["compressed_tokens"] <= 400 < result["original_tokens"]
        assert result["summary"]["sections"] and result["dropped"]
        # the layout the library and the CLI choose: the example is an agent session (tool
        # calls), so a handover; the service forced a chat's sections before
        assert result["template"] == "claude"
        assert http.post("/v1/compress", json={"conversation": conversation, "budget": 400,
                                               "template": "sections"}).json()["template"] \
            == "sections"
        # every summary line cites fragments; the page can show kept / summarized / dropped
        items = [i for s in result["summary"]["sections"] for i in s["items"]]
        assert items and all(i["sources"] for i in items)
        r = http.post("/v1/compress", json={"conversation": conversation, "budget": 400,
                                            "output": "openai"})
        messages = r.json()
        assert messages[0]["role"] == "system" and messages == result["messages"]
        r = http.post("/v1/compress", json={"conversation": conversation, "output": "markdown"})
        assert r.headers["content-type"].startswith("text/markdown")
        assert r.text.startswith("# precis compaction")
        r = http.post("/v1/compress", json={"conversation": conversation, "output": "anthropic"})
        assert r.json()["system"].startswith("You are a careful coding agent")
        # a transcript sent as text
        r = http.post("/v1/compress", json={"conversation": "User: hi\nAssistant: hello"})
        assert r.status_code == 200 and r.json()["input_messages"] == 2


def test_inspect_gives_fragments_with_their_analysis(server: Server, conversation: object
                                                     ) -> None:
    with server.client() as http:
        report = http.post("/v1/inspect", json={"conversation": conversation}).json()
    assert report["counts"]["messages"] == 18
    fragment = report["fragments"][0]
    assert fragment["id"] == "S1" and {"type", "level", "why"} <= set(fragment)


def test_a_collection_is_listed_to_pick_one(server: Server) -> None:
    """issue 22: the page lists a file of several conversations to choose one."""
    lines = [{"id": "a", "messages": [{"role": "user", "content": "Count the orders per city"},
                                      {"role": "assistant", "content": "There are 3 cities."}]},
             {"messages": [{"role": "system", "content": "Be terse."},
                           {"role": "user", "content": "什么是二分查找？"},
                           {"role": "assistant", "content": "每次把区间减半。"}]}]
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    with server.client() as http:
        r = http.post("/v1/compress", json={"conversation": text})
        e = _error(r, 400, "SelectionError")
        assert "2 conversations" in e["message"]
        assert "POST /v1/inspect/conversations lists them" in e["message"]
        listing = http.post("/v1/inspect/conversations", json={
            "conversation": text, "tokenizers": ["estimate", "estimate:cl100k"]}).json()
        single = http.post("/v1/inspect/conversations", json={
            "conversation": lines[1]["messages"]}).json()
        _error(http.post("/v1/inspect/conversations", json={
            "conversation": text, "tokenizers": ["hf:/etc/passwd"]}), 400, "ConfigError")
        _error(http.post("/v1/inspect/conversations", json={
            "conversation": text, "pick": 1}), 422, "ValidationError")
        picked = http.post("/v1/compress", json={"conversation": text, "pick": 1}).json()
    from precis.model import Message
    from precis.tokens import get_counter

    rows = listing["conversations"]
    assert [(r["index"], r["id"], r["messages"], r["preview"]) for r in rows] == [
        (0, "a", 2, "Count the orders per city"), (1, None, 3, "什么是二分查找？")]
    for row, line in zip(rows, lines):
        messages = [Message.of(m["role"], m["content"]) for m in line["messages"]]
        want = {s: get_counter(s).count_messages(messages) for s in ("estimate", "estimate:cl100k")}
        assert row["tokens"] == want and all(n > 0 for n in want.values())
    assert listing["format"] == "openai" and len(single["conversations"]) == 1
    assert single["conversations"][0]["tokens"] == {"estimate": rows[1]["tokens"]["estimate"]}
    assert picked["source"]["pick"] == 1 and picked["input_messages"] == 3


def test_bad_requests_get_a_4xx_json_error_naming_the_problem(tmp_path: Path,
                                                              conversation: object) -> None:
    for server in start_server(tmp_path / "s.sqlite3",
                               Limits(max_body_bytes=20_000, max_messages=10)):
        with server.client() as http:
            e = _error(http.post("/v1/compress", json={"conversation": conversation,
                                                       "budget": 0}), 422, "ValidationError")
            assert e["where"] == "budget"
            e = _error(http.post("/v1/compress", json={"conversation": [
                {"role": "user", "content": 5}]}), 400, "FormatError")
            assert "message 0" in e["message"]
            _error(http.post("/v1/compress", json={"conversation": "/etc/passwd"}), 400,
                   "UnknownFormatError")  # a string is text, never a server path
            e = _error(http.post("/v1/compress", json={"conversation": [
                {"role": "user", "content": "hi"}], "tokenizer": "hf:/etc/passwd"}), 400,
                "ConfigError")
            assert e["where"] == "tokenizer"
            _error(http.post("/v1/compress", json={"conversation": [
                {"role": "user", "content": "hi"}], "template": "/etc/passwd"}), 400,
                "ConfigError")
            e = _error(http.post("/v1/compress", json={"conversation": [], "levle": "x"}),
                       422, "ValidationError")
            assert "levle" in e["message"]
            _error(http.post("/v1/compress", content=b"{not json",
                             headers={"content-type": "application/json"}), 422)
            _error(http.post("/v1/compress", json={"conversation": [
                {"role": "user", "content": f"m{i}"} for i in range(11)]}), 413,
                "InputTooLargeError")
            _error(http.post("/v1/compress", json={"conversation": "x" * 30_000}), 413,
                   "PayloadTooLarge")

            def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
                yield b'{"conversation": "'
                for _ in range(30):
                    yield b"y" * 1000
                yield b'"}'

            _error(http.post("/v1/compress", content=chunks(),
                             headers={"content-type": "application/json"}), 413,
                   "PayloadTooLarge")
            _error(http.get("/v1/nothing"), 404, "NotFound")
            _error(http.put("/v1/compress"), 405, "MethodNotAllowed")
            e = _error(http.get("/v1/memories/m_none"), 404, "NotFoundError")
            assert e["where"] is None  # never the server's store path
            _error(http.get("/v1/memories", params={"limit": 0}), 422)
            _error(http.post("/v1/memories/search", json={"query": ""}), 422)
            _error(http.post("/v1/memories/search", json={
                "query": "x", "filters": {"since": "yesterday"}}), 400, "QueryError")
            _error(http.post("/v1/memories", json={"text": "a", "messages": []}), 400)
            _error(http.delete("/v1/memories"), 400, "InputError")
            _error(http.patch("/v1/memories/m_x", json={}), 400)
            _error(http.post("/v1/sessions", json={"max_tokens": 10}), 400, "ConfigError")


def test_memories_add_list_get_history_patch_delete(server: Server, conversation: object
                                                    ) -> None:
    with server.client() as http:
        r = http.post("/v1/memories", json={"conversation": conversation, "user_id": "ana",
                                            "metadata": {"app": "shop"}})
        assert r.status_code == 201
        added = r.json()
        # 15 cards of its statements and the session's summary card
        assert added["extracted"] == len(added["added"]) == 16
        assert [c["id"] for c in added["added"] if c["type"] == "summary"] == [
            added["summary_id"]]
        assert all(c["metadata"]["app"] == "shop" and c["user_id"] == "ana"
                   for c in added["added"])
        again = http.post("/v1/memories", json={"conversation": conversation,
                                                "user_id": "ana"}).json()
        assert again["added"] == again["updated"] == []  # idempotent
        r = http.post("/v1/memories", json={"text": "Bo prefers PostgreSQL over MySQL",
                                            "user_id": "bo"})
        bo = r.json()["added"]
        assert [c["content"] for c in bo] == ["Bo prefers PostgreSQL over MySQL"]
        page = http.get("/v1/memories", params={"user_id": "ana", "limit": 10}).json()
        assert len(page["memories"]) == 10 and page["total"] == 16 and page["next_cursor"]
        rest = http.get("/v1/memories", params={"user_id": "ana", "limit": 10,
                                                "cursor": page["next_cursor"]}).json()
        assert len(rest["memories"]) == 6 and rest["next_cursor"] is None
        ids = [c["id"] for c in page["memories"] + rest["memories"]]
        assert len(set(ids)) == 16
        types = http.get("/v1/memories", params=[("type", "decision"), ("type", "fact")]
                         ).json()["memories"]
        assert types and {c["type"] for c in types} <= {"decision", "fact"}
        card = http.get(f"/v1/memories/{ids[0]}", params={"context": 1}).json()
        assert card["memory"]["id"] == ids[0] and card["sources"]
        assert all(s["index"] in card["memory"]["message_indexes"] for s in card["sources"])
        patched = http.patch(f"/v1/memories/{ids[0]}", json={"content": "changed"}).json()
        assert patched["memory"]["content"] == "changed"
        history = http.get(f"/v1/memories/{ids[0]}/history").json()["history"]
        assert [h["action"] for h in history] == ["created", "updated"]
        assert history[0]["memory"]["content"] != "changed"
        assert http.delete(f"/v1/memories/{ids[0]}").json() == {"deleted": [ids[0]]}
        _error(http.get(f"/v1/memories/{ids[0]}"), 404)
        gone = http.delete("/v1/memories", params={"user_id": "ana"}).json()["deleted"]
        assert len(gone) == 15
        assert http.get("/v1/memories").json()["total"] == 1  # bo's


def test_a_sessions_summary_card_is_added_updated_filtered_and_found(
        server: Server, conversation: object) -> None:
    from tests.events._sessions import coding_session

    lines = [json.dumps(x) for x in coding_session().lines]
    early, grown = "\n".join(lines[:20]), "\n".join(lines)
    with server.client() as http:
        off = http.post("/v1/memories", json={"conversation": early, "summary": False}).json()
        assert off["summary_id"] is None and "summary" not in {c["type"] for c in off["added"]}
        on = http.post("/v1/memories", json={"conversation": early}).json()
        assert [c["type"] for c in on["added"]] == ["summary"] and on["summary_id"]
        assert "3f2a9c1" in on["added"][0]["content"]
        later = http.post("/v1/memories", json={"conversation": grown}).json()
        assert [c["id"] for c in later["updated"]] == [on["summary_id"]]
        assert "receipt" in later["updated"][0]["content"] and later["added"]
        listed = http.get("/v1/memories", params={"type": "summary"}).json()
        assert [c["id"] for c in listed["memories"]] == [on["summary_id"]]
        history = http.get(f"/v1/memories/{on['summary_id']}/history").json()["history"]
        assert [h["action"] for h in history] == ["created", "updated"]
        found = http.post("/v1/memories/search", json={
            "query": "what did we do in the shop-abc session?", "k": 3}).json()["hits"]
        assert found[0]["id"] == on["summary_id"] and found[0]["sources"]
        assert found[0]["sources"][0]["text"].startswith("Work on bead shop-abc")
        # an older copy of the session added again leaves the summary of the newer one
        assert http.post("/v1/memories", json={"conversation": early}).json()["updated"] == []
        assert "receipt" in http.get(f"/v1/memories/{on['summary_id']}").json()[
            "memory"]["content"]
        _error(http.post("/v1/memories", json={"conversation": early, "summary": "maybe"}),
               422)


def test_search_finds_memories_with_their_sources(server: Server, conversation: object
                                                  ) -> None:
    with server.client() as http:
        http.post("/v1/memories", json={"conversation": conversation, "user_id": "ana"})
        result = http.post("/v1/memories/search", json={
            "query": "导出接口超时的原因", "k": 3, "context": 1,
            "filters": {"user_id": "ana"}}).json()
        top = result["hits"][0]
        assert "导出接口" in top["card"]["content"] and top["sources"] and top["why"]
        none = http.post("/v1/memories/search", json={
            "query": "导出接口超时的原因", "filters": {"user_id": "nobody"}}).json()
        assert none["hits"] == []


def test_sessions_keep_context_memory_in_the_store(server: Server) -> None:
    with server.client() as http:
        created = http.post("/v1/sessions", json={"id": "run-1", "max_tokens": 400,
                                                  "msg_threshold": 20})
        assert created.status_code == 201 and created.json()["budget"] == 300
        _error(http.post("/v1/sessions", json={"id": "run-1"}), 409, "ConflictError")
        messages = []
        for i in range(15):
            messages.append({"role": "user", "content": f"step {i}: check the export logs " * 4})
            messages.append({"role": "assistant", "content": f"done {i}, the job timed out " * 4})
        state = http.post("/v1/sessions/run-1/messages", json={"messages": messages}).json()
        assert state["messages"] == 30 and state["over"]
        context = http.get("/v1/sessions/run-1/context").json()
        assert context["tokens"] <= 300 and context["events"]
        assert context["context"][0]["role"] in ("user", "system", "assistant")
        again = http.get("/v1/sessions/run-1/context", params={"format": "anthropic"}).json()
        assert again["events"] == [] and "messages" in again["context"]
        events = http.get("/v1/sessions/run-1/events").json()["events"]
        assert len(events) == len(context["events"])
        info = http.get("/v1/sessions/run-1").json()
        assert info["original_messages"] == 30 and info["offloads"]
        offload = http.get(f"/v1/sessions/run-1/offloads/{info['offloads'][0]}").json()
        assert "step 0: check the export logs" in offload["text"] and offload["messages"]
        _error(http.get("/v1/sessions/run-1/offloads/ctx-000000000000"), 404)
        _error(http.post("/v1/sessions/run-1/messages", json={"messages": [{"role": 7}]}), 400)
        assert http.get("/v1/sessions").json() == {"sessions": ["run-1"]}
        assert http.delete("/v1/sessions/run-1").json() == {"deleted": "run-1"}
        _error(http.get("/v1/sessions/run-1/context"), 404)
        _error(http.delete("/v1/sessions/run-1"), 404)


def test_health_metrics_openapi_and_an_offline_docs_page(server: Server,
                                                         conversation: object) -> None:
    with server.client() as http:
        assert http.get("/healthz").json()["status"] == "ok"
        assert http.get("/readyz").json() == {"status": "ready"}
        http.post("/v1/compress", json={"conversation": conversation, "budget": 300})
        metrics = http.get("/metrics").text
        assert 'precis_requests_total{route="/v1/compress",method="POST",status="200"} 1' \
            in metrics
        assert "precis_compactions_total 1" in metrics
        saved = float(metrics.split("\nprecis_tokens_saved_total ")[1].split()[0])
        assert saved > 900
        spec = http.get("/openapi.json").json()
        assert {"/v1/compress", "/v1/memories/search", "/v1/sessions/{session_id}/context"} \
            <= set(spec["paths"])
        page = http.get("/docs").text
        assert "/v1/memories/search" in page and "<script" not in page
        assert "https://" not in page and "http://cdn" not in page
        json.dumps(spec)  # plain JSON
