"""Time expressions in English and Chinese (``precis.timeexpr``), resolved by hand.

Most cases are read on Thursday 8 June 2023: its week runs Monday 5 June to Sunday 11 June,
the week before from Monday 29 May to Sunday 4 June.
"""

from __future__ import annotations

from datetime import date

import pytest

from precis.timeexpr import MONTH_NAMES, TimeExpr, find_times

THU = date(2023, 6, 8)
D = date


def only(text: str, anchor: date = THU) -> TimeExpr:
    found = find_times(text, anchor)
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(("phrase", "day", "shift"), [
    ("the day before yesterday", D(2023, 6, 6), -2), ("前天", D(2023, 6, 6), -2),
    ("yesterday", D(2023, 6, 7), -1), ("昨天", D(2023, 6, 7), -1),
    ("last night", D(2023, 6, 7), -1), ("昨晚", D(2023, 6, 7), -1),
    ("today", THU, 0), ("今天", THU, 0), ("tonight", THU, 0), ("今晚", THU, 0),
    ("this morning", THU, 0), ("今早", THU, 0), ("this evening", THU, 0),
    ("tomorrow", D(2023, 6, 9), 1), ("明天", D(2023, 6, 9), 1),
    # last <weekday> is the latest such day before the anchor, never the anchor itself
    ("last Friday", D(2023, 6, 2), -6), ("last Monday", D(2023, 6, 5), -3),
    ("last Thursday", D(2023, 6, 1), -7), ("last Sunday", D(2023, 6, 4), -4),
])
def test_day_words(phrase: str, day: date, shift: int) -> None:
    t = only(f"我们 {phrase} 见过" if not phrase.isascii() else f"We met {phrase}.")
    assert (t.text, t.kind, t.unit, t.shift, t.first, t.last) == (phrase, "word", "day", shift,
                                                                   day, day)


@pytest.mark.parametrize(("phrase", "unit", "shift", "first", "last"), [
    ("last week", "week", -1, D(2023, 5, 29), D(2023, 6, 4)),
    ("上周", "week", -1, D(2023, 5, 29), D(2023, 6, 4)),
    ("上星期", "week", -1, D(2023, 5, 29), D(2023, 6, 4)),
    ("上个星期", "week", -1, D(2023, 5, 29), D(2023, 6, 4)),
    ("上上周", "week", -2, D(2023, 5, 22), D(2023, 5, 28)),
    ("this week", "week", 0, D(2023, 6, 5), D(2023, 6, 11)),
    ("这周", "week", 0, D(2023, 6, 5), D(2023, 6, 11)),
    ("本周", "week", 0, D(2023, 6, 5), D(2023, 6, 11)),
    ("这个星期", "week", 0, D(2023, 6, 5), D(2023, 6, 11)),
    ("next week", "week", 1, D(2023, 6, 12), D(2023, 6, 18)),
    ("下周", "week", 1, D(2023, 6, 12), D(2023, 6, 18)),
    ("下个星期", "week", 1, D(2023, 6, 12), D(2023, 6, 18)),
    ("last weekend", "weekend", -1, D(2023, 6, 3), D(2023, 6, 4)),
    ("上周末", "weekend", -1, D(2023, 6, 3), D(2023, 6, 4)),
    ("next weekend", "weekend", 1, D(2023, 6, 17), D(2023, 6, 18)),
    ("last month", "month", -1, D(2023, 5, 1), D(2023, 5, 31)),
    ("上个月", "month", -1, D(2023, 5, 1), D(2023, 5, 31)),
    ("上月", "month", -1, D(2023, 5, 1), D(2023, 5, 31)),
    ("this month", "month", 0, D(2023, 6, 1), D(2023, 6, 30)),
    ("本月", "month", 0, D(2023, 6, 1), D(2023, 6, 30)),
    ("这个月", "month", 0, D(2023, 6, 1), D(2023, 6, 30)),
    ("next month", "month", 1, D(2023, 7, 1), D(2023, 7, 31)),
    ("下个月", "month", 1, D(2023, 7, 1), D(2023, 7, 31)),
    ("last year", "year", -1, D(2022, 1, 1), D(2022, 12, 31)),
    ("去年", "year", -1, D(2022, 1, 1), D(2022, 12, 31)),
    ("this year", "year", 0, D(2023, 1, 1), D(2023, 12, 31)),
    ("今年", "year", 0, D(2023, 1, 1), D(2023, 12, 31)),
    ("明年", "year", 1, D(2024, 1, 1), D(2024, 12, 31)),
])
def test_period_words(phrase: str, unit: str, shift: int, first: date, last: date) -> None:
    t = only(phrase)
    assert (t.kind, t.unit, t.shift, t.first, t.last) == ("word", unit, shift, first, last)


@pytest.mark.parametrize(("phrase", "unit", "shift", "first", "last"), [
    ("3 days ago", "day", -3, D(2023, 6, 5), D(2023, 6, 5)),
    ("three days ago", "day", -3, D(2023, 6, 5), D(2023, 6, 5)),
    ("三天前", "day", -3, D(2023, 6, 5), D(2023, 6, 5)),
    ("3天前", "day", -3, D(2023, 6, 5), D(2023, 6, 5)),
    ("a couple of days ago", "day", -2, D(2023, 6, 6), D(2023, 6, 6)),
    ("0 days ago", "day", 0, THU, THU),
    # a week ago is the week that holds the day that many weeks back (25 May: 22-28 May)
    ("two weeks ago", "week", -2, D(2023, 5, 22), D(2023, 5, 28)),
    ("2周前", "week", -2, D(2023, 5, 22), D(2023, 5, 28)),
    ("两个星期前", "week", -2, D(2023, 5, 22), D(2023, 5, 28)),
    ("a week ago", "week", -1, D(2023, 5, 29), D(2023, 6, 4)),
    ("five months ago", "month", -5, D(2023, 1, 1), D(2023, 1, 31)),
    ("五个月前", "month", -5, D(2023, 1, 1), D(2023, 1, 31)),
    ("a year ago", "year", -1, D(2022, 1, 1), D(2022, 12, 31)),
    ("ten years ago", "year", -10, D(2013, 1, 1), D(2013, 12, 31)),
    ("十年前", "year", -10, D(2013, 1, 1), D(2013, 12, 31)),
    ("12 years ago", "year", -12, D(2011, 1, 1), D(2011, 12, 31)),
])
def test_counts(phrase: str, unit: str, shift: int, first: date, last: date) -> None:
    t = only(phrase)
    assert (t.kind, t.unit, t.shift, t.first, t.last) == ("count", unit, shift, first, last)


@pytest.mark.parametrize(("anchor", "phrase", "first", "last"), [
    # across the turn of the year, and a week that starts in the year before
    (D(2023, 1, 15), "last month", D(2022, 12, 1), D(2022, 12, 31)),
    (D(2023, 1, 15), "2 months ago", D(2022, 11, 1), D(2022, 11, 30)),
    (D(2023, 1, 2), "上周", D(2022, 12, 26), D(2023, 1, 1)),
    # leap day
    (D(2024, 3, 1), "yesterday", D(2024, 2, 29), D(2024, 2, 29)),
    (D(2024, 3, 1), "上个月", D(2024, 2, 1), D(2024, 2, 29)),
    (D(2023, 3, 31), "a month ago", D(2023, 2, 1), D(2023, 2, 28)),
    # on a Sunday, last week / weekend / Sunday are the ones before the current week
    (D(2023, 6, 11), "last week", D(2023, 5, 29), D(2023, 6, 4)),
    (D(2023, 6, 11), "last weekend", D(2023, 6, 3), D(2023, 6, 4)),
    (D(2023, 6, 11), "last sunday", D(2023, 6, 4), D(2023, 6, 4)),
])
def test_calendar_edges(anchor: date, phrase: str, first: date, last: date) -> None:
    t = only(phrase, anchor)
    assert (t.first, t.last) == (first, last)


@pytest.mark.parametrize(("text", "kind", "unit", "first", "last"), [
    ("2023-06-01", "iso", "day", D(2023, 6, 1), D(2023, 6, 1)),
    ("June 1, 2023", "calendar", "day", D(2023, 6, 1), D(2023, 6, 1)),
    ("Sept. 3rd, 2022", "calendar", "day", D(2022, 9, 3), D(2022, 9, 3)),
    ("feb 2024", "calendar", "month", D(2024, 2, 1), D(2024, 2, 29)),
    ("in 2019", "calendar", "year", D(2019, 1, 1), D(2019, 12, 31)),
    ("since 2021", "calendar", "year", D(2021, 1, 1), D(2021, 12, 31)),
    ("2023年6月1日", "calendar", "day", D(2023, 6, 1), D(2023, 6, 1)),
    ("2023年6月1号", "calendar", "day", D(2023, 6, 1), D(2023, 6, 1)),
    ("2023年2月", "calendar", "month", D(2023, 2, 1), D(2023, 2, 28)),
    ("2021年", "calendar", "year", D(2021, 1, 1), D(2021, 12, 31)),
    # a four-digit year before 前 is that year, not a count of years
    ("2020年前", "calendar", "year", D(2020, 1, 1), D(2020, 12, 31)),
])
def test_calendar_dates(text: str, kind: str, unit: str, first: date, last: date) -> None:
    t = only(text)
    assert (t.kind, t.unit, t.shift, t.first, t.last) == (kind, unit, 0, first, last)


def test_several_in_order_with_their_places() -> None:
    text = "Yesterday I said 上周末 was fine, but LAST WEEK and 3 Days Ago and 三天前 too."
    found = find_times(text, THU)
    assert [t.text for t in found] == ["Yesterday", "上周末", "LAST WEEK", "3 Days Ago", "三天前"]
    assert all(text[t.start:t.end] == t.text for t in found)
    assert [t.language for t in found] == ["en", "zh", "en", "en", "zh"]
    assert found[2].first == D(2023, 5, 29)


@pytest.mark.parametrize("text", [
    "nothing about time here", "这里没有时间", "todays menu", "the mayor 2023",
    "eleven days ago", "a few weeks ago", "some days ago",
    "2023-02-30",  # no such day
    "9999999 days ago", "5000 years ago", "40000 months ago", "9999999天前",  # off the calendar
])
def test_what_is_not_a_time(text: str) -> None:
    assert find_times(text, THU) == []


def test_month_names() -> None:
    assert MONTH_NAMES[0] == "January" and MONTH_NAMES[8] == "September"
    assert len(MONTH_NAMES) == 12


WED = D(2024, 3, 20)  # the named days and months below are read on Wednesday 20 March 2024


@pytest.mark.parametrize(("text", "unit", "shift", "first", "last"), [
    # holidays: with a year word, or the latest one that has begun
    ("去年圣诞节", "day", -1, D(2023, 12, 24), D(2023, 12, 25)),
    ("last Christmas", "day", -1, D(2023, 12, 24), D(2023, 12, 25)),
    ("圣诞节", "day", 0, D(2023, 12, 24), D(2023, 12, 25)),
    ("Christmas 2022", "day", 0, D(2022, 12, 24), D(2022, 12, 25)),
    ("平安夜", "day", 0, D(2023, 12, 24), D(2023, 12, 24)),
    ("元旦", "day", 0, D(2024, 1, 1), D(2024, 1, 1)),
    ("New Year’s Day", "day", 0, D(2024, 1, 1), D(2024, 1, 1)),
    ("国庆", "day", 0, D(2023, 10, 1), D(2023, 10, 7)),
    ("Thanksgiving", "day", 0, D(2023, 11, 23), D(2023, 11, 23)),  # 4th Thursday
    ("母亲节", "day", 0, D(2023, 5, 14), D(2023, 5, 14)),  # 2nd Sunday of May
    # months and their parts
    ("三月初", "month", 0, D(2024, 3, 1), D(2024, 3, 10)),
    ("early March", "month", 0, D(2024, 3, 1), D(2024, 3, 10)),
    ("mid-March", "month", 0, D(2024, 3, 11), D(2024, 3, 20)),
    ("去年三月初", "month", -1, D(2023, 3, 1), D(2023, 3, 10)),
    ("2023年3月初", "month", 0, D(2023, 3, 1), D(2023, 3, 10)),
    ("四月初", "month", 0, D(2023, 4, 1), D(2023, 4, 10)),  # April 2024 has not begun
    ("十二月底", "month", 0, D(2023, 12, 21), D(2023, 12, 31)),
    ("the end of February", "month", 0, D(2024, 2, 21), D(2024, 2, 29)),
    ("上个月底", "month", -1, D(2024, 2, 21), D(2024, 2, 29)),
    ("月初", "month", 0, D(2024, 3, 1), D(2024, 3, 10)),
    ("去年底", "month", -1, D(2023, 11, 1), D(2023, 12, 31)),
    ("in May", "month", 0, D(2023, 5, 1), D(2023, 5, 31)),
    ("五月", "month", 0, D(2023, 5, 1), D(2023, 5, 31)),
    ("last March", "month", -1, D(2023, 3, 1), D(2023, 3, 31)),
    ("3月8日", "day", 0, D(2024, 3, 8), D(2024, 3, 8)),
    ("三月八号", "day", 0, D(2024, 3, 8), D(2024, 3, 8)),
    ("十二月二十五日", "day", 0, D(2023, 12, 25), D(2023, 12, 25)),
])
def test_named_days_and_months(text: str, unit: str, shift: int, first: date,
                               last: date) -> None:
    t = only(text, WED)
    assert (t.text, t.kind, t.unit, t.shift, t.first, t.last) == (
        text, "named", unit, shift, first, last)


@pytest.mark.parametrize("text", [
    "this may be wrong", "you may in fact", "三个月", "五个月前的事", "the mayor said",
])
def test_named_look_alikes_are_not_months(text: str) -> None:
    assert all(t.kind != "named" for t in find_times(text, WED))
