"""Summary prompts: seed 004's four slots, English / Chinese defaults, overrides, plan hints."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from precis.errors import ConfigError
from precis.llm import (
    SUMMARY_SLOTS,
    PlanHint,
    Subtask,
    SummaryPrompts,
    build_summary_messages,
    prompt_language,
)

PROMPTS = json.loads(
    resources.files("precis.llm").joinpath("prompts.json").read_text("utf-8")
)["summary"]

PLAN = PlanHint(
    "Migrate the billing service",
    description="Move billing from MySQL to Postgres",
    state="in_progress",
    subtasks=(
        Subtask("Dump the schema", "done"),
        Subtask("Rewrite the queries", "in_progress", "the reports module is left"),
        Subtask("Switch traffic", "todo"),
    ),
)


def test_the_four_slots_exist_in_both_languages_and_differ() -> None:
    assert SUMMARY_SLOTS == ("tool_calls", "previous_round", "large_message", "current_round")
    for language in ("en", "zh"):
        texts = [PROMPTS[language][slot] for slot in SUMMARY_SLOTS]
        assert all(len(t) > 100 for t in texts)
        assert len(set(texts)) == 4
    assert "tool" in PROMPTS["en"]["tool_calls"]
    assert "工具调用" in PROMPTS["zh"]["tool_calls"]


def test_a_prompt_is_the_slot_instruction_then_the_content() -> None:
    messages = build_summary_messages("previous_round", "User asked for X. I did Y.",
                                      language="en")
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] == PROMPTS["en"]["previous_round"]
    user = messages[1]["content"]
    assert user.startswith("<content>\nUser asked for X. I did Y.\n</content>\n")
    assert user.endswith(PROMPTS["en"]["answer"])


@pytest.mark.parametrize(
    ("language", "content", "expected"),
    [
        ("zh", "plain English text", "zh"),
        ("zh-CN", "x", "zh"),
        ("en", "全是中文的内容", "en"),
        ("EN", "x", "en"),
        ("auto", "请帮我把部署脚本改成使用 docker compose", "zh"),
        ("auto", "Please fix the deploy script", "en"),
        ("mixed", "用 pytest 跑一下 tests/llm 目录", "zh"),
        ("none", "12345 !!!", "en"),
    ],
)
def test_prompt_language(language: str, content: str, expected: str) -> None:
    assert prompt_language(language, content) == expected


def test_chinese_conversations_get_chinese_prompts() -> None:
    content = "用户要求把数据库从 MySQL 迁移到 Postgres；助手导出了表结构。"
    messages = build_summary_messages("tool_calls", content, language="auto")
    assert messages[0]["content"] == PROMPTS["zh"]["tool_calls"]
    assert "以上是需要压缩的内容。" in messages[1]["content"]
    assert messages[1]["content"].endswith("只输出压缩后的文本，使用原文的语言。")


def test_overrides_replace_only_their_slot() -> None:
    prompts = SummaryPrompts(tool_calls="Keep order ids and statuses.", current_round="   ")
    assert build_summary_messages("tool_calls", "x", prompts=prompts, language="zh")[0][
        "content"] == "Keep order ids and statuses."
    # a blank override means the default (as in seed 004)
    assert build_summary_messages("current_round", "x", prompts=prompts, language="en")[0][
        "content"] == PROMPTS["en"]["current_round"]
    assert prompts.prompt("large_message", "zh") == PROMPTS["zh"]["large_message"]


def test_prompts_from_a_config_table() -> None:
    prompts = SummaryPrompts.from_dict({"previous_round": "Summarise the round."})
    assert prompts == SummaryPrompts(previous_round="Summarise the round.")
    with pytest.raises(ConfigError, match=r"unknown setting.*'tool_call'") as info:
        SummaryPrompts.from_dict({"tool_call": "typo"})
    assert "tool_calls" in str(info.value) and info.value.where == "prompts"
    with pytest.raises(ConfigError, match="a prompt must be text") as info:
        SummaryPrompts(large_message=42)  # type: ignore[arg-type]
    assert info.value.where == "prompts.large_message"


def test_unknown_slot_and_bad_arguments() -> None:
    with pytest.raises(ConfigError, match=r"unknown summary slot 'tools'.*tool_calls"):
        build_summary_messages("tools", "x", language="en")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="content must be text"):
        build_summary_messages("tool_calls", None, language="en")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="max_chars must be a positive integer"):
        build_summary_messages("tool_calls", "x", language="en", max_chars=0)
    with pytest.raises(ConfigError, match="plan_hint must be a PlanHint or text"):
        build_summary_messages("tool_calls", "x", language="en",
                               plan_hint={"plan": "x"})  # type: ignore[arg-type]


def test_the_length_limit_names_both_sizes() -> None:
    content = "a" * 1000
    user = build_summary_messages("current_round", content, language="en",
                                  max_chars=300)[1]["content"]
    assert "about 1000 characters. Answer in at most 300 characters." in user
    zh = build_summary_messages("current_round", "日志" * 50, language="zh",
                                max_chars=30)[1]["content"]
    assert "原文约 100 个字符，请把输出控制在 30 个字符以内。" in zh


def test_the_plan_hint_renders_plan_subtasks_and_states() -> None:
    assert PLAN.render("en") == "\n".join([
        PROMPTS["en"]["plan"]["header"],
        "Current plan: Migrate the billing service",
        "Description: Move billing from MySQL to Postgres",
        "Plan state: in progress",
        "Subtasks:",
        "1. [done] Dump the schema",
        "2. [in progress] Rewrite the queries",
        "   the reports module is left",
        "3. [todo] Switch traffic",
    ])
    zh = PlanHint("迁移计费服务", subtasks=(Subtask("导出表结构", "done"),
                                       Subtask("切换流量", "blocked"))).render("zh")
    assert zh.splitlines()[1:] == ["当前计划：迁移计费服务", "子任务：", "1. [已完成] 导出表结构",
                                   "2. [blocked] 切换流量"]


def test_the_plan_hint_comes_last() -> None:
    content = "tool read_file(path=/srv/app.conf) -> port=8080"
    for slot in SUMMARY_SLOTS:
        messages = build_summary_messages(slot, content, plan_hint=PLAN, language="en",
                                          max_chars=20)
        user = messages[-1]["content"]
        assert user.endswith(PLAN.render("en"))
        order = [user.index(piece) for piece in (
            content, PROMPTS["en"]["content_end"].splitlines()[-1], "at most 20 characters",
            PROMPTS["en"]["answer"], PROMPTS["en"]["plan"]["header"])]
        assert order == sorted(order)
        assert PLAN.name not in messages[0]["content"]


def test_a_plan_hint_as_text() -> None:
    user = build_summary_messages("large_message", "x", language="en",
                                  plan_hint="  Plan: ship v2; step 3 of 5 in progress.\n")
    assert user[1]["content"].endswith("\n\nPlan: ship v2; step 3 of 5 in progress.")


def test_a_bad_plan_hint_is_refused() -> None:
    with pytest.raises(ConfigError, match="subtasks\\[0\\] must be a Subtask"):
        PlanHint("p", subtasks=(("a", "done"),))  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="name must be a string"):
        PlanHint(None)  # type: ignore[arg-type]
