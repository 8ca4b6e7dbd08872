"""``precis compress --llm``: the handover as a model's prose, from the command line, against
a real HTTP server on 127.0.0.1 that speaks the OpenAI wire format."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("httpx")

from _openai_stub import OpenAIStub
from _rewrites import prose
from precis.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "coding_session.json"
_LLM_ENV = ("PRECIS_LLM_URL", "PRECIS_LLM_MODEL", "PRECIS_LLM_KEY")


@pytest.fixture
def llm_env(monkeypatch: pytest.MonkeyPatch, openai_stub: OpenAIStub) -> OpenAIStub:
    monkeypatch.setenv("PRECIS_LLM_URL", openai_stub.url)
    monkeypatch.setenv("PRECIS_LLM_MODEL", "stub-model")
    monkeypatch.delenv("PRECIS_LLM_KEY", raising=False)
    return openai_stub


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["compress", str(EXAMPLE), "--no-timings", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_llm_writes_the_summary_as_prose(llm_env: OpenAIStub,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    llm_env.reply = prose
    code, out, err = run(["--llm"], capsys)
    assert code == 0 and err == ""
    data: dict[str, Any] = json.loads(out)
    assert data["llm"]["used_llm"] is True and data["llm"]["model"] == "stub-model"
    detailed = data["summary"]["detailed"]
    assert "\n## " not in detailed and "\n- " not in detailed  # prose, not the sections
    assert data["messages"][1]["content"] == detailed  # the summary message sent
    assert data["summary"]["sections"]  # what the prose was written from, with citations
    code, out, err = run(["--llm", "-O", "markdown"], capsys)
    assert code == 0
    header = out.split("\n\n")[1]  # the figures under the title
    assert "- llm rewrite: prose by stub-model; nothing was missing" in header.splitlines()


def test_a_failing_model_leaves_the_rule_summary_with_a_warning(
        llm_env: OpenAIStub, capsys: pytest.CaptureFixture[str]) -> None:
    code, rules, _ = run([], capsys)
    assert code == 0
    llm_env.mode = "500"
    code, out, err = run(["--llm"], capsys)
    assert code == 0
    assert err.startswith("precis: warning: the LLM rewrite was not used (")
    assert "HTTP 500" in err and err.strip().endswith("the rule summary stands")
    data = json.loads(out)
    assert "HTTP 500" in data.pop("llm")["error"]
    assert data == json.loads(rules)


@pytest.mark.parametrize("setting", [{}, {"PRECIS_LLM_URL": "http://127.0.0.1:9/v1"}])
def test_without_a_model_set_the_error_names_what_to_set(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        setting: dict[str, str]) -> None:
    for name in _LLM_ENV:
        monkeypatch.delenv(name, raising=False)
    for name, value in setting.items():
        monkeypatch.setenv(name, value)
    code, out, err = run(["--llm"], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("precis: error: --llm: no OpenAI-compatible model is set: set ")
    assert "PRECIS_LLM_MODEL" in err
    assert ("PRECIS_LLM_URL and" in err) == (not setting)


def test_without_the_remote_extra_the_error_gives_the_install_hint(
        llm_env: OpenAIStub, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "httpx", None)
    code, out, err = run(["--llm"], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "pip install 'precis[remote]'" in err and "'httpx'" in err
    assert llm_env.requests == []
