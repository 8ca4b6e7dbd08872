"""Calendar dates of messages, written the way the summary's reader expects them.

Only a conversation that spans more than one day gets dates in its summary (within one day
they add nothing). Timestamps are ISO 8601 strings (formats normalise them on load).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime, timedelta

from precis.model import Conversation

__all__ = ["DateFormatter", "format_date", "parse_date", "resolve_relative"]

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")


def parse_date(timestamp: str | None) -> date | None:
    if not timestamp:
        return None
    text = timestamp.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        return datetime.fromisoformat(text).date()
    except ValueError:
        try:
            return date.fromisoformat(text[:10])
        except ValueError:
            return None


def format_date(day: date, language: str) -> str:
    if language == "zh":
        return f"{day.year}年{day.month}月{day.day}日"
    return f"{day.day} {_MONTHS[day.month - 1]} {day.year}"


_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
            "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "couple of": 2}
_ZH_NUMBERS = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
               "九": 9, "十": 10}
_RELATIVE_EN = re.compile(
    r"\b(?P<phrase>the day before yesterday|yesterday|last night|today|tonight|tomorrow"
    r"|this (?:morning|afternoon|evening)"
    r"|last (?:week(?:end)?|month|year|(?:monday|tuesday|wednesday|thursday|friday|saturday"
    r"|sunday))"
    r"|next (?:week(?:end)?|month|year)"
    r"|(?P<n>\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|(?:a )?couple of)"
    r" (?P<unit>day|week|month|year)s? ago)\b",
    re.IGNORECASE,
)
_RELATIVE_ZH = re.compile(
    r"(?P<phrase>前天|昨天|昨晚|今天|今晚|明天|上上周|上周末|上周|上个?星期|上个月|去年|下周|下个?星期"
    r"|下个月|明年|(?P<n>\d+|[一两二三四五六七八九十])(?P<unit>天|周|个星期|个月|年)前)"
)


def _month_shift(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def _month_name(day: date, language: str) -> str:
    return f"{day.year}年{day.month}月" if language == "zh" else \
        f"{_MONTHS[day.month - 1]} {day.year}"


def _format_en(day: date) -> str:
    return format_date(day, "en")


def _format_zh(day: date) -> str:
    return format_date(day, "zh")


def _resolve_en(phrase: str, n: str | None, unit: str | None, day: date) -> str | None:
    low = phrase.lower()
    fmt = _format_en
    if unit:
        count = int(n) if n and n.isdigit() else _NUMBERS.get((n or "").lower(), 0)
        if not count:
            return None
        u = unit.lower()
        if u == "day":
            return fmt(day - timedelta(days=count))
        if u == "week":
            return f"the week of {fmt(day - timedelta(weeks=count))}"
        if u == "month":
            return _month_name(_month_shift(day, -count), "en")
        return str(day.year - count)
    table: dict[str, Callable[[], str]] = {
        "the day before yesterday": lambda: fmt(day - timedelta(days=2)),
        "yesterday": lambda: fmt(day - timedelta(days=1)),
        "last night": lambda: fmt(day - timedelta(days=1)),
        "today": lambda: fmt(day),
        "tonight": lambda: fmt(day),
        "this morning": lambda: fmt(day),
        "this afternoon": lambda: fmt(day),
        "this evening": lambda: fmt(day),
        "tomorrow": lambda: fmt(day + timedelta(days=1)),
        "last week": lambda: f"the week before {fmt(day)}",
        "last weekend": lambda: f"the weekend before {fmt(day)}",
        "last month": lambda: _month_name(_month_shift(day, -1), "en"),
        "last year": lambda: str(day.year - 1),
        "next week": lambda: f"the week after {fmt(day)}",
        "next weekend": lambda: f"the weekend after {fmt(day)}",
        "next month": lambda: _month_name(_month_shift(day, 1), "en"),
        "next year": lambda: str(day.year + 1),
    }
    if low in table:
        return table[low]()
    if low.startswith("last "):
        weekday = _WEEKDAYS.index(low[5:])
        back = (day.weekday() - weekday) % 7 or 7
        return fmt(day - timedelta(days=back))
    return None


def _resolve_zh(phrase: str, n: str | None, unit: str | None, day: date) -> str | None:
    fmt = _format_zh
    if unit:
        count = int(n) if n and n.isdigit() else _ZH_NUMBERS.get(n or "", 0)
        if not count:
            return None
        if unit == "天":
            return fmt(day - timedelta(days=count))
        if unit in ("周", "个星期"):
            return f"{fmt(day - timedelta(weeks=count))}那周"
        if unit == "个月":
            return _month_name(_month_shift(day, -count), "zh")
        return f"{day.year - count}年"
    table: dict[str, Callable[[], str]] = {
        "前天": lambda: fmt(day - timedelta(days=2)),
        "昨天": lambda: fmt(day - timedelta(days=1)),
        "昨晚": lambda: fmt(day - timedelta(days=1)),
        "今天": lambda: fmt(day),
        "今晚": lambda: fmt(day),
        "明天": lambda: fmt(day + timedelta(days=1)),
        "上周": lambda: f"{fmt(day)}的前一周",
        "上星期": lambda: f"{fmt(day)}的前一周",
        "上个星期": lambda: f"{fmt(day)}的前一周",
        "上上周": lambda: f"{fmt(day - timedelta(weeks=2))}那周",
        "上周末": lambda: f"{fmt(day)}之前的周末",
        "上个月": lambda: _month_name(_month_shift(day, -1), "zh"),
        "上月": lambda: _month_name(_month_shift(day, -1), "zh"),
        "去年": lambda: f"{day.year - 1}年",
        "下周": lambda: f"{fmt(day)}的后一周",
        "下星期": lambda: f"{fmt(day)}的后一周",
        "下个星期": lambda: f"{fmt(day)}的后一周",
        "下个月": lambda: _month_name(_month_shift(day, 1), "zh"),
        "明年": lambda: f"{day.year + 1}年",
    }
    make = table.get(phrase)
    return make() if make else None


def resolve_relative(text: str, day: date) -> str:
    """``text`` with each relative time expression followed by what it means on ``day``:
    ``"yesterday"`` -> ``"yesterday (7 May 2023)"``,
    ``"上周"`` -> ``"上周（2023年5月8日的前一周）"``."""
    if not text.isascii():
        text = _RELATIVE_ZH.sub(
            lambda m: _annotate_zh(m, day), text) if _RELATIVE_ZH.search(text) else text
    return _RELATIVE_EN.sub(lambda m: _annotate_en(m, day), text)


def _annotate_en(m: re.Match[str], day: date) -> str:
    resolved = _resolve_en(m.group("phrase"), m.group("n"), m.group("unit"), day)
    return f"{m.group(0)} ({resolved})" if resolved else m.group(0)


def _annotate_zh(m: re.Match[str], day: date) -> str:
    resolved = _resolve_zh(m.group("phrase"), m.group("n"), m.group("unit"), day)
    return f"{m.group(0)}（{resolved}）" if resolved else m.group(0)


class DateFormatter:
    """``of_message(i)``: the date of message ``i`` as text, or ``None`` when the
    conversation's messages all fall on one day (or have no timestamps)."""

    def __init__(self, conversation: Conversation, language: str) -> None:
        self.language = language
        self._dates = [parse_date(m.timestamp) for m in conversation.messages]
        # a message without a timestamp belongs to the day of the last one before it
        last: date | None = None
        for i, day in enumerate(self._dates):
            if day is None:
                self._dates[i] = last
            else:
                last = day
        self.spans_days = len({d for d in self._dates if d is not None}) > 1
        self._cache: dict[date, str] = {}

    def annotate(self, text: str, index: int) -> str:
        """``text`` of message ``index`` with its relative dates resolved (see
        :func:`resolve_relative`); unchanged when the message has no date."""
        day = self._dates[index]
        return resolve_relative(text, day) if day is not None else text

    def of_message(self, index: int) -> str | None:
        if not self.spans_days:
            return None
        day = self._dates[index]
        if day is None:
            return None
        text = self._cache.get(day)
        if text is None:
            text = self._cache[day] = format_date(day, self.language)
        return text
