"""The service's JSON encoder: orjson where it can, the standard library for what orjson
refuses, and the same JSON as Starlette's ``JSONResponse`` either way."""

from __future__ import annotations

import json
from typing import Any

import pytest
from _server import Server
from starlette.responses import JSONResponse

from precis.service import _json
from precis.service._json import FastJSONResponse, dumps

SAMPLE: dict[str, Any] = {"content": "用户偏好 PostgreSQL — café", "score": 0.125,
                          "tags": ("a", "b"), "nested": [{"n": None, "ok": True}], "k": -3}


def test_the_encoding_reads_back_as_starlettes(monkeypatch: pytest.MonkeyPatch) -> None:
    starlette = JSONResponse(SAMPLE).body
    assert json.loads(dumps(SAMPLE)) == json.loads(starlette)
    assert "用户偏好".encode() in dumps(SAMPLE)  # UTF-8, not \\u escapes
    monkeypatch.setattr(_json, "orjson", None)  # as without orjson installed
    assert dumps(SAMPLE) == starlette
    assert FastJSONResponse(SAMPLE).body == starlette


def test_what_orjson_refuses_is_encoded_by_the_standard_library() -> None:
    big = {"n": 2**70, 3: "non-string key"}
    assert json.loads(dumps(big)) == {"n": 2**70, "3": "non-string key"}


def test_a_memory_with_a_huge_integer_in_its_metadata_comes_back_whole(server: Server
                                                                        ) -> None:
    with server.client() as http:
        r = http.post("/v1/memories", json={"text": "Ana prefers PostgreSQL over MySQL",
                                            "metadata": {"seq": 2**70, "note": "é"}})
        assert r.status_code == 201, r.text
        (card,) = r.json()["added"]
        assert card["metadata"]["seq"] == 2**70 and card["metadata"]["note"] == "é"
        got = http.get(f"/v1/memories/{card['id']}")
        assert got.status_code == 200 and got.json()["memory"]["metadata"]["seq"] == 2**70
