"""``compress()``: budgets, system prompt, valid API lists, citations, facts, levels, stability.

The conversations are small fixtures written for these tests (tests/fixtures/compact/):
coding sessions in English and Chinese (parallel tool calls, a 40-line code block, a user
constraint on ``app/db.py``, port 8080, a URL, a request said three times, "ok" / "好的"),
data/SQL sessions whose threshold changes twice, and multi-day sessions with timestamps.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from _api_rules import anthropic_errors, openai_errors
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import precis
from precis import ConfigError, Conversation, EmptyInputError, Message, Text, ToolCall, ToolResult
from precis.analysis import analyze
from precis.compact import CompressionResult, compress
from precis.compact._facts import facts
from precis.tokens import TokenCounter, get_counter

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "compact"
NAMES = ["coding_en", "coding_zh", "sql_en", "sql_zh", "multiday_en", "multiday_zh"]
LEVELS = ["light", "normal", "heavy", "emergency"]


def load(name: str) -> Conversation:
    return precis.load(FIXTURES / f"{name}.json")


def kept_start(result: CompressionResult, conv: Conversation) -> int:
    """Index in the input of the first non-system message kept verbatim."""
    return min((o for o in result.origin
                if o is not None and conv.messages[o].role != "system"), default=len(conv))


def assert_valid_for_both_apis(result: CompressionResult) -> None:
    assert openai_errors(result.to_openai()) == []
    assert anthropic_errors(result.to_anthropic()) == []


@pytest.fixture
def o200k(shared_data: Path) -> TokenCounter:
    file = shared_data / "tokenizers" / "o200k_base.tiktoken"
    if not file.is_file():
        pytest.skip(f"{file} not found")
    return get_counter("o200k_base", path=file)


# -- budget ---------------------------------------------------------------------------------


def _check_budgets(conv: Conversation, counter: TokenCounter) -> int:
    system = [m for m in conv.messages if m.role == "system"]
    floor = counter.count_messages(system) + 48 if system else 60
    full = counter.count_messages(conv.messages)
    budgets = sorted({floor, floor + 1, floor + 17, floor + 60}
                     | {max(floor, int(full * share)) for share in (0.1, 0.2, 0.35, 0.5, 0.8)})
    checked = 0
    for budget in budgets:
        for level in ("light", "normal", "emergency"):
            result = compress(conv, level=level, budget=budget, tokenizer=counter)
            assert result.compressed_tokens <= budget, (budget, level)
            assert result.compressed_tokens == counter.count_messages(result.messages)
            assert result.budget == budget
            assert result.tokenizer == counter.name
            assert_valid_for_both_apis(result)
            checked += 1
    return checked


@pytest.mark.parametrize("name", NAMES)
def test_output_fits_every_budget_by_the_estimator(name: str) -> None:
    assert _check_budgets(load(name), get_counter("estimate")) > 20


@pytest.mark.data
@pytest.mark.parametrize("name", ["coding_en", "coding_zh", "sql_zh"])
def test_output_fits_every_budget_by_o200k(name: str, o200k: TokenCounter) -> None:
    assert _check_budgets(load(name), o200k) > 20


def test_budget_by_tokenizer_name() -> None:
    conv = load("coding_en")
    result = compress(conv, budget=400, tokenizer="estimate:cl100k")
    assert result.tokenizer == "estimate:cl100k"
    assert result.compressed_tokens <= 400
    assert result.compressed_tokens == get_counter("estimate:cl100k").count_messages(
        result.messages)


def test_budget_smaller_than_the_system_prompt_is_a_config_error() -> None:
    conv = load("coding_en")
    counter = get_counter("estimate")
    system_tokens = counter.count_messages([conv.messages[0]])
    with pytest.raises(ConfigError, match="too small"):
        compress(conv, budget=system_tokens - 1)
    with pytest.raises(ConfigError, match="too small"):
        compress(conv, budget=system_tokens)


@pytest.mark.parametrize("budget", [0, -5, True, 12.5, "300"])
def test_invalid_budget_is_a_config_error(budget: object) -> None:
    with pytest.raises(ConfigError, match="budget"):
        compress(load("coding_en"), budget=budget)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["coding_en", "multiday_zh"])
def test_conversation_within_budget_comes_back_unchanged(name: str) -> None:
    conv = load(name)
    full = get_counter("estimate").count_messages(conv.messages)
    for budget in (full, full + 1000):
        result = compress(conv, budget=budget)
        assert result.messages == conv.messages
        assert result.summary is None
        assert result.original_tokens == result.compressed_tokens == full
        assert result.origin == list(range(len(conv)))
        assert result.summarized_count == 0 and result.dropped_count == 0
        assert result.dropped == {}
        assert result.ratio == 1.0


def test_one_token_over_the_budget_is_compressed() -> None:
    conv = load("coding_en")
    full = get_counter("estimate").count_messages(conv.messages)
    result = compress(conv, budget=full - 1)
    assert result.summary is not None
    assert result.compressed_tokens <= full - 1


def test_huge_last_message_is_cut_to_fit() -> None:
    filler = " ".join(f"Line {i} of the build log has nothing special." for i in range(400))
    conv = Conversation(messages=[
        Message.of("system", "You are a build assistant."),
        Message.of("user", "The deploy to https://deploy.example.com/api failed."),
        Message.of("assistant", "I will look at the log."),
        Message.of("user", "Here is the whole log: " + filler
                   + " Final line: ERROR port 8443 already in use."),
    ])
    result = compress(conv, budget=300)
    assert result.compressed_tokens <= 300
    assert result.messages[0] == conv.messages[0]
    assert result.messages[-1].role == "user"
    last = result.messages[-1].text
    assert last.startswith("Here is the whole log:")
    assert len(last) < len(conv.messages[-1].text) / 4
    assert_valid_for_both_apis(result)


# -- system prompt ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["coding_en", "coding_zh", "sql_en", "multiday_en"])
@pytest.mark.parametrize("level", LEVELS)
def test_system_prompt_is_first_and_unchanged(name: str, level: str) -> None:
    conv = load(name)
    result = compress(conv, level=level)
    assert result.messages[0] == conv.messages[0]
    assert result.messages[0].role == "system"
    assert result.origin[0] == 0
    assert result.system_prompt_preserved is True
    assert sum(1 for m in result.messages if m.role == "system") == 1
    assert result.to_openai()[0] == {"role": "system", "content": conv.messages[0].text}
    assert result.to_anthropic()["system"] == conv.messages[0].text


def test_two_system_messages_both_kept_in_order() -> None:
    conv = load("coding_en")
    second = Message.of("system", "Answer in short sentences.")
    conv = Conversation(messages=[conv.messages[0], second, *conv.messages[1:]])
    result = compress(conv, budget=500)
    assert result.messages[:2] == [conv.messages[0], second]
    assert result.compressed_tokens <= 500


def test_no_system_prompt_is_reported() -> None:
    conv = load("multiday_zh")
    full = get_counter("estimate").count_messages(conv.messages)
    result = compress(conv, keep_last=2, budget=int(full * 0.8))
    assert result.system_prompt_preserved is False
    assert result.messages[0].role == "user"
    assert result.messages[0].metadata.get("precis") == "summary"


# -- valid for both APIs ---------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("template", ["sections", "claude"])
def test_every_fixture_and_level_is_valid_for_both_apis(
    name: str, level: str, template: str
) -> None:
    conv = load(name)
    for keep_last in (None, 0, 1, 3):
        result = compress(conv, level=level, template=template, keep_last=keep_last)
        assert_valid_for_both_apis(result)


def test_kept_tail_never_starts_inside_a_tool_exchange() -> None:
    conv = load("coding_en")
    # messages 10 (two parallel calls), 11 and 12 (their results) form one exchange;
    # keeping the last 20 messages would start at message 11
    result = compress(conv, keep_last=20)
    assert kept_start(result, conv) == 10
    assert result.kept_messages == 21
    assert result.messages[2:5] == conv.messages[10:13]
    assert_valid_for_both_apis(result)


SENTENCES = [
    "Please check the failing test in `tests/test_api.py`.",
    "The server listens on port 8080.",
    "Never change the file `app/db.py`.",
    "I will run the linter next.",
    "ok",
    "请把超时时间改成 30 秒。",
    "数据库是 PostgreSQL 15，表名 orders。",
    "好的",
    "The deploy URL is https://deploy.example.com/v2.",
]


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    messages: list[Message] = []
    if draw(st.booleans()):
        messages.append(Message.of("system", "You are an agent. " + draw(st.sampled_from(
            SENTENCES))))
    calls = 0
    for _ in range(draw(st.integers(1, 14))):
        kind = draw(st.sampled_from(["user", "assistant", "calls", "calls", "calls_one_turn"]))
        text = " ".join(draw(st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=3)))
        if kind in ("user", "assistant"):
            messages.append(Message.of(kind, text))
            continue
        n = draw(st.integers(1, 3))
        ids = [f"call_{calls + k}" for k in range(n)]
        calls += n
        lead = [Text(text)] if draw(st.booleans()) else []
        messages.append(Message("assistant", [*lead, *(
            ToolCall(i, draw(st.sampled_from(["run", "read_file"])),
                     json.dumps({"command": f"pytest -k case{i[5:]}"})) for i in ids)]))
        answered = draw(st.permutations(ids))
        if draw(st.integers(0, 9)) == 0:
            answered = answered[:-1]  # a call whose result never came
        results = [ToolResult(i, f"output of {i}: 3 passed", is_error=draw(st.booleans()))
                   for i in answered]
        if kind == "calls_one_turn" and results:
            messages.append(Message("tool", list(results)))
        else:
            messages.extend(Message("tool", [r]) for r in results)
    return messages


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    messages=histories(),
    level=st.sampled_from(LEVELS),
    share=st.one_of(st.none(), st.floats(0.05, 1.3)),
    keep_last=st.one_of(st.none(), st.integers(0, 6)),
    template=st.sampled_from(["sections", "claude"]),
)
def test_property_generated_histories_are_valid_and_fit(
    messages: list[Message], level: str, share: float | None, keep_last: int | None,
    template: str,
) -> None:
    counter = get_counter("estimate")
    system = [m for m in messages if m.role == "system"]
    budget = None if share is None else max(1, int(counter.count_messages(messages) * share))
    try:
        result = compress(messages, level=level, budget=budget, keep_last=keep_last,
                          template=template)
    except ConfigError as exc:
        assert budget is not None and "too small" in str(exc)
        assert budget < counter.count_messages(system) + 64
        return
    assert_valid_for_both_apis(result)
    assert result.messages[: len(system)] == system
    sent = counter.count_messages(result.messages)
    if budget is None:
        assert result.compressed_tokens == sent
    else:  # the largest emitted form (issue 18, item 6): the list as each API takes it, text
        emitted = (sent, counter.count(result.text()),
                   counter.count_messages(precis.load(result.to_openai()).messages))
        assert max(emitted) <= result.compressed_tokens <= budget
    if result.summary is not None:
        assert _citation_problems(Conversation(messages=messages), result) == []


# -- citations -------------------------------------------------------------------------------


def _citation_problems(conv: Conversation, result: CompressionResult) -> list[str]:
    fragments = {f.id: f for f in precis.segment(conv).fragments}
    start = kept_start(result, conv)
    dropped = {fid for ids in result.dropped.values() for fid in ids}
    problems: list[str] = []
    if result.summary is None:  # too short to gain anything: the input comes back as it is
        assert result.messages == conv.messages and result.summarized_count == 0
        return problems
    items = list(result.summary.short) + result.summary.items
    for item in items:
        if not item.sources:
            problems.append(f"no citation: {item.text}")
        for fid in item.sources:
            if fid not in fragments:
                problems.append(f"{fid} does not exist")
            elif item not in result.summary.short and (
                    fragments[fid].provenance.message >= start):
                problems.append(f"{fid} is in the kept messages")
            if fid in dropped:
                problems.append(f"{fid} is cited and dropped")
    return problems


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("template", ["sections", "claude"])
def test_every_item_cites_existing_fragments_of_the_summarized_range(
    name: str, level: str, template: str
) -> None:
    conv = load(name)
    half = get_counter("estimate").count_messages(conv.messages) // 2
    summarized = 0
    for options in ({}, {"keep_last": 2}, {"budget": half}):
        result = compress(conv, level=level, template=template, **options)  # type: ignore[arg-type]
        assert _citation_problems(conv, result) == [], options
        summarized += result.summary is not None
    assert summarized  # (with a budget of half its tokens, every conversation is summarized)


def test_summary_header_names_the_range_it_covers() -> None:
    conv = load("coding_en")
    result = compress(conv)  # keeps messages 21-30 (the last 10)
    assert result.summary is not None
    first_line = result.summary.render().splitlines()[0]
    assert first_line == ("[precis summary of messages 2-21; "
                          "the 10 most recent messages follow verbatim]")
    assert result.summary.covers == (1, 20)
    assert result.summary.fragments[0] == "S3"  # the fragment ids it covers, in the data
    # with no message kept verbatim (all 30 after the system prompt summarized), the header
    # says no more than the range (a small summary has little room)
    alone = compress(conv, keep_last=0, budget=300)
    assert alone.summary is not None
    assert alone.summary.render().splitlines()[0] == "[precis summary of messages 2-31]"


def test_counts_add_up_to_the_input_messages() -> None:
    conv = load("coding_en")  # 1 system + 30 other messages
    for level, kept in (("light", 10), ("normal", 10), ("heavy", 5), ("emergency", 3)):
        result = compress(conv, level=level)
        assert result.kept_messages == kept
        assert result.kept_messages + result.summarized_count + result.dropped_count == 30
        assert result.input_messages == 31
        assert result.summarized_count > 0


# -- exact facts -----------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "share", "exact"), [
    # the user's port and health check URL, the file they protect, the command run, the file
    # the fix changed and the error that named the cause
    ("coding_en", 0.8, ["`app/db.py`", "8080", "https://billing.example.com/healthz",
                        "pytest tests/test_gateway.py -q", "config/settings.toml",
                        "TimeoutError"]),
    ("coding_zh", 0.8, ["`app/db.py`", "8080", "https://shop.example.cn/healthz",
                        "pytest tests/test_gateway.py -q", "config/settings.toml"]),
    # 214 tokens in all: the levels would not make it shorter, a budget does
    ("multiday_en", 0.8, ["k8s-prod-eu", "https://wiki.example.com/atlas/runbook"]),
])
@pytest.mark.parametrize("level", LEVELS)
def test_exact_values_a_reader_needs_are_carried_verbatim(
    name: str, share: float | None, exact: list[str], level: str
) -> None:
    conv = load(name)
    keep_last = 2
    summarized = conv.messages[: len(conv) - keep_last]
    high = [item.fragment.text for item in analyze(conv).items()
            if item.level == "HIGH" and item.fragment.provenance.message < len(summarized)]
    # the values are said in HIGH fragments of the messages that get summarized
    assert [fact for fact in exact if not any(fact in text for text in high)] == []
    assert not any(fact in m.text for fact in exact for m in conv.messages[-keep_last:])
    full = get_counter("estimate").count_messages(conv.messages)
    budget = None if share is None else int(full * share)
    result = compress(conv, level=level, budget=budget, keep_last=keep_last)
    text = result.text()
    assert [fact for fact in exact if fact not in text] == []
    # the share of exact facts kept is reported (a guard, not a goal: a handover keeps
    # the values where they mean something, not every token)
    retention = result.to_dict()["retention"]
    assert retention["facts_total"] > 0


def _request_lines(result: CompressionResult) -> list[str]:
    """The lines of the handover's request section."""
    assert result.summary is not None
    return [i.text for s in result.summary.sections if s.key == "request" for i in s.items]


@pytest.mark.parametrize(("name", "constraint"), [
    ("coding_en", "Never touch `app/db.py`: the connection pool there is managed by the ops "
                  "team."),
    ("coding_zh", "注意：绝对不要修改 `app/db.py`，连接池由运维统一管理。")])
@pytest.mark.parametrize("level", LEVELS)
def test_user_constraint_sentence_survives_every_level(name: str, constraint: str,
                                                       level: str) -> None:
    # message 3 is summarized at every level: the rule is a request line, word for word
    result = compress(load(name), level=level)
    assert any(constraint in line for line in _request_lines(result)), level


_EMERGENCY_ROOM = (
    "known limit: at emergency the summary has room for two or three short request lines "
    "(~100 tokens): the task (msg 2) and the rule (msg 3) go first, the instruction said "
    "three times (a longer line) does not fit in what is left")


@pytest.mark.parametrize(("name", "said"), [
    ("coding_en", "Please keep the public API of the `BillingClient` class unchanged."),
    ("coding_zh", "请保持 `OrderClient` 类的公开接口不变。")])
@pytest.mark.parametrize("level", ["light", "normal", "heavy", "emergency"])
def test_a_request_said_three_times_survives_every_level(name: str, said: str,
                                                         level: str) -> None:
    # (the old summary's "current goal"): one request line names all three messages
    if level == "emergency":
        pytest.xfail(_EMERGENCY_ROOM)
    conv = load(name)
    lines = [line for line in _request_lines(compress(conv, level=level)) if said in line]
    assert len(lines) == 1, level
    assert ("msg 14, 17, 21" if name == "coding_en" else "消息 14、17、21") in lines[0]


def _go_on_session(go_on: str, thanks: str = "thanks") -> Conversation:
    task = "Fix the login bug in app/auth.py; the session cookie expires too early."
    found = ("I looked at app/auth.py and found the expiry set to 60 seconds, far below the "
             "3600 seconds that docs/auth.md promises. ")
    fixed = ("Raised the expiry to 3600 seconds in app/auth.py and ran `pytest "
             "tests/test_auth.py`: 14 passed. ")
    return Conversation(messages=[
        Message(role="user", parts=[Text(task)]),
        Message(role="assistant", parts=[Text(found * 3)]),
        Message(role="user", parts=[Text(go_on)]),
        Message(role="assistant", parts=[Text(fixed * 3)]),
        Message(role="user", parts=[Text(thanks)]),
        Message(role="assistant", parts=[Text("You're welcome.")]),
    ])


@pytest.mark.parametrize("go_on", ["Go on.", "Please continue.", "继续"])
def test_a_prompt_to_go_on_is_no_request_in_force(go_on: str) -> None:
    conv = _go_on_session(go_on)
    go_on_id = next(f.id for f in precis.segment(conv).fragments if f.text == go_on)
    summary = compress(conv, level="heavy", keep_last=2, template="claude").summary
    assert summary is not None
    items = [i for s in summary.sections if s.key == "request" for i in s.items]
    # the prompt is read with what it answers: its line quotes the assistant's finding
    said = [i.text for i in items if go_on_id in i.sources]
    assert len(said) == 1 and "found the expiry set to 60 seconds" in said[0]
    # and it is not the request in force
    in_force = [i for i in items if i.type == "intent"]
    assert in_force and not any(go_on_id in i.sources for i in in_force)
    assert not any(f'"{go_on}"' in i.text and "replied" not in i.text for i in items)


def test_thanks_is_no_request_in_force() -> None:
    conv = _go_on_session("Go on.")
    ids = {f.text: f.id for f in precis.segment(conv).fragments}
    summary = compress(conv, level="heavy", keep_last=0, template="claude").summary
    assert summary is not None
    in_force = [i for i in summary.items if i.type == "intent"]
    assert in_force and all(ids["thanks"] not in i.sources for i in in_force)
    assert ids["Fix the login bug in app/auth.py; the session cookie expires too early."] in \
        in_force[0].sources
    assert not any('"thanks"' in i.text for i in summary.items if i.type == "next")


@pytest.mark.data
@pytest.mark.parametrize("path", [
    "transcripts/claude-code/python-to-rust-port.transcript.jsonl",
    "transcripts/anthropic/python-to-rust-port.messages.json"])
def test_the_users_request_survives_small_budgets(shared_data: Path, path: str) -> None:
    # A long session of tool calls and one request: at 1-4% of its tokens the handover
    # still states the request word for word, and that it is the one in force.
    file = shared_data / path
    if not file.is_file():
        pytest.skip(f"{file} not found")
    conv = precis.load(file)
    for budget in (1500, 2000, 3000):
        result = compress(conv, budget=budget)
        assert result.template == "claude"
        lines = _request_lines(result)
        assert any("Delete all the Python source files when you're done (but keep the "
                   "Justfile - update it to run Rust tests instead)" in line
                   for line in lines), budget
        assert any(line.startswith("In force: the request above (msg 1)") for line in lines)
        assert result.handover is not None and result.handover.missing_requests == ()


@pytest.mark.parametrize("name", ["coding_en", "coding_zh"])
@pytest.mark.parametrize("share", [0.15, 0.2, 0.25, 0.3, 0.5])
def test_the_first_request_survives_tight_budgets(name: str, share: float) -> None:
    conv = load(name)
    budget = int(get_counter("estimate").count_messages(conv.messages) * share)
    result = compress(conv, budget=budget)
    assert result.compressed_tokens <= budget
    assert result.handover is not None and 1 not in result.handover.missing_requests
    first = {"coding_en": 'User (msg 2): "Our billing gateway returns 502 errors under load.',
             "coding_zh": "用户（消息 2）：“订单服务在高峰期经常返回 502，"
                          "帮我查一下原因并修复。"}
    assert _request_lines(result)[0].startswith(first[name])


def _retention_at_30_percent() -> tuple[dict[str, Any], str]:
    conv = load("coding_en")
    counter = get_counter("estimate")
    result = compress(conv, budget=int(counter.count_messages(conv.messages) * 0.3))
    return result.to_dict()["retention"], result.text()


def test_retention_figures_in_the_result() -> None:
    retention, _ = _retention_at_30_percent()
    kinds = retention["by_kind"]
    assert set(kinds) <= {"url", "path", "command", "identifier", "number", "error"}
    assert {"url", "path", "number"} <= set(kinds)
    assert sum(k["kept"] for k in kinds.values()) == retention["facts_kept"]
    assert sum(k["total"] for k in kinds.values()) == retention["facts_total"]
    assert retention["facts"] == round(retention["facts_kept"] / retention["facts_total"], 4)
    assert retention["facts_total"] - retention["facts_kept"] >= len(retention["missing"])
    assert 0 < retention["high_kept"] <= retention["high_total"]


def test_a_fact_reported_missing_is_not_in_the_output() -> None:
    retention, text = _retention_at_30_percent()
    assert [fact for fact in retention["missing"] if fact in text] == []


# -- levels ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("level", "kept", "name"), [
    (level, kept, name)
    for level, kept in (("light", 10), ("normal", 10), ("heavy", 5), ("emergency", 3))
    for name in ("coding_en", "coding_zh", "sql_en", "sql_zh")
    # the light level's summary of sql_en's 16 older messages would be no shorter
    if (level, name) != ("light", "sql_en")])
def test_level_keeps_its_number_of_recent_messages_verbatim(
    name: str, level: str, kept: int
) -> None:
    conv = load(name)
    result = compress(conv, level=level)
    assert result.level == level
    assert result.kept_messages == kept
    n = len(conv)
    assert result.messages[-kept:] == conv.messages[n - kept:]
    assert result.origin[-kept:] == list(range(n - kept, n))
    # system prompt, summary, kept messages: nothing else
    assert len(result.messages) == 1 + 1 + kept
    assert result.origin[1] is None
    assert result.messages[1].metadata.get("precis") == "summary"


def test_keep_last_overrides_the_level() -> None:
    conv = load("sql_en")
    result = compress(conv, level="emergency", keep_last=6)
    assert result.kept_messages == 6
    assert result.messages[-6:] == conv.messages[-6:]
    result = compress(conv, keep_last=0)
    assert result.kept_messages == 0
    assert result.messages[-1].metadata.get("precis") == "summary"
    assert_valid_for_both_apis(result)


@pytest.mark.parametrize("keep_last", [-1, 2.5, True, "3"])
def test_invalid_keep_last_is_a_config_error(keep_last: object) -> None:
    with pytest.raises(ConfigError, match="keep_last"):
        compress(load("sql_en"), keep_last=keep_last)  # type: ignore[arg-type]


def test_unknown_level_and_bad_floor_are_config_errors() -> None:
    conv = load("sql_en")
    with pytest.raises(ConfigError, match=r"'extreme'.*light, normal, heavy, emergency"):
        compress(conv, level="extreme")
    with pytest.raises(ConfigError, match="quality_floor"):
        compress(conv, quality_floor=1.5)


def test_empty_conversation_is_an_input_error() -> None:
    with pytest.raises(EmptyInputError):
        compress(Conversation(messages=[]))


@pytest.mark.parametrize(("name", "template"), [
    (name, template) for name in NAMES for template in ("sections", "claude")])
def test_emergency_lines_never_stand_on_small_talk_alone(name: str, template: str) -> None:
    # the smallest summary keeps what matters: every line cites something above LOW (a
    # request, a rule, an action), never only an "ok" or a greeting
    conv = load(name)
    analysis = analyze(conv)
    low = {item.id for item in analysis.items() if item.level == "LOW"}
    result = compress(conv, level="emergency", template=template, keep_last=2)
    assert result.summary is not None
    items = list(result.summary.short) + result.summary.items
    assert items
    assert [item.text for item in items if set(item.sources) <= low] == []


@pytest.mark.parametrize("name", ["coding_en", "coding_zh", "sql_en", "sql_zh"])
def test_heavier_levels_give_smaller_outputs(name: str) -> None:
    conv = load(name)
    sizes = {level: compress(conv, level=level, keep_last=3).compressed_tokens
             for level in LEVELS}
    assert sizes["emergency"] < sizes["heavy"] < sizes["light"]
    assert sizes["emergency"] < sizes["normal"]
    assert sizes["light"] < compress(conv, level="light", keep_last=3).original_tokens


def test_json_output_follows_the_published_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema_file = Path(precis.__file__).parent / "compact" / "compression_result.schema.json"
    validator = jsonschema.Draft202012Validator(json.loads(schema_file.read_text("utf-8")))
    for name in NAMES:
        conv = load(name)
        for level in LEVELS:
            for options in ({}, {"template": "claude", "keep_last": 0}, {"budget": 10_000}):
                data = json.loads(compress(conv, level=level, **options).to_json())  # type: ignore[arg-type]
                errors = [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(data)]
                assert errors == [], (name, level, options)


# -- determinism and idempotence -------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_same_input_same_json(name: str) -> None:
    first = compress(load(name), budget=300).to_json(timings=False)
    second = compress(load(name), budget=300).to_json(timings=False)
    assert first == second
    assert "timings_ms" not in json.loads(first)
    assert "timings_ms" in json.loads(compress(load(name), budget=300).to_json())


def _summary_facts(result: CompressionResult) -> set[str]:
    """The exact facts of the summary, its header line left out (it names message ranges
    that change from pass to pass)."""
    assert result.summary is not None
    body = result.summary.render().split("\n", 1)[1]
    return {f.text for f in facts(body)}


@pytest.mark.parametrize("name", ["coding_en", "coding_zh", "sql_en", "sql_zh", "multiday_en"])
@pytest.mark.parametrize("level", LEVELS)
def test_compressing_again_keeps_the_facts(name: str, level: str) -> None:
    conv = load(name)
    options: dict[str, int] = {}
    if compress(conv, level=level).summary is None:  # the level would not make it shorter
        options["budget"] = int(get_counter("estimate").count_messages(conv.messages) * 0.8)
    result = compress(conv, level=level, **options)  # type: ignore[arg-type]
    kept = _summary_facts(result)
    assert kept
    for _ in range(2):
        result = compress(Conversation(messages=result.messages), level=level,
                          **options)  # type: ignore[arg-type]
    text = result.text()
    assert sorted(fact for fact in kept if fact not in text) == []
    assert_valid_for_both_apis(result)


def _compressed_twice(name: str) -> tuple[CompressionResult, CompressionResult]:
    """``name`` compressed (normal level), then its output compressed again a token
    smaller (as a context that keeps growing is): the earlier handover is summarized."""
    first = compress(load(name))
    again = compress(Conversation(messages=first.messages),
                     budget=first.compressed_tokens - 1)
    assert first.summary is not None and again.summary is not None
    return first, again


def test_compressing_again_keeps_section_titles_of_carried_items() -> None:
    first, again = _compressed_twice("coding_en")
    assert first.summary is not None and again.summary is not None
    assert again.template == first.template == "claude"
    before = {i.text: s.key for s in first.summary.sections for i in s.items}
    after = {i.text: s.key for s in again.summary.sections for i in s.items}
    carried = [text for text in before if text in after]
    # a line carried over stays under its section; the user's requests are all carried
    # (an older "last actions" line may give way to the newer one)
    assert carried and all(after[text] == before[text] for text in carried)
    assert {t for t, key in before.items() if key == "request"} <= set(carried)


@pytest.mark.parametrize("name", ["coding_en", "coding_zh"])
def test_an_earlier_summarys_header_and_bullets_are_no_lines(name: str) -> None:
    _, again = _compressed_twice(name)
    assert again.summary is not None
    texts = [i.text for i in again.summary.items]
    assert [t for t in texts if t.startswith(("-", "#", "[precis", "In short"))
            or re.search(r"\[S\d+(?:[-, ]+S\d+)*\]|verbatim\]|原文消息\]", t)] == []
    assert len(texts) == len(set(texts))


# -- real sessions (../shared/data, skipped when absent) ----------------------------------------

REAL = [
    "transcripts/claude-code/python-to-rust-port.transcript.jsonl",
    "transcripts/claude-code/marot-spotter.subagent-aa84377.jsonl",
    "transcripts/openai/tau-bench-gpt-4o-airline-first100.json",
    "transcripts/openai/swe-agent-marshmallow-1867.traj",
    "transcripts/openai/openhands-multi-swe-bench.output.jsonl",
    "transcripts/anthropic/python-to-rust-port.messages.json",
    "transcripts/zh/sharegpt-zh-first500.jsonl",
]


@pytest.mark.data
@pytest.mark.parametrize("path", REAL)
def test_real_sessions_fit_and_stay_valid(shared_data: Path, path: str) -> None:
    file = shared_data / path
    if not file.is_file():
        pytest.skip(f"{file} not found")
    conv = precis.load_all(file).conversations[0]
    counter = get_counter("estimate")
    system = counter.count_messages([m for m in conv.messages if m.role == "system"])
    full = counter.count_messages(conv.messages)
    for budget in {max(system + 200, int(full * share)) for share in (0.1, 0.25)}:
        result = compress(conv, budget=budget)
        assert result.compressed_tokens <= budget
        assert_valid_for_both_apis(result)
        assert [m for m in result.messages if m.role == "system"] == [
            m for m in conv.messages if m.role == "system"]
        if result.summary is not None:
            assert _citation_problems(conv, result) == []
