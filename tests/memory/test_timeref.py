"""Memory's reading of time: a question's date range and a card's event day
(``precis.memory.timeref``), checked by hand on Thursday 8 June 2023."""

from __future__ import annotations

from datetime import date

import pytest

from precis.memory.timeref import TimeRange, single_day, time_range

THU = date(2023, 6, 8)
D = date


@pytest.mark.parametrize(("question", "expected"), [
    ("what did we decide last week?", TimeRange(D(2023, 5, 29), D(2023, 6, 4), "last week")),
    ("上周我们决定了什么？", TimeRange(D(2023, 5, 29), D(2023, 6, 4), "上周")),
    ("what failed yesterday", TimeRange(D(2023, 6, 7), D(2023, 6, 7), "yesterday")),
    ("三天前部署了什么", TimeRange(D(2023, 6, 5), D(2023, 6, 5), "三天前")),
    ("what is planned for tomorrow", TimeRange(D(2023, 6, 9), D(2023, 6, 9), "tomorrow")),
    ("本月的发布", TimeRange(D(2023, 6, 1), D(2023, 6, 30), "本月")),
    ("who joined in 2019", TimeRange(D(2019, 1, 1), D(2019, 12, 31), "in 2019")),
    ("2023年5月的会议", TimeRange(D(2023, 5, 1), D(2023, 5, 31), "2023年5月")),
    # several expressions: the span of all of them, named in order
    ("between last week and yesterday",
     TimeRange(D(2023, 5, 29), D(2023, 6, 7), "last week / yesterday")),
    # since / after: from the expression to today; before: everything up to it
    ("anything new since last month", TimeRange(D(2023, 5, 1), THU, "last month")),
    ("since 2021", TimeRange(D(2021, 1, 1), THU, "since 2021")),
    ("what happened after 2023-06-01", TimeRange(D(2023, 6, 1), THU, "2023-06-01")),
    ("before 2020", TimeRange(D(1970, 1, 1), D(2019, 12, 31), "before 2020")),
    ("what did we know before last week",
     TimeRange(D(1970, 1, 1), D(2023, 5, 28), "last week")),
])
def test_time_range(question: str, expected: TimeRange) -> None:
    assert time_range(question, THU) == expected


@pytest.mark.parametrize("question", [
    "what did we decide about the cutover",
    # a question does not look ahead by more than a day
    "what is planned for next week", "下个月的计划", "明年呢",
    "9999999 days ago",
])
def test_no_time_range(question: str) -> None:
    assert time_range(question, THU) is None


@pytest.mark.parametrize(("text", "day"), [
    ("I went there yesterday.", D(2023, 6, 7)),
    ("我昨天去了医院", D(2023, 6, 7)),
    ("We shipped it 3 days ago", D(2023, 6, 5)),
    ("三天前上线的", D(2023, 6, 5)),
    ("the migration ran last Friday", D(2023, 6, 2)),
    ("a couple of days ago the build broke", D(2023, 6, 6)),
    ("deadline is 2023-06-20", D(2023, 6, 20)),
    # compaction's resolved dates next to the word agree with it
    ("I adopted a cat yesterday (7 June 2023).", D(2023, 6, 7)),
    ("我昨天（2023年6月7日）去了", D(2023, 6, 7)),
    ("yesterday, or 2023-06-07", D(2023, 6, 7)),
])
def test_single_day(text: str, day: date) -> None:
    assert single_day(text, THU) == day


@pytest.mark.parametrize("text", [
    "no day here",
    "last week was busy", "上个月", "two weeks ago",  # periods are not a day
    "June 1, 2023", "2023年6月1日",  # written calendar dates are not the event's day
    "yesterday, or was it the day before yesterday?",  # they disagree
    "9999999 days ago",
])
def test_no_single_day(text: str) -> None:
    assert single_day(text, THU) is None
