"""``--llm-vote``: the model layer from the command line, against a real HTTP server on
127.0.0.1 that speaks the OpenAI wire format."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("httpx")

from _openai_stub import OpenAIStub, openai_stub  # noqa: F401  (the fixture)
from precis.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "coding_session.json"
_NUMBER = re.compile(r"^\[(\d+)\]", re.MULTILINE)


def every_fragment(label: str) -> Any:
    """A reply that gives every fragment of the prompt the type ``label``."""

    def reply(body: dict[str, Any]) -> str:
        prompt = body["messages"][-1]["content"]
        return json.dumps({n: label for n in _NUMBER.findall(prompt)})

    return reply


@pytest.fixture
def llm_env(monkeypatch: pytest.MonkeyPatch, openai_stub: OpenAIStub) -> OpenAIStub:  # noqa: F811
    monkeypatch.setenv("PRECIS_LLM_URL", openai_stub.url)
    monkeypatch.setenv("PRECIS_LLM_MODEL", "stub-model")
    monkeypatch.delenv("PRECIS_LLM_KEY", raising=False)
    return openai_stub


def explained(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[dict[str, Any], str]:
    code = main(["inspect", str(EXAMPLE), "--explain", "--json", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out), err


def test_the_model_answers_for_the_fragments_the_rules_are_unsure_of(
    llm_env: OpenAIStub, capsys: pytest.CaptureFixture[str]
) -> None:
    rules, _ = explained([], capsys)
    llm_env.reply = every_fragment("todo")
    voted, err = explained(["--llm-vote"], capsys)
    assert err == ""
    changed = [(r, v) for r, v in zip(rules["fragments"], voted["fragments"])
               if r["type"] != v["type"]]
    assert changed  # the example has fragments the rules are unsure of
    for _, v in changed:
        assert v["type"] == "todo"
        assert "llm:stub-model" in v["why"]
    sure = [v for v in voted["fragments"] if "llm:stub-model" not in v["why"]]
    assert sure  # the confident answers were never asked about


def test_a_failing_model_leaves_the_rule_answers_and_says_so(
    llm_env: OpenAIStub, capsys: pytest.CaptureFixture[str]
) -> None:
    rules, _ = explained([], capsys)
    llm_env.mode = "500"
    voted, err = explained(["--llm-vote"], capsys)
    assert "warning: the model did not vote" in err
    assert [f["type"] for f in voted["fragments"]] == [f["type"] for f in rules["fragments"]]


def test_without_an_endpoint_the_error_names_the_setting(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("PRECIS_LLM_URL", "PRECIS_LLM_MODEL", "PRECIS_LLM_KEY"):
        monkeypatch.delenv(name, raising=False)
    code = main(["compress", str(EXAMPLE), "--llm-vote"])
    _, err = capsys.readouterr()
    assert code == 2
    assert "PRECIS_LLM_MODEL" in err or "PRECIS_LLM_URL" in err
    assert "Traceback" not in err


def _compressed(tmp_path: Path, level: str, args: list[str]) -> dict[str, Any]:
    out = tmp_path / "out.json"
    assert main(["compress", str(EXAMPLE), "--level", level, "--no-timings",
                 "-o", str(out), *args]) == 0
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return result


def _cited_in(result: dict[str, Any], key: str) -> set[str]:
    return {fid for section in result["summary"]["sections"] if section["key"] == key
            for item in section["items"] for fid in item["sources"]}


def test_compress_uses_the_models_types(
    llm_env: OpenAIStub, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # a model that calls every unsure fragment small talk: the assistant's reasoning the
    # rules were unsure of (S18, the half-open range that lets the query use its index)
    # is no Problem Solving line then; the user's messages, found by structure, all stay
    rules = _compressed(tmp_path, "light", [])
    llm_env.reply = every_fragment("chitchat")
    voted = _compressed(tmp_path, "light", ["--llm-vote"])
    capsys.readouterr()
    assert "S18" in _cited_in(rules, "problem_solving")
    assert "S18" not in _cited_in(voted, "problem_solving")
    for result in (rules, voted):
        assert result["handover"]["requests_total"] == 4
        assert result["handover"]["missing_requests"] == []


@pytest.mark.parametrize("junk", ["I like turtles.", "{}", '{"answer": "yes"}', "1. maybe"])
def test_a_model_that_answers_junk_gets_a_warning(
    llm_env: OpenAIStub, capsys: pytest.CaptureFixture[str], junk: str
) -> None:
    """issue 18: a model answering junk left the rule answers with exit 0 and no word."""
    rules, _ = explained([], capsys)
    llm_env.reply = junk
    voted, err = explained(["--llm-vote"], capsys)
    assert [f["type"] for f in voted["fragments"]] == [f["type"] for f in rules["fragments"]]
    assert err.startswith("precis: warning: the model's answers named no type for ")
    assert err.count("\n") == 1
    code = main(["compress", str(EXAMPLE), "--llm-vote", "-O", "markdown"])
    assert code == 0 and "named no type" in capsys.readouterr().err


def test_a_models_types_never_drop_a_request(
    llm_env: OpenAIStub, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    llm_env.reply = every_fragment("chitchat")
    voted = _compressed(tmp_path, "heavy", ["--llm-vote"])
    capsys.readouterr()
    assert voted["handover"]["missing_requests"] == []
