"""MCP through the SDK's own client: over streamable HTTP (``/mcp`` of a real server, with
an API key) and over stdio (``precis mcp`` as a subprocess)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp", reason="precis[server] is not installed")

from _server import EXAMPLES, Server, start_server
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from precis.keys import create_key
from precis.memory import Filters
from precis.memory.store import SQLiteStore

TOOLS = {"compress_context", "add_memory", "search_memory", "get_memory", "list_memories",
         "delete_memory", "context_reload", "list_conversations"}


async def _exercise(client: Client) -> dict[str, Any]:
    """Every tool once, as a model would call them; what they answered."""
    listed = {t.name: t for t in (await client.list_tools()).tools}
    assert set(listed) == TOOLS
    for tool in listed.values():
        assert len(tool.description or "") > 40 and tool.input_schema["type"] == "object"
        assert "ctx" not in tool.input_schema["properties"]
    assert listed["search_memory"].input_schema["required"] == ["query"]

    async def call(name: str, **arguments: Any) -> Any:
        result = await client.call_tool(name, arguments)
        text = result.content[0].text  # type: ignore[union-attr]
        return ("error", text.split(": ", 1)[1]) if result.is_error else json.loads(text)

    out: dict[str, Any] = {}
    conversation = json.loads((EXAMPLES / "coding_session.json").read_text(encoding="utf-8"))
    compressed = await call("compress_context", conversation=conversation, budget=300,
                            output="openai")
    assert compressed[0]["role"] == "system" and len(compressed) >= 2
    as_json = await call("compress_context", conversation=conversation, budget=300)
    assert as_json["template"] == "claude"  # the layout an agent session calls for
    several = [conversation, [{"role": "user", "content": "Ping?"},
                              {"role": "assistant", "content": "Pong."}]]
    listing = await call("list_conversations", conversation=several)
    assert [(r["index"], r["messages"], r["preview"]) for r in listing["conversations"]][1] == (
        1, 2, "Ping?")
    assert listing["conversations"][0]["tokens"]["estimate"] > 100
    picked = await call("compress_context", conversation=several, pick=1, output="openai")
    assert [m["content"] for m in picked] == ["Ping?", "Pong."]
    added = await call("add_memory", text="Ana's staging database is db-stage-04",
                       user_id="ana")
    card = added["added"][0]
    out["found"] = await call("search_memory", query="which staging database", k=3)
    assert (await call("get_memory", id=card["id"]))["memory"]["content"] == card["content"]
    listed_cards = await call("list_memories", user_id="ana")
    assert [c["id"] for c in listed_cards["memories"]] == [card["id"]]
    out["missing"] = await call("get_memory", id="m_missing")
    out["bad"] = await call("search_memory", query="")
    assert (await call("delete_memory", id=card["id"])) == {"deleted": [card["id"]]}
    out["reload"] = await call("context_reload", session_id="nope", offload_id="ctx-1")
    # a conversation gets its session summary card, found by a question about the session
    assert listed["add_memory"].input_schema["properties"]["summary"]
    session = await call("add_memory", conversation=conversation, user_id="bo")
    out["summary"] = [c for c in session["added"] if c["type"] == "summary"]
    out["asked"] = await call("search_memory", query="导出接口那个会话做到哪了？", k=1,
                              filters={"user_id": "bo"})
    out["card"] = card
    return out


def _check(out: dict[str, Any]) -> None:
    assert out["found"]["hits"][0]["id"] == out["card"]["id"]
    assert [c["id"] for c in out["summary"]] == [out["asked"]["hits"][0]["id"]]
    assert "主要请求与意图" in out["summary"][0]["content"]
    assert out["missing"][0] == "error"
    assert json.loads(out["missing"][1]) == {"error": {
        "type": "NotFoundError", "message": "no memory card 'm_missing'", "where": None}}
    assert out["bad"][0] == "error" and "query" in out["bad"][1]  # the schema's own check
    assert out["reload"][0] == "error"
    assert json.loads(out["reload"][1])["error"]["type"] == "NotFoundError"


@pytest.fixture
def keyed(tmp_path: Path) -> Iterator[tuple[Server, str]]:
    path = tmp_path / "mcp.sqlite3"
    with SQLiteStore(path) as store:
        key, _ = create_key(store, "mcp-tenant")
    for server in start_server(path):
        yield server, key


def test_mcp_over_http_with_a_key(keyed: tuple[Server, str]) -> None:
    server, key = keyed

    async def run() -> dict[str, Any]:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {key}"})
        async with http, Client(streamable_http_client(f"{server.url}/mcp",
                                                       http_client=http)) as client:
            return await _exercise(client)

    _check(anyio.run(run))
    # what the tools wrote went to the key's tenant
    with SQLiteStore(server.store, tenant="mcp-tenant") as store:
        # ana's card deleted; bo's conversation: its cards and its summary, one session more
        assert store.count(Filters(user="ana")) == 0 and store.stats()["sessions"] == 2
        assert store.count(Filters(user="bo", types=("summary",))) == 1
    with SQLiteStore(server.store) as store:
        assert store.stats()["sessions"] == 0


def test_mcp_over_stdio(tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "precis.cli", "mcp", "--store", str(tmp_path / "stdio.sqlite3"),
              "--embedder", "none", "--tenant", "desk"],
        env={**os.environ, "PRECIS_HOME": str(tmp_path)})

    async def run() -> dict[str, Any]:
        async with Client(params) as client:
            return await _exercise(client)

    _check(anyio.run(run))
    with SQLiteStore(tmp_path / "stdio.sqlite3", tenant="desk") as store:
        assert store.stats()["sessions"] == 2
