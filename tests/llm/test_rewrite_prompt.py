"""The prompt that asks for a handover rewritten into prose, the feedback on a rewrite that
was too long or lost values, and the client built from the environment."""

from __future__ import annotations

import pytest

from precis.errors import ConfigError
from precis.llm import build_rewrite_messages, client_from_env, rewrite_feedback

HANDOVER = ("## Primary Request and Intent\n- User (msg 1): \"Fix the 502 on /healthz\" [S1]\n"
            "## Files and Code Sections\n- `app/gateway.py` — edited [S7, S9]")


def test_the_prompt_holds_the_handover_and_the_target() -> None:
    system, user = build_rewrite_messages(HANDOVER, tokens=400, language="en")
    assert system["role"] == "system" and user["role"] == "user"
    assert "citations" in system["content"] and "character for character" in system["content"]
    assert f"<handover>\n{HANDOVER}\n</handover>" in user["content"]
    assert "at most 400 tokens (about 280 words)" in user["content"]


def test_a_chinese_handover_gets_the_chinese_prompt() -> None:
    handover = ("## 主要请求与意图\n"
                "- 用户（消息 2）：“订单服务在高峰期经常返回 502，帮我查一下原因。” [S3]")
    system, user = build_rewrite_messages(handover, tokens=100)
    assert "改写" in system["content"]
    assert "不超过 100 个 token（约 80 个字）" in user["content"]


def test_the_feedback_says_what_was_wrong() -> None:
    text = rewrite_feedback(tokens=900, target=500, lost=["app/gateway.py", "3f2a9c1"],
                            language="en")
    assert "That text takes 900 tokens; the limit is 500 tokens" in text
    assert "app/gateway.py, 3f2a9c1" in text
    assert "tokens; the limit" not in rewrite_feedback(tokens=None, target=500, lost=["x.py"],
                                               language="en")
    many = rewrite_feedback(tokens=None, target=500, lost=[f"v{i}.py" for i in range(60)],
                            language="en")
    assert "v39.py, …" in many and "v40.py" not in many


@pytest.mark.parametrize("tokens", [0, -3, True, 2.5])
def test_a_bad_target_is_refused(tokens: object) -> None:
    with pytest.raises(ConfigError, match="tokens must be a positive integer"):
        build_rewrite_messages(HANDOVER, tokens=tokens)  # type: ignore[arg-type]


def test_the_client_from_the_environment_names_what_is_not_set(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="set PRECIS_LLM_URL and PRECIS_LLM_MODEL") as info:
        client_from_env("--llm")
    assert info.value.where == "--llm"
    monkeypatch.setenv("PRECIS_LLM_URL", "http://127.0.0.1:9/v1")
    with pytest.raises(ConfigError, match=r"is set: set PRECIS_LLM_MODEL \(e\.g\."):
        client_from_env()
    monkeypatch.setenv("PRECIS_LLM_MODEL", "m")
    pytest.importorskip("httpx")
    with client_from_env(timeout=3.0) as client:
        assert client.url == "http://127.0.0.1:9/v1/chat/completions" and client.model == "m"
