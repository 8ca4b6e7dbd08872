"""The fragment type classifier: rules, structure, context, the voter hook, robustness."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import precis
from precis.analysis.classify import TypeVoter, classify, classify_all
from precis.analysis.cues import CueTable
from precis.analysis.model import FRAGMENT_TYPES, Classification, FragmentType
from precis.errors import ConfigError
from precis.segment import Fragment, Provenance

KINDS = ("heading", "paragraph", "sentence", "list_item", "code", "sql", "json", "table",
         "tool_call", "tool_result", "thinking", "image")


def frag(text: str, role: str = "user", kind: str = "sentence", hint: str | None = None,
         message: int = 0, fid: str = "S1") -> Fragment:
    return Fragment(fid, kind, text, role, "en", Provenance(message, message, 0, 0, len(text)),
                    hint)  # type: ignore[arg-type]


def seq(*items: tuple[str, str] | tuple[str, str, str]) -> list[Fragment]:
    """Fragments in order; a new message whenever the role changes."""
    out: list[Fragment] = []
    message = -1
    for i, item in enumerate(items):
        role, text = item[0], item[1]
        kind = item[2] if len(item) > 2 else "sentence"
        if not out or out[-1].role != role:
            message += 1
        out.append(frag(text, role, kind, message=message, fid=f"S{i + 1}"))
    return out


# -- sentences by type (hand-written, checked by hand) --------------------------------------

SENTENCES: list[tuple[FragmentType, str, str]] = [
    # goal
    ("goal", "user", "I need a script that removes duplicate rows from a CSV file."),
    ("goal", "user", "Could you write a function that parses ISO dates?"),
    ("goal", "user", "Please implement pagination for the /users endpoint."),
    ("goal", "user", "Help me set up a nightly backup of the database."),
    ("goal", "user", "The goal is to cut the API latency in half."),
    ("goal", "user", "Add a retry to the upload step."),
    ("goal", "user", "请帮我写一个脚本，把日志按天切分。"),
    ("goal", "user", "我想做一个小程序，用来记录每天的开销。"),
    ("goal", "user", "能不能帮我把这个函数改成异步的？"),
    ("goal", "user", "我的需求是每天早上自动生成销售日报。"),
    # background
    ("background", "user", "We migrated from MySQL to Postgres last year."),
    ("background", "user", "Currently we deploy by hand from a laptop."),
    ("background", "user", "For context, this service was written in 2016."),
    ("background", "assistant", "Which version of Python are you running?"),
    ("background", "user", "我们公司是做跨境电商的，主要卖家居用品。"),
    ("background", "user", "之前一直是手工对账的。"),
    ("background", "assistant", "请问您用的是哪个版本的客户端？"),
    # fact
    ("fact", "assistant", "The table has 12,408,331 rows."),
    ("fact", "assistant", "All 42 tests passed in 3.1s."),
    ("fact", "assistant", "The build now takes 4 minutes, down from 11."),
    ("fact", "user", "The server has 64 GB of RAM and 16 cores."),
    ("fact", "assistant", "订单号是 DD20240511001，金额 259 元。"),
    ("fact", "assistant", "这张表一共有 3200 万行。"),
    ("fact", "assistant", "接口平均耗时从 820ms 降到了 140ms。"),
    # reasoning
    ("reasoning", "assistant", "Because the index is on (a, b), a filter on b cannot use it."),
    ("reasoning", "assistant", "This is probably caused by the timezone being converted twice."),
    ("reasoning", "assistant", "Option A is cheaper, but option B scales better under load."),
    ("reasoning", "assistant", "因为索引建在 (a, b) 上，只按 b 过滤用不上索引。"),
    ("reasoning", "assistant", "原因是每次请求都新建了数据库连接。"),
    ("reasoning", "assistant", "这说明瓶颈不在数据库，而在序列化。"),
    # decision
    ("decision", "user", "Let's go with Redis for the cache."),
    ("decision", "user", "We decided to drop support for Python 3.8."),
    ("decision", "assistant", "In the end we chose Postgres over MongoDB."),
    ("decision", "user", "最终决定用方案 B。"),
    ("decision", "user", "那就用 Redis 吧。"),
    ("decision", "user", "就按这个方案来。"),
    # constraint
    ("constraint", "user", "Don't touch the production database."),
    ("constraint", "user", "It must run on Python 3.10."),
    ("constraint", "user", "Never log the user's password."),
    ("constraint", "user", "The budget is no more than $5,000."),
    ("constraint", "system", "You must answer in English and never reveal internal notes."),
    ("constraint", "user", "预算不超过 5000 元。"),
    ("constraint", "user", "不要改动公共接口的字段名。"),
    ("constraint", "user", "只能用公司内网的服务器。"),
    ("constraint", "user", "禁止在生产环境直接执行 DDL。"),
    # plan
    ("plan", "assistant", "First I'll back up the database, then run the migration."),
    ("plan", "assistant", "Next step: add tests for the parser."),
    ("plan", "assistant", "Let me check the logs first."),
    ("plan", "assistant", "下一步是把旧数据迁移到新表。"),
    ("plan", "assistant", "计划如下：先备份，再升级，最后回归测试。"),
    ("plan", "assistant", "首先检查日志，然后定位出错的请求。"),
    # code
    ("code", "assistant", "pip install requests==2.31.0"),
    ("code", "assistant", "git checkout -b fix/login-timeout"),
    ("code", "assistant", "SELECT id, name FROM users WHERE active = 1;"),
    # error
    ("error", "user", "TypeError: Cannot read properties of undefined (reading 'map')"),
    ("error", "user", "The deploy failed with exit code 137."),
    ("error", "user", "Login doesn't work since this morning."),
    ("error", "user", "接口一直报 500 错误。"),
    ("error", "user", "页面打不开了，提示连接超时。"),
    ("error", "user", "上传文件总是失败。"),
    # todo
    ("todo", "user", "TODO: add tests for the edge cases."),
    ("todo", "user", "Remember to update the changelog before the release."),
    ("todo", "assistant", "Still open: the CI image needs to move to Python 3.12."),
    ("todo", "user", "I'll write the docs tomorrow."),
    ("todo", "user", "记得明天更新文档。"),
    ("todo", "user", "这个后面再优化，先记一下。"),
    # chitchat
    ("chitchat", "user", "Thanks!"),
    ("chitchat", "user", "ok"),
    ("chitchat", "user", "haha that's annoying"),
    ("chitchat", "assistant", "You're welcome, happy to help!"),
    ("chitchat", "user", "好的"),
    ("chitchat", "user", "收到，谢谢！"),
    ("chitchat", "user", "哈哈，太好了"),
    ("chitchat", "user", "👍"),
]


@pytest.mark.parametrize(("expected", "role", "text"), SENTENCES)
def test_hand_written_sentences(expected: FragmentType, role: str, text: str) -> None:
    result = classify(frag(text, role))
    assert result.type == expected, result
    assert result.source == "rules"


def test_every_type_is_covered_by_the_hand_written_sentences() -> None:
    assert {t for t, _, _ in SENTENCES} == set(FRAGMENT_TYPES)


def test_evidence_names_the_cues_that_fired() -> None:
    result = classify(frag("密码必须用 bcrypt 校验。"))
    assert result.type == "constraint"
    assert result.evidence[0] == "cue:必须"
    result = classify(frag("We decided to drop Python 3.8."))
    assert "cue:we decided" in result.evidence
    assert "role:user" in result.evidence


def test_a_strong_cue_is_confident_and_rivals_lower_the_confidence() -> None:
    strong = classify(frag("必须用 bcrypt，禁止明文比较。"))
    mixed = classify(frag("We decided the budget must stay under $100."))
    assert strong.confidence > 0.9
    assert mixed.confidence < strong.confidence


# -- structure ------------------------------------------------------------------------------


def test_a_fenced_block_is_code() -> None:
    text = "```python\ndef add(a, b):\n    return a + b\n```"
    result = classify(frag(text, "assistant", "code", "python"))
    assert result.type == "code"
    assert "structure:code_fence" in result.evidence
    assert "code_implementation" in result.tags


def test_a_fence_without_a_language_is_code_unless_it_looks_like_output() -> None:
    code = "```\nfor i in range(3):\n    total = total + i\n    print(total)\n```"
    output = "```\n$ du -sh *\n38M\tsite-packages\n71M\tapp\n```"
    assert classify(frag(code, "user", "code")).type == "code"
    assert classify(frag(output, "user", "code")).type == "fact"


def test_a_python_traceback_is_an_error_from_a_tool_or_pasted_by_the_user() -> None:
    trace = (
        "Traceback (most recent call last):\n"
        '  File "app.py", line 3, in <module>\n'
        "    main()\n"
        "ValueError: invalid literal for int() with base 10: 'x'"
    )
    for result in (classify(frag(trace, "tool", "tool_result")),
                   classify(frag(f"```\n{trace}\n```", "user", "code"))):
        assert result.type == "error"
        assert "structure:traceback" in result.evidence
        assert "error_information" in result.tags


def test_other_error_outputs_are_errors() -> None:
    cases = [
        "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree",
        "FAILED tests/test_api.py::test_login - AssertionError\n1 failed, 9 passed in 0.4s",
        'Exception in thread "main" java.lang.NullPointerException\n'
        "    at com.acme.Order.total(Order.java:42)",
        '{"status": "REFUND_FAILED", "reason": "card closed"}',
        '{"error": {"code": "rate_limited", "retry_after": 2}}',
    ]
    for text in cases:
        assert classify(frag(text, "tool", "tool_result")).type == "error", text


def test_successful_tool_output_is_a_fact() -> None:
    cases = [
        "10 passed, 0 failed in 1.58s",
        "Failures: 0, Errors: 0, Skipped: 0",
        '{"error": null, "status": "SUCCESS", "amount": 389.0}',
        "File created successfully at: /tmp/x/src/lib.rs",
    ]
    for text in cases:
        result = classify(frag(text, "tool", "tool_result"))
        assert result.type == "fact", (text, result)
        assert "role:tool" in result.evidence


def test_a_file_read_by_a_tool_is_code() -> None:
    listing = "     1→import os\n     2→\n     3→def main():\n     4→    return os.getcwd()\n"
    assert classify(frag(listing, "tool", "tool_result")).type == "code"


def test_kinds_from_the_segmenter() -> None:
    assert classify(frag('{"command": "ls -la"}', "assistant", "tool_call")).type == "code"
    assert classify(frag("SELECT 1", "assistant", "sql")).type == "code"
    table = "| region | revenue |\n|---|---|\n| EMEA | 3.1M |"
    assert classify(frag(table, "assistant", "table")).type == "fact"
    assert classify(frag("## Results", "assistant", "heading")).type == "fact"


def test_chitchat_is_short_and_a_polite_opening_does_not_hide_content() -> None:
    assert classify(frag("thanks", "user")).type == "chitchat"
    assert classify(frag("好的", "assistant")).type == "chitchat"
    long = "Thanks, but the export still fails with a timeout after 30 seconds on every run."
    assert classify(frag(long, "user")).type == "error"


def test_questions_by_the_assistant_are_background_and_user_requests_are_goals() -> None:
    assert classify(frag("Do you deploy with Docker?", "assistant")).type == "background"
    assert classify(frag("Can you add a --dry-run flag?", "user")).type == "goal"


def test_tags_hold_one_level_and_one_actionability() -> None:
    for text in ("Please implement OAuth authentication for the API.", "haha", "x = 1"):
        tags = classify(frag(text)).tags
        assert sum(t.startswith("tech:") for t in tags) == 1, tags
        assert sum(t in ("actionable", "informational") for t in tags) == 1, tags
    assert "tech:advanced" in classify(frag("Please add authentication to the API.")).tags
    assert "actionable" in classify(frag("Please add authentication to the API.")).tags
    assert "informational" in classify(frag("haha", "user")).tags


# -- context (classify_all) -----------------------------------------------------------------


def test_list_items_take_the_type_of_their_lead_in() -> None:
    items = seq(
        ("assistant", "Here are the options:"),
        ("assistant", "- a managed Postgres on RDS", "list_item"),
        ("assistant", "- a self-hosted Postgres on EC2", "list_item"),
    )
    results = classify_all(items)
    assert results[0].type == "reasoning"
    for result in results[1:]:
        assert "context:list_lead_in" in result.evidence
        assert result.type == "reasoning"


@pytest.mark.parametrize(("reply", "expected"), [
    # a yes followed by an instruction settles the question
    ("ok keep ours.", "decision"),
    ("yes, turn it off", "decision"),
    # a reply that is a value is a fact
    ("VIP-240715-88213", "fact"),
    ("m.okafor@fastmail.example", "fact"),
    ("2 on average", "fact"),
    # an acknowledgement alone is small talk
    ("ok thanks", "chitchat"),
    ("好的", "chitchat"),
])
def test_short_replies_that_settle_or_answer_are_no_small_talk(reply: str, expected: str) -> None:
    items = seq(("assistant", "Should we keep our retry wrapper, and which order id is it?"),
                ("user", reply))
    result = classify_all(items)[1]
    assert result.type == expected, result
    label = {"decision": "structure:answer", "fact": "structure:short_data"}.get(expected)
    if label:
        assert label in result.evidence


def test_a_yes_that_goes_on_to_inform_is_no_instruction() -> None:
    items = seq(("assistant", "Is that the new signup flow?"),
                ("user", "Yeah, our retention team says a lot of people take breaks."))
    assert "structure:answer" not in classify_all(items)[1].evidence


def test_an_instruction_answering_a_question_is_a_decision() -> None:
    items = seq(("assistant", "Should I drop the rows or keep them?"),
                ("user", "Drop them, they are test data."))
    results = classify_all(items)
    assert results[1].type == "decision"
    assert "context:answers_question" in results[1].evidence
    alone = classify(items[1])
    assert alone.type == "goal"  # without the question it is a request


def test_an_explanation_after_an_error_leans_to_reasoning() -> None:
    items = seq(("tool", "TypeError: 'NoneType' object is not subscriptable", "tool_result"),
                ("assistant", "The config loader returns None when the file is empty."))
    results = classify_all(items)
    assert results[0].type == "error"
    assert "context:after_error" in results[1].evidence
    assert results[1].type == "reasoning"


def test_classify_all_agrees_with_classify_without_context() -> None:
    items = [frag(text, role, fid=f"S{i}", message=i) for i, (_, role, text)
             in enumerate(SENTENCES)]
    assert [r.type for r in classify_all(items)] == [classify(f).type for f in items]


def test_repeated_fragments_get_the_same_answer() -> None:
    items = [frag("Todos have been modified successfully.", "tool", "tool_result",
                  message=i, fid=f"S{i}") for i in range(5)]
    results = classify_all(items)
    assert len(set(results)) == 1


# -- user cues ------------------------------------------------------------------------------


def test_user_cue_extension_changes_a_result() -> None:
    fragment = frag("Blorp the widgets before lunch.", "user")
    before = classify(fragment)
    table = CueTable.default().extended({"types": {"todo": {"en": {"before lunch": 4.0}}}})
    after = classify(fragment, table)
    assert before.type != "todo"
    assert after.type == "todo"
    assert "cue:before lunch" in after.evidence
    assert classify_all([fragment], table)[0].type == "todo"


def test_invalid_user_cue_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown fragment type 'wish'"):
        CueTable.default().extended({"types": {"wish": {"en": {"i wish": 2}}}})


# -- the voter hook -------------------------------------------------------------------------


class KeywordVoter:
    """A deterministic model layer for tests: says ``todo`` for fragments mentioning
    'blorp', abstains otherwise, and records what it was asked."""

    name = "keyword-voter"

    def __init__(self) -> None:
        self.asked: list[list[str]] = []
        self.candidates: list[tuple[str, ...]] = []

    def vote(self, items: Sequence[tuple[Fragment, Classification]],
             candidates: Sequence[FragmentType]) -> list[Classification | None]:
        self.asked.append([fragment.id for fragment, _ in items])
        self.candidates.append(tuple(candidates))
        return [
            Classification("todo", 0.8, (), ("voter:blorp",)) if "blorp" in f.text.lower()
            else None
            for f, _ in items
        ]


class BrokenVoter:
    name = "broken"

    def vote(self, items: Sequence[tuple[Fragment, Classification]],
             candidates: Sequence[FragmentType]) -> list[Classification | None]:
        raise RuntimeError("model endpoint unreachable")


class ShortVoter:
    name = "short"

    def vote(self, items: Sequence[tuple[Fragment, Classification]],
             candidates: Sequence[FragmentType]) -> list[Classification | None]:
        return []


class NonsenseVoter:
    name = "nonsense"

    def vote(self, items: Sequence[tuple[Fragment, Classification]],
             candidates: Sequence[FragmentType]) -> list[object]:
        return [Classification("wish", 2.0)] * len(items)  # type: ignore[arg-type]


VOTE_ITEMS = [
    frag("```python\nprint('hi')\n```", "assistant", "code", "python", fid="S1"),
    frag("Blorp.", "user", fid="S2", message=1),
    frag("The widgets, the gadgets.", "user", fid="S3", message=1),
    frag("密码必须用 bcrypt 校验，禁止明文。", "user", fid="S4", message=1),
]


def test_voters_are_type_voters() -> None:
    assert isinstance(KeywordVoter(), TypeVoter)
    assert isinstance(BrokenVoter(), TypeVoter)


def test_only_low_confidence_fragments_go_to_the_voter() -> None:
    rules = classify_all(VOTE_ITEMS)
    voter = KeywordVoter()
    results = classify_all(VOTE_ITEMS, voter=voter, threshold=0.5)
    unsure = [f.id for f, r in zip(VOTE_ITEMS, rules) if r.confidence < 0.5]
    assert unsure == ["S2", "S3"]  # the code block and the constraint are confident
    assert voter.asked == [unsure]
    assert voter.candidates == [FRAGMENT_TYPES]
    assert results[0] == rules[0] and results[3] == rules[3]
    assert (results[1].type, results[1].source) == ("todo", "keyword-voter")
    assert results[1].evidence == ("voter:blorp", f"rules:{rules[1].type}")
    assert results[1].tags == rules[1].tags  # the voter gave none
    assert results[2] == rules[2]  # the voter abstained


def test_the_voter_is_not_called_when_every_fragment_is_confident() -> None:
    voter = KeywordVoter()
    classify_all([VOTE_ITEMS[0], VOTE_ITEMS[3]], voter=voter)
    classify_all(VOTE_ITEMS, voter=voter, threshold=0.0)
    assert voter.asked == []


@pytest.mark.parametrize("voter", [BrokenVoter(), ShortVoter(), NonsenseVoter()])
def test_a_failing_voter_leaves_the_rule_answers(voter: TypeVoter) -> None:
    rules = classify_all(VOTE_ITEMS)
    results = classify_all(VOTE_ITEMS, voter=voter)
    for rule, result in zip(rules, results):
        assert (result.type, result.confidence, result.source) == (
            rule.type, rule.confidence, "rules")
        if rule.confidence < 0.5:
            assert result.evidence == (*rule.evidence, "voter_failed")
        else:
            assert result == rule


@pytest.mark.parametrize("threshold", [-0.1, 1.5, float("nan"), "0.5", True])
def test_a_bad_threshold_is_a_config_error(threshold: object) -> None:
    with pytest.raises(ConfigError, match="threshold"):
        classify_all(VOTE_ITEMS, threshold=threshold)  # type: ignore[arg-type]


# -- robustness -----------------------------------------------------------------------------


def assert_valid(result: Classification) -> None:
    assert result.type in FRAGMENT_TYPES
    assert 0.0 <= result.confidence <= 1.0
    assert isinstance(result.tags, tuple) and all(isinstance(t, str) for t in result.tags)
    assert isinstance(result.evidence, tuple)
    assert all(isinstance(e, str) for e in result.evidence)


@pytest.mark.parametrize(
    "text",
    ["", "   \n\t ", "😀🎉🔥", "\x00\x01\x1b[31mred\x1b[0m\x7f", "\ud800 lone surrogate",
     "İstanbul ǅ ß ﬁ", "a" * 10_000, "```", "```python", "~~~\n", "?", "！", "1.", "- "],
)
def test_odd_text_never_raises(text: str) -> None:
    for role in ("user", "assistant", "tool", "system", "robot", ""):
        for kind in KINDS:
            assert_valid(classify(frag(text, role, kind)))


def test_empty_text_is_certain_chitchat() -> None:
    result = classify(frag("  \n "))
    assert (result.type, result.confidence) == ("chitchat", 1.0)


def test_a_one_megabyte_line_is_classified_quickly() -> None:
    line = ("SELECT * FROM t WHERE x = 1 AND error = 'none' ; " * 21000)[:1_000_000]
    for kind, role in (("sentence", "user"), ("tool_result", "tool"), ("code", "assistant")):
        start = time.perf_counter()
        assert_valid(classify(frag(line, role, kind)))
        assert time.perf_counter() - start < 5.0  # linear time, with room for a busy CI


def test_classification_is_deterministic() -> None:
    fragment = frag("We decided to keep Node 18 because prod runs it; don't upgrade CI yet.")
    assert classify(fragment) == classify(fragment)
    table = CueTable.from_dict(CueTable.default().to_dict())
    assert classify(fragment, table) == classify(fragment)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.text(max_size=400),
    role=st.sampled_from(["user", "assistant", "tool", "system", "", "weird"]),
    kind=st.sampled_from(KINDS),
    hint=st.none() | st.text(max_size=12),
)
def test_classify_never_raises_and_returns_a_valid_type(
    text: str, role: str, kind: str, hint: str | None
) -> None:
    assert_valid(classify(frag(text, role, kind, hint)))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.text(max_size=80), st.sampled_from(["user", "assistant", "tool"]),
                          st.sampled_from(KINDS)), max_size=12))
def test_classify_all_never_raises(items: list[tuple[str, str, str]]) -> None:
    fragments = [frag(t, r, k, message=i, fid=f"S{i}") for i, (t, r, k) in enumerate(items)]
    results = classify_all(fragments, voter=BrokenVoter())
    assert len(results) == len(fragments)
    for result in results:
        assert_valid(result)


# -- real data ------------------------------------------------------------------------------


@pytest.mark.data
def test_a_real_agent_session(shared_data: Path) -> None:
    path = shared_data / "transcripts" / "claude-code" / "python-to-rust-port.transcript.jsonl"
    fragments = precis.segment(precis.load(path)).fragments
    results = classify_all(fragments)
    assert len(results) == len(fragments)
    for fragment, result in zip(fragments, results):
        assert_valid(result)
        if fragment.kind == "tool_call":
            assert result.type == "code"
    by_id = {f.text: r.type for f, r in zip(fragments, results)}
    assert by_id["Port this Python project to Rust."] == "goal"
    assert by_id["Don't stop until all functions are ported, tests pass, and you have 100% "
                 "coverage."] == "constraint"
    types = {r.type for r in results}
    assert {"goal", "constraint", "code", "fact", "plan"} <= types
