"""Time expressions in English and Chinese, resolved to calendar ranges.

``time_range("what did we decide last week", today)`` gives the dates of the week before
``today``; ``single_day("I went there yesterday", day)`` gives the day before ``day`` (used
for a memory card's event time). Ranges are inclusive ``(first_day, last_day)``.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, timedelta

__all__ = ["TimeRange", "single_day", "time_range"]

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
           "seven": 7, "eight": 8, "nine": 9, "ten": 10, "一": 1, "两": 2, "二": 2, "三": 3,
           "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}

_EXPR = re.compile(
    r"(?P<iso>\b\d{4}-\d{2}-\d{2}\b)"
    r"|(?P<zh_ymd>(?P<zy>\d{4})年(?P<zm>\d{1,2})月(?:(?P<zd>\d{1,2})[日号])?)"
    r"|(?P<zh_y>(?P<zy2>\d{4})年)"
    r"|(?P<en_md>\b(?P<mname>january|february|march|april|may|june|july|august|september"
    r"|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.?"
    r"(?:\s+(?P<mday>\d{1,2})(?:st|nd|rd|th)?)?,?\s+(?P<myear>\d{4})\b)"
    r"|(?P<en_year>\b(?:in|during|since|before)\s+(?P<year>(?:19|20)\d{2})\b)"
    r"|(?P<ago>\b(?P<n>\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten)\s+"
    r"(?P<unit>day|week|month|year)s?\s+ago\b)"
    r"|(?P<zh_ago>(?P<zn>\d+|[一两二三四五六七八九十])(?P<zunit>天|周|个星期|个月|年)前)"
    r"|(?P<word>\b(?:the day before yesterday|yesterday|last night|today|tonight|this morning"
    r"|this afternoon|this evening|tomorrow|last week(?:end)?|this week|last month|this month"
    r"|last year|this year|last (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b"
    r"|前天|昨天|昨晚|今天|今晚|今早|明天|上上周|上周末|上周|上个?星期|这周|本周|这个?星期"
    r"|上个?月|这个月|本月|去年|今年)",
    re.IGNORECASE,
)
_DAY_WORDS = frozenset({"the day before yesterday", "yesterday", "last night", "today",
                        "tonight", "this morning", "this afternoon", "this evening",
                        "tomorrow", "前天", "昨天", "昨晚", "今天", "今晚", "今早", "明天"})


@dataclass(frozen=True)
class TimeRange:
    first: date
    last: date
    phrase: str


def _month(year: int, month: int) -> tuple[date, date]:
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])


def _shift_month(day: date, months: int) -> tuple[int, int]:
    index = day.year * 12 + day.month - 1 + months
    return index // 12, index % 12 + 1


def _week_of(day: date) -> tuple[date, date]:
    start = day - timedelta(days=day.weekday())
    return start, start + timedelta(days=6)


def _resolve(m: re.Match[str], today: date) -> tuple[date, date] | None:
    try:
        if m.group("iso"):
            d = date.fromisoformat(m.group("iso"))
            return d, d
        if m.group("zh_ymd"):
            y, mo = int(m.group("zy")), int(m.group("zm"))
            if m.group("zd"):
                d = date(y, mo, int(m.group("zd")))
                return d, d
            return _month(y, mo)
        if m.group("zh_y"):
            y = int(m.group("zy2"))
            return date(y, 1, 1), date(y, 12, 31)
        if m.group("en_md"):
            mo = _MONTHS[m.group("mname").lower()]
            y = int(m.group("myear"))
            if m.group("mday"):
                d = date(y, mo, int(m.group("mday")))
                return d, d
            return _month(y, mo)
        if m.group("en_year"):
            y = int(m.group("year"))
            return date(y, 1, 1), date(y, 12, 31)
    except (ValueError, KeyError):
        return None
    if m.group("ago") or m.group("zh_ago"):
        raw = m.group("n") or m.group("zn")
        count = int(raw) if raw.isdigit() else _COUNTS.get(raw.lower(), 0)
        unit = (m.group("unit") or m.group("zunit")).lower()
        if unit in ("day", "天"):
            d = today - timedelta(days=count)
            return d, d
        if unit in ("week", "周", "个星期"):
            return _week_of(today - timedelta(weeks=count))
        if unit in ("month", "个月"):
            return _month(*_shift_month(today, -count))
        return date(today.year - count, 1, 1), date(today.year - count, 12, 31)
    word = m.group("word").lower()
    days = {"the day before yesterday": -2, "前天": -2, "yesterday": -1, "last night": -1,
            "昨天": -1, "昨晚": -1, "today": 0, "tonight": 0, "this morning": 0,
            "this afternoon": 0, "this evening": 0, "今天": 0, "今晚": 0, "今早": 0,
            "tomorrow": 1, "明天": 1}
    if word in days:
        d = today + timedelta(days=days[word])
        return d, d
    if word in ("last week", "上周", "上星期", "上个星期"):
        return _week_of(today - timedelta(weeks=1))
    if word in ("last weekend", "上周末"):
        start, _ = _week_of(today - timedelta(weeks=1))
        return start + timedelta(days=5), start + timedelta(days=6)
    if word == "上上周":
        return _week_of(today - timedelta(weeks=2))
    if word in ("this week", "这周", "本周", "这星期", "这个星期"):
        return _week_of(today)
    if word in ("last month", "上月", "上个月"):
        return _month(*_shift_month(today, -1))
    if word in ("this month", "这个月", "本月"):
        return _month(today.year, today.month)
    if word in ("last year", "去年"):
        return date(today.year - 1, 1, 1), date(today.year - 1, 12, 31)
    if word in ("this year", "今年"):
        return date(today.year, 1, 1), date(today.year, 12, 31)
    if word.startswith("last "):
        back = (today.weekday() - _WEEKDAYS.index(word[5:])) % 7 or 7
        d = today - timedelta(days=back)
        return d, d
    return None


def time_range(text: str, today: date) -> TimeRange | None:
    """The span of the time expressions in ``text`` (all of them together), or ``None``."""
    spans: list[tuple[date, date, str]] = []
    for m in _EXPR.finditer(text):
        resolved = _resolve(m, today)
        if resolved is not None:
            spans.append((*resolved, m.group(0)))
    if not spans:
        return None
    if len(spans) == 1:
        lead = text[: text.find(spans[0][2])].rstrip().lower()
        first, _, phrase = spans[0]
        if lead.endswith("since") or lead.endswith("after") or phrase.lower().startswith("since"):
            return TimeRange(first, max(today, first), phrase)
        if lead.endswith("before") or phrase.lower().startswith("before"):
            return TimeRange(date(1970, 1, 1), first - timedelta(days=1), phrase)
    return TimeRange(min(s[0] for s in spans), max(s[1] for s in spans),
                     " / ".join(s[2] for s in spans))


def single_day(text: str, today: date) -> date | None:
    """The one day ``text`` speaks of with a day word ("yesterday", "3 days ago", "昨天"),
    resolved against ``today``; ``None`` when there is none or they disagree."""
    found: set[date] = set()
    for m in _EXPR.finditer(text):
        word = (m.group("word") or "").lower()
        day_like = word in _DAY_WORDS or (word.startswith("last ") and word[5:] in _WEEKDAYS)
        unit = (m.group("unit") or m.group("zunit") or "").lower()
        if not (day_like or unit in ("day", "天") or m.group("iso")):
            continue
        resolved = _resolve(m, today)
        if resolved is not None and resolved[0] == resolved[1]:
            found.add(resolved[0])
    return found.pop() if len(found) == 1 else None
