"""ResultAggregator: forms within budget, failures reported, duplicates merged, fixed order."""

from __future__ import annotations

import pytest

from precis.errors import ConfigError, InputError
from precis.subagents import LEVELS, Mark, ResultAggregator, Status, TaskResult


def _eye() -> TaskResult:
    return TaskResult("eye-1", "ok", "探索完成", (
        Mark("src/auth/login.py", "HIGH", "file", "眼分身"),
        Mark("src/utils/helper.py", "LOW", "file", "眼分身"),
        Mark("Found a SQL injection risk in the login handler.", "MEDIUM", "issue", "eye"),
    ), elapsed=1.2, agent="眼分身")


def _nose() -> TaskResult:
    return TaskResult("nose-1", "ok", "审查完成", (
        Mark("发现 SQL 注入风险", "HIGH", "issue", "鼻分身"),
        Mark("src/auth/login.py", "MEDIUM", "file", "鼻分身"),
        Mark("Found SQL injection risk in the login handler", "HIGH", "issue", "nose"),
    ), elapsed=0.3, agent="鼻分身")


def _ear() -> TaskResult:
    return TaskResult("ear-1", "failed", "", (), elapsed=0.1,
                      error="ValueError: config file missing")


def _filled(*results: TaskResult, expected: tuple[str, ...] = ()) -> ResultAggregator:
    agg = ResultAggregator(expected)
    for r in results:
        agg.add(r)
    return agg


def test_normal_form_lists_tasks_then_findings_by_level() -> None:
    agg = _filled(_eye(), _nose(), _ear(), expected=("eye-1", "nose-1", "ear-1"))
    assert agg.normal() == "\n".join([
        "## Sub-task results: 3 tasks (2 ok, 1 failed)",
        "- eye-1 ok 1.20s [眼分身]: 探索完成",
        "- nose-1 ok 0.30s [鼻分身]: 审查完成",
        "- ear-1 FAILED 0.10s: ValueError: config file missing",
        "### HIGH",
        "- [file] src/auth/login.py (eye-1, nose-1)",
        "- [issue] Found a SQL injection risk in the login handler. (eye-1, nose-1)",
        "- [issue] 发现 SQL 注入风险 (nose-1)",
        "### LOW",
        "- [file] src/utils/helper.py (eye-1)",
    ])


def test_duplicates_merge_to_the_highest_level_at_the_first_place() -> None:
    agg = _filled(_eye(), _nose())
    found = agg.findings()
    login = [f for f in found if f.text == "src/auth/login.py"]
    assert len(login) == 1 and login[0].level == "HIGH" and login[0].count == 2
    assert login[0].tasks == ("eye-1", "nose-1") and login[0].sources == ("眼分身", "鼻分身")
    sql = [f for f in found if "injection" in f.text]
    assert len(sql) == 1 and sql[0].level == "HIGH"  # MEDIUM from eye, HIGH from nose
    # the fuller wording of the two is shown, with the category of that copy
    assert sql[0].text == "Found a SQL injection risk in the login handler."
    assert found[0].text == "src/auth/login.py"


def test_findings_with_different_numbers_are_not_merged() -> None:
    agg = _filled(
        TaskResult("a", marks=(Mark("the keepalive timeout is 5 seconds", "HIGH"),)),
        TaskResult("b", marks=(Mark("the keepalive timeout is 60 seconds", "HIGH"),)),
    )
    assert len(agg.findings()) == 2


def test_merging_can_be_turned_off() -> None:
    agg = ResultAggregator(merge_duplicates=False)
    agg.add(_eye())
    agg.add(_nose())
    assert len(agg.findings()) == 6


def test_compact_form_keeps_failures_and_high_findings_only() -> None:
    agg = _filled(_eye(), _nose(), _ear(), expected=("eye-1", "nose-1", "ear-1"))
    assert agg.compact() == "\n".join([
        "3 tasks (2 ok, 1 failed); failed: ear-1",
        "- ear-1 FAILED 0.10s: ValueError: config file missing",
        "- src/auth/login.py (eye-1, nose-1)",
        "- Found a SQL injection risk in the login handler. (eye-1, nose-1)",
        "- 发现 SQL 注入风险 (nose-1)",
    ])


def test_high_only_puts_problems_first() -> None:
    agg = _filled(_eye(), _ear(), expected=("eye-1", "ear-1", "mouth-1"))
    high = agg.high_only()
    assert [(h.category, h.text) for h in high] == [
        ("failed", "ear-1 failed: ValueError: config file missing"),
        ("pending", "mouth-1 pending: no result yet"),
        ("file", "src/auth/login.py"),
    ]


def _many() -> list[TaskResult]:
    out = []
    for n in range(30):
        marks = [
            Mark(f"第 {n} 个任务的发现 {k}：数据库连接池配置 pool_size={n * 10 + k} 需要调整",
                 LEVELS[k % 3], "issue", f"agent-{n}")
            for k in range(6)
        ]
        marks.append(Mark(f"Task {n} read file src/module_{n}/handler.py and found "
                          + "detail " * 20, "MEDIUM", "file", f"agent-{n}"))
        status: Status = "failed" if n % 7 == 3 else "timeout" if n % 11 == 5 else "ok"
        out.append(TaskResult(f"task-{n}", status, "summary " * 40, tuple(marks), elapsed=n / 10,
                              error="boom" if status != "ok" else None))
    return out


def test_forms_fit_their_budgets_with_many_results() -> None:
    agg = _filled(*_many())
    normal, compact = agg.normal(), agg.compact()
    assert len(normal) <= 2000 and len(compact) <= 500
    # every failure is counted in the first line even when its own line is left out
    # failed: n % 7 == 3 -> 3, 10, 17, 24; timeout: n % 11 == 5 -> 5, 16, 27
    assert normal.splitlines()[0] == "## Sub-task results: 30 tasks (23 ok, 4 failed, 3 timeout)"
    assert compact.startswith("30 tasks (23 ok, 4 failed, 3 timeout); failed: task-3, "
                              "task-10, task-17, task-24; timeout: task-5, task-16, task-27")
    assert normal.splitlines()[-1].startswith("(left out for length: ")
    # HIGH first: with room left for nothing else, the failure lines come before any ok line
    lines = normal.splitlines()
    assert "- task-3 FAILED 0.30s: boom" in lines
    assert not any(" ok " in line for line in lines)


@pytest.mark.parametrize("budget", [0, 5, 30, 60, 120, 250, 499, 1000, 5000])
def test_every_budget_is_respected(budget: int) -> None:
    agg = _filled(*_many())
    assert len(agg.normal(budget)) <= budget
    assert len(agg.compact(budget)) <= budget


def test_order_is_declared_then_natural_task_id() -> None:
    agg = ResultAggregator(["zeta", "alpha"])
    for task_id in ["task-10", "alpha", "task-2", "zeta", "task-1"]:
        agg.add(TaskResult(task_id))
    assert [r.task_id for r in agg.results()] == ["zeta", "alpha", "task-1", "task-2", "task-10"]


def test_pending_tasks_are_reported_in_place() -> None:
    agg = _filled(TaskResult("c"), expected=("a", "b", "c"))
    assert agg.pending() == ("a", "b")
    assert agg.normal().splitlines()[:4] == [
        "## Sub-task results: 3 tasks (1 ok, 2 pending)",
        "- a PENDING: no result yet",
        "- b PENDING: no result yet",
        "- c ok",
    ]


def test_no_tasks() -> None:
    agg = ResultAggregator()
    assert agg.normal() == "## Sub-task results: no tasks" and agg.compact() == "no tasks"
    assert agg.high_only() == ()


def test_a_task_reports_once() -> None:
    agg = _filled(_eye())
    with pytest.raises(InputError) as err:
        agg.add(_eye())
    assert "'eye-1' already reported" in str(err.value)


@pytest.mark.parametrize(
    ("kwargs", "where"),
    [
        ({"task_id": ""}, "task_id"),
        ({"task_id": "t", "status": "completed"}, "task t.status"),
        ({"task_id": "t", "elapsed": -1.0}, "task t.elapsed"),
        ({"task_id": "t", "elapsed": float("nan")}, "task t.elapsed"),
        ({"task_id": "t", "marks": ["a finding"]}, "task t.marks[0]"),
        ({"task_id": "t", "text": None}, "task t.text"),
    ],
)
def test_bad_results_name_the_field(kwargs: dict[str, object], where: str) -> None:
    with pytest.raises(InputError) as err:
        TaskResult(**kwargs)  # type: ignore[arg-type]
    assert err.value.where == where


def test_bad_settings_and_arguments() -> None:
    with pytest.raises(ConfigError):
        ResultAggregator(normal_chars=-5)
    with pytest.raises(ConfigError):
        ResultAggregator().compact(-1)
    with pytest.raises(InputError):
        ResultAggregator("task-1")
    with pytest.raises(InputError):
        ResultAggregator().add({"task_id": "x"})  # type: ignore[arg-type]


def test_results_are_immutable() -> None:
    r = _eye()
    with pytest.raises(AttributeError):
        r.marks.append(Mark("x"))  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        r.status = "failed"  # type: ignore[misc]
