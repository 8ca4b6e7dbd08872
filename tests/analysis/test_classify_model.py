"""The classifier's scoring model: weighted features, softmax confidence, ties, fallbacks,
Chinese imperatives, failure outputs, repeated texts."""

from __future__ import annotations

import time

import pytest

from precis.analysis.classify import PRIORITY, classify, classify_all
from precis.analysis.cues import CueTable
from precis.analysis.model import FRAGMENT_TYPES
from precis.segment import Fragment, Provenance


def frag(text: str, role: str = "user", kind: str = "sentence", message: int = 0,
         fid: str = "S1") -> Fragment:
    return Fragment(fid, kind, text, role, "en",  # type: ignore[arg-type]
                    Provenance(message, message, 0, 0, len(text)))


# -- the scoring model ------------------------------------------------------------------


def test_confidence_is_a_probability_and_grows_with_the_evidence() -> None:
    weak = classify(frag("xyz", "user"))
    strong = classify(frag("必须用 bcrypt，禁止明文比较，不能明文存储。", "user"))
    for result in (weak, strong):
        assert 0.0 < result.confidence <= 1.0
    assert strong.type == "constraint"
    assert strong.confidence > 0.9
    assert weak.confidence < 0.6


def test_exact_ties_go_to_the_type_first_in_priority() -> None:
    table = CueTable.from_dict({"weights": {"role.user": {"goal": 1.0, "constraint": 1.0}}})
    assert PRIORITY.index("constraint") < PRIORITY.index("goal")
    result = classify(frag("xyz", "user"), table)
    assert result.type == "constraint"
    # 2 of 11 types at e^1, 9 at e^0
    assert result.confidence == pytest.approx(2.718282 / (2 * 2.718282 + 9), abs=1e-4)


def test_without_any_votes_the_speaker_decides() -> None:
    table = CueTable.from_dict({"weights": {}})
    expected = {"user": "background", "assistant": "fact", "tool": "fact",
                "system": "constraint", "robot": "fact"}
    for role, kind in expected.items():
        result = classify(frag("hello there", role), table)
        assert result.type == kind, role
        assert result.confidence == pytest.approx(1 / 11, abs=1e-4)


def test_a_weight_override_changes_the_answer_and_a_zero_removes_a_vote() -> None:
    fragment = frag("What does the nightly job do?", "user")
    assert classify(fragment).type == "background"
    table = CueTable.default().extended({"weights": {"question.user": {"goal": 6.0}}})
    assert classify(fragment, table).type == "goal"
    again = table.extended({"weights": {"question.user": {"goal": 0}}})
    assert classify(fragment, again).type == "background"


def test_evidence_puts_the_winners_cues_first_and_the_speaker_last() -> None:
    result = classify(frag("密码必须用 bcrypt 校验，因为明文不安全。", "user"))
    assert result.type == "constraint"
    assert result.evidence[0] == "cue:必须"
    assert "cue:因为" in result.evidence
    assert result.evidence.index("cue:必须") < result.evidence.index("cue:因为")
    assert result.evidence[-1] == "role:user"


# -- Chinese imperatives ------------------------------------------------------------------


@pytest.mark.parametrize("text", ["尝试使用C调音阶。", "列出所有超过 30 天没登录的用户。",
                                  "翻译成英文。", "继续"])
def test_a_chinese_request_opening_with_a_verb_is_a_goal(text: str) -> None:
    result = classify(frag(text, "user"))
    assert result.type == "goal", result
    assert "structure:imperative" in result.evidence


def test_a_chinese_instruction_from_the_assistant_is_a_plan_step() -> None:
    result = classify(frag("打开「设置」页面，点击「检查更新」按钮。", "assistant"))
    assert result.type == "plan", result
    assert "structure:imperative" in result.evidence


def test_a_noun_that_starts_like_a_verb_is_not_an_imperative() -> None:
    # 用户 (user) opens with 用 (use), which is not in the list on its own
    result = classify(frag("用户表一共有 120 万行。", "assistant"))
    assert "structure:imperative" not in result.evidence
    assert result.type == "fact"


# -- failure outputs ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "signal"),
    [
        ("2024-05-13 10:22:01,311 ERROR [worker-3] payment sync failed: timeout", "log_error"),
        ("[ERROR] BUILD FAILURE\n[ERROR] Failed to execute goal on project api", "log_error"),
        ('time=2024-05-13T10:22:01Z level=error msg="cannot connect to db"', "log_error"),
        ("Process exited with code 137", "exit_code"),
        ("bash: pnpm: command not found", "os_error"),
        ("cat: /etc/app.yaml: No such file or directory", "os_error"),
        ("ORA-00942: table or view does not exist", "sql_error"),
        ("NAME      READY   STATUS             RESTARTS\n"
         "api-7d9f  0/1     CrashLoopBackOff   6", "cluster_error"),
        ('{"status": 429, "message": "Too many requests", "retry_after": 2}', "error_status"),
        ("BUILD FAILED in 41s", "build_failed"),
    ],
)
def test_common_failure_outputs_from_tools_are_errors(output: str, signal: str) -> None:
    result = classify(frag(output, "tool", "tool_result"))
    assert result.type == "error", result
    assert "structure:" + signal in result.evidence


@pytest.mark.parametrize(
    "output",
    [
        "Process exited with code 0",
        '{"status": 200, "items": 3}',
        "2024-05-13 10:22:01,311 INFO [worker-3] payment sync done in 0.4s",
        "NAME        READY   STATUS    RESTARTS\napi-7d9f    1/1     Running   0",
    ],
)
def test_successful_outputs_are_not_errors(output: str) -> None:
    assert classify(frag(output, "tool", "tool_result")).type == "fact"


# -- repeated texts -------------------------------------------------------------------------


def test_a_text_repeated_many_times_is_classified_once_and_quickly() -> None:
    text = "The nightly export writes 1,204 rows to s3://acme-exports/daily/."
    items = [frag(text, "assistant", message=i, fid=f"S{i}") for i in range(20000)]
    start = time.perf_counter()
    results = classify_all(items)
    elapsed = time.perf_counter() - start
    assert len(results) == 20000
    assert all(r is results[0] for r in results)  # one answer, shared
    assert results[0] == classify(items[0])
    assert elapsed < 2.0


def test_repeated_texts_in_different_contexts_keep_their_own_answers() -> None:
    question = frag("Should I drop the rows or keep them?", "assistant", message=0, fid="S1")
    reply = frag("Drop them.", "user", message=1, fid="S2")
    alone = frag("Drop them.", "user", message=3, fid="S4")
    other = frag("Here is the summary.", "assistant", message=2, fid="S3")
    results = classify_all([question, reply, other, alone])
    assert results[1].type == "decision"
    assert "context:answers_question" in results[1].evidence
    assert "context:answers_question" not in results[3].evidence


def test_every_type_can_win() -> None:
    samples = {
        "goal": ("user", "sentence", "Please implement pagination for the /users endpoint."),
        "background": ("user", "sentence", "We migrated from MySQL to Postgres last year."),
        "fact": ("assistant", "sentence", "The table has 12,408,331 rows."),
        "reasoning": ("assistant", "sentence", "Because the index is on (a, b), a filter on b "
                      "alone cannot use it."),
        "decision": ("user", "sentence", "Let's go with Redis for the cache."),
        "constraint": ("user", "sentence", "Never log the user's password."),
        "plan": ("assistant", "sentence", "First I'll back up the database, then run the "
                 "migration."),
        "code": ("assistant", "code", "```python\nprint('hi')\n```"),
        "error": ("tool", "tool_result", "Traceback (most recent call last):\n  File \"a.py\", "
                  "line 1, in <module>\nValueError: bad"),
        "todo": ("user", "sentence", "TODO: add tests for the edge cases."),
        "chitchat": ("user", "sentence", "Thanks!"),
    }
    assert set(samples) == set(FRAGMENT_TYPES)
    for expected, (role, kind, text) in samples.items():
        assert classify(frag(text, role, kind)).type == expected, text
