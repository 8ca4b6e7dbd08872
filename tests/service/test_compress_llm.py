"""``POST /v1/compress`` with ``llm: true``: the summary as the prose of the model the
server is set up with (``PRECIS_LLM_URL`` where it runs), the same operation as
``precis compress --llm``; a real server and a real OpenAI stub server, both on 127.0.0.1."""

from __future__ import annotations

import jsonschema
import pytest
from _server import Server

from _openai_stub import OpenAIStub
from _rewrites import prose
from precis.compact import result_schema


def test_the_servers_model_rewrites_the_summary(server: Server, conversation: object,
                                                openai_stub: OpenAIStub,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRECIS_LLM_URL", openai_stub.url)
    monkeypatch.setenv("PRECIS_LLM_MODEL", "stub-model")
    monkeypatch.delenv("PRECIS_LLM_KEY", raising=False)
    openai_stub.reply = prose
    with server.client() as http:
        rules = http.post("/v1/compress", json={"conversation": conversation, "budget": 600})
        r = http.post("/v1/compress", json={"conversation": conversation, "budget": 600,
                                            "llm": True})
        assert r.status_code == 200, r.text
        result = r.json()
        jsonschema.validate(result, result_schema())
        assert result["llm"]["used_llm"] is True and result["compressed_tokens"] <= 600
        assert result["messages"][1]["content"] == result["summary"]["detailed"]
        assert "\n## " not in result["summary"]["detailed"]
        assert "llm" not in rules.json()
        openai_stub.mode = "500"
        r = http.post("/v1/compress", json={"conversation": conversation, "budget": 600,
                                            "llm": True})
        assert r.status_code == 200
        failed = r.json()
        assert "HTTP 500" in failed["llm"]["error"]
        assert "(after 3 attempts)" in failed["llm"]["error"]  # the client's retries
        assert failed["summary"] == rules.json()["summary"]
    assert len(openai_stub.requests) == 1 + 3


def test_a_server_without_a_model_answers_501(server: Server, conversation: object,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PRECIS_LLM_URL", "PRECIS_LLM_MODEL", "PRECIS_LLM_KEY"):
        monkeypatch.delenv(name, raising=False)
    with server.client() as http:
        r = http.post("/v1/compress", json={"conversation": conversation, "llm": True})
    assert r.status_code == 501, r.text
    error = r.json()["error"]
    assert error["where"] == "llm"
    assert "this server has no LLM" in error["message"]
    assert "PRECIS_LLM_URL" in error["message"] and "Traceback" not in r.text
