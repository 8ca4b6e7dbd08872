"""Relative dates resolved in summary text (``precis.compact._dates``), checked by hand:
written on Thursday 8 June 2023 unless said otherwise."""

from __future__ import annotations

from datetime import date

import pytest

from precis import Message
from precis.compact._dates import DateFormatter, format_date, resolve_relative
from precis.model import Conversation

THU = date(2023, 6, 8)


@pytest.mark.parametrize(("text", "expected"), [
    ("I adopted a cat yesterday.", "I adopted a cat yesterday (7 June 2023)."),
    ("the day before yesterday", "the day before yesterday (6 June 2023)"),
    ("Last night was fun", "Last night (7 June 2023) was fun"),
    ("see you tomorrow", "see you tomorrow (9 June 2023)"),
    ("this morning", "this morning (8 June 2023)"),
    ("We met last Friday", "We met last Friday (2 June 2023)"),
    ("I moved here 3 weeks ago.", "I moved here 3 weeks ago (the week of 18 May 2023)."),
    ("a couple of days ago", "a couple of days ago (6 June 2023)"),
    ("Last week I went to a parade.",
     "Last week (the week before 8 June 2023) I went to a parade."),
    ("next weekend", "next weekend (the weekend after 8 June 2023)"),
    ("last month", "last month (May 2023)"),
    ("five months ago", "five months ago (January 2023)"),
    ("two years ago", "two years ago (2021)"),
    ("next year", "next year (2024)"),
    ("yesterday and 3 days ago", "yesterday (7 June 2023) and 3 days ago (5 June 2023)"),
])
def test_english(text: str, expected: str) -> None:
    assert resolve_relative(text, THU) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("我昨天去看了医生", "我昨天（2023年6月7日）去看了医生"),
    ("前天", "前天（2023年6月6日）"),
    ("今早开会", "今早（2023年6月8日）开会"),
    ("三天前上线", "三天前（2023年6月5日）上线"),
    ("上周", "上周（2023年6月8日的前一周）"),
    ("下个星期", "下个星期（2023年6月8日的后一周）"),
    ("上上周", "上上周（2023年5月25日那周）"),
    ("两周前", "两周前（2023年5月25日那周）"),
    ("上周末", "上周末（2023年6月8日之前的周末）"),
    ("上个月", "上个月（2023年5月）"),
    ("下个月", "下个月（2023年7月）"),
    ("去年", "去年（2022年）"),
    ("明年", "明年（2024年）"),
    ("昨天说的, and yesterday too", "昨天（2023年6月7日）说的, and yesterday (7 June 2023) too"),
])
def test_chinese(text: str, expected: str) -> None:
    assert resolve_relative(text, THU) == expected


@pytest.mark.parametrize("text", [
    "no time here", "这里没有时间",
    # calendar dates are already explicit
    "on 2023-06-01", "June 2023", "2023年6月1日", "in 2019", "2020年前",
    # "this week / month / year" and a zero count are left as written
    "this week", "this month", "this year", "这周", "本月", "今年", "0 days ago",
    # 上月 is also read inside other words (登上月球), so it is left alone
    "上月", "我们登上月球",
    # beyond the calendar
    "9999999 days ago", "5000 years ago",
])
def test_left_as_written(text: str) -> None:
    assert resolve_relative(text, THU) == text


def test_formatter_annotates_with_each_messages_day() -> None:
    conv = Conversation([
        Message.of("user", "Where did you go yesterday?"),  # no date yet: left as it is
        Message.of("assistant", "Yesterday I was in Paris.", timestamp="2024-03-05T09:00:00Z"),
        Message.of("user", "and last week?"),  # no timestamp: the day of the one before
        Message.of("user", "我上周去了北京", timestamp="2024-03-11T10:00:00+08:00"),
    ])
    dates = DateFormatter(conv, "en")
    assert dates.annotate("Where did you go yesterday?", 0) == "Where did you go yesterday?"
    assert dates.annotate("Yesterday I was in Paris.", 1) == \
        "Yesterday (4 March 2024) I was in Paris."
    assert dates.annotate("and last week?", 2) == \
        "and last week (the week before 5 March 2024)?"
    assert dates.annotate("我上周去了北京", 3) == "我上周（2024年3月11日的前一周）去了北京"
    assert dates.spans_days
    assert [dates.of_message(i) for i in range(4)] == \
        [None, "5 March 2024", "5 March 2024", "11 March 2024"]


def test_format_date() -> None:
    assert format_date(THU, "en") == "8 June 2023"
    assert format_date(date(2024, 12, 1), "zh") == "2024年12月1日"
