"""Time expressions in English and Chinese, found in text and resolved to calendar days.

``find_times("we met yesterday, 三天前 too", date(2023, 6, 8))`` gives one :class:`TimeExpr`
per expression, in text order: where it is, what kind it is, and the inclusive range of days
it names (``yesterday``: 7 June 2023; ``三天前``: 5 June 2023). Relative expressions are read
against ``anchor``: the day they were written, or today for a question. Weeks run Monday to
Sunday: on Thursday 8 June 2023, ``last week`` is 29 May to 4 June.

Understood (case does not matter):

- ``"iso"``: ``2023-06-08``;
- ``"calendar"``: ``June 8, 2023``, ``June 2023``, ``in`` / ``during`` / ``since`` /
  ``before 2019``, ``2023年6月8日`` (or ``8号``), ``2023年6月``, ``2023年``;
- ``"word"``: the day before yesterday, yesterday, last night, today, tonight, this morning /
  afternoon / evening, tomorrow, last / this / next week, last / next weekend, last / this /
  next month and year, last Friday; 前天, 昨天, 昨晚, 今天, 今晚, 今早, 明天, 上上周, 上周末,
  上周, 上(个)星期, 这周, 本周, 这(个)星期, 下周, 下(个)星期, 上(个)月, 这个月, 本月, 下个月,
  去年, 今年, 明年;
- ``"count"``: ``3 days ago``, ``a week ago``, ``a couple of months ago``, ``ten years ago``,
  ``三天前``, ``2周前``, ``两个星期前``, ``五个月前``, ``十年前`` (numbers up to ten in words).

A count too large for the calendar ("9999999 days ago") or a date that does not exist
(``2023-02-30``) is skipped. Standard library only: compaction imports this.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Literal

__all__ = ["MONTH_NAMES", "Kind", "TimeExpr", "Unit", "find_times"]

Kind = Literal["iso", "calendar", "word", "count"]
Unit = Literal["day", "week", "weekend", "month", "year"]

MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August",
               "September", "October", "November", "December")
_MONTHS = {name.lower(): i for i, name in enumerate(MONTH_NAMES, 1)}
_MONTHS.update({name[:3].lower(): i for i, name in enumerate(MONTH_NAMES, 1)})
_MONTHS["sept"] = 9
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_EN_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
              "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_ZH_COUNTS = {**dict(zip("一二三四五六七八九十", range(1, 11))), "两": 2}
_COUNTS = {**_EN_COUNTS, "couple of": 2, "a couple of": 2, **_ZH_COUNTS}
_UNITS: dict[str, Unit] = {"day": "day", "week": "week", "month": "month", "year": "year",
                           "天": "day", "周": "week", "个星期": "week", "个月": "month",
                           "年": "year"}
# each word: what it names and how many of those it lies from the anchor
_WORDS: dict[str, tuple[Unit, int]] = {
    "the day before yesterday": ("day", -2), "yesterday": ("day", -1),
    "last night": ("day", -1), "today": ("day", 0), "tonight": ("day", 0),
    "this morning": ("day", 0), "this afternoon": ("day", 0), "this evening": ("day", 0),
    "tomorrow": ("day", 1),
    "last week": ("week", -1), "this week": ("week", 0), "next week": ("week", 1),
    "last weekend": ("weekend", -1), "next weekend": ("weekend", 1),
    "last month": ("month", -1), "this month": ("month", 0), "next month": ("month", 1),
    "last year": ("year", -1), "this year": ("year", 0), "next year": ("year", 1),
    "前天": ("day", -2), "昨天": ("day", -1), "昨晚": ("day", -1), "今天": ("day", 0),
    "今晚": ("day", 0), "今早": ("day", 0), "明天": ("day", 1),
    "上上周": ("week", -2), "上周": ("week", -1), "上星期": ("week", -1),
    "上个星期": ("week", -1), "这周": ("week", 0), "本周": ("week", 0), "这星期": ("week", 0),
    "这个星期": ("week", 0), "下周": ("week", 1), "下星期": ("week", 1),
    "下个星期": ("week", 1), "上周末": ("weekend", -1),
    "上月": ("month", -1), "上个月": ("month", -1), "这个月": ("month", 0),
    "本月": ("month", 0), "下个月": ("month", 1),
    "去年": ("year", -1), "今年": ("year", 0), "明年": ("year", 1),
}


def _either(words: Iterable[str]) -> str:
    """A regex for any of ``words``, longest first (上周末 before 上周), behind a look at the
    first character so that most places in a text fail at once."""
    ordered = sorted(words, key=len, reverse=True)
    firsts = "".join(sorted({w[0] for w in ordered}))
    return f"(?=[{firsts}])(?:{'|'.join(map(re.escape, ordered))})"


# each English form starts at a word boundary; English is matched in any case
_EN = (
    r"(?P<iso>\d{4}-\d{2}-\d{2}\b)"
    rf"|(?P<en_md>(?P<mname>{_either(_MONTHS)})\.?"
    r"(?:\s+(?P<mday>\d{1,2})(?:st|nd|rd|th)?)?,?\s+(?P<myear>\d{4})\b)"
    rf"|(?P<en_year>{_either(('in', 'during', 'since', 'before'))}\s+(?P<year>(?:19|20)\d{{2}})\b)"
    rf"|(?P<ago>(?P<n>\d+|{_either(_EN_COUNTS)}|(?:a\s+)?couple\s+of)"
    r"\s+(?P<unit>day|week|month|year)s?\s+ago\b)"
    rf"|last (?P<weekday>{_either(_WEEKDAYS)})\b"
    rf"|(?P<en_word>{_either(w for w in _WORDS if w.isascii())})\b"
)
_ZH = (
    r"(?P<zh_ymd>(?P<zy>\d{4})年(?P<zm>\d{1,2})月(?:(?P<zd>\d{1,2})[日号])?)"
    r"|(?P<zh_y>(?P<zy2>\d{4})年)"
    rf"|(?P<zh_ago>(?P<zn>\d+|[{''.join(_ZH_COUNTS)}])(?P<zunit>天|周|个星期|个月|年)前)"
    rf"|(?P<zh_word>{_either(w for w in _WORDS if not w.isascii())})"
)
_EN_AT_WORD = rf"(?i:(?=[\da-z])\b(?:{_EN}))"
_ZH_STARTS = "".join(_ZH_COUNTS) + "".join(sorted({w[0] for w in _WORDS if not w.isascii()}))
_ASCII_PATTERN = re.compile(_EN_AT_WORD)  # all that can match in ASCII text
_PATTERN = re.compile(rf"(?i:(?=[\da-z{_ZH_STARTS}]))(?:{_EN_AT_WORD}|{_ZH})")


@dataclass(frozen=True)
class TimeExpr:
    """One time expression in a text: ``text[start:end]``, and the days it names.

    ``unit`` is the size of what it names (a calendar date names a day, a month or a
    year); ``shift`` is, for a word or a count, how many units it lies from the anchor
    ("3 days ago" -3, "last Friday" on a Thursday -6, 上周 -1, "next year" +1); it is 0
    for a calendar date. ``first`` and ``last`` are the inclusive range of days.
    """

    text: str
    start: int
    end: int
    kind: Kind
    unit: Unit
    shift: int
    first: date
    last: date

    @property
    def language(self) -> Literal["en", "zh"]:
        return "en" if self.text.isascii() else "zh"


def find_times(text: str, anchor: date) -> list[TimeExpr]:
    """Every time expression in ``text``, in order, relative ones read against ``anchor``."""
    found: list[TimeExpr] = []
    for m in (_ASCII_PATTERN if text.isascii() else _PATTERN).finditer(text):
        try:
            kind, unit, shift, first, last = _read(m, anchor)
        # no such date, beyond the calendar, or a look-alike letter the regex let in (thıs)
        except (ValueError, OverflowError, KeyError):
            continue
        found.append(TimeExpr(m.group(0), m.start(), m.end(), kind, unit, shift, first, last))
    return found


def _read(m: re.Match[str], anchor: date) -> tuple[Kind, Unit, int, date, date]:
    form = m.lastgroup  # the outermost named group of the form that matched
    if form == "iso":
        day = date.fromisoformat(m[0])
        return "iso", "day", 0, day, day
    if form in ("en_md", "zh_ymd"):
        if form == "en_md":
            year, month, mday = int(m["myear"]), _MONTHS[m["mname"].lower()], m["mday"]
        else:
            year, month, mday = int(m["zy"]), int(m["zm"]), m["zd"]
        if mday:
            day = date(year, month, int(mday))
            return "calendar", "day", 0, day, day
        return "calendar", "month", 0, *_month(year, month)
    if form in ("en_year", "zh_y"):
        year = int(m["year"] if form == "en_year" else m["zy2"])
        return "calendar", "year", 0, date(year, 1, 1), date(year, 12, 31)
    if form in ("ago", "zh_ago"):
        raw, written_unit = (m["n"], m["unit"]) if form == "ago" else (m["zn"], m["zunit"])
        raw = " ".join(raw.lower().split())
        count = int(raw) if raw.isdigit() else _COUNTS[raw]
        unit = _UNITS[written_unit.lower()]
        return "count", unit, -count, *_span(unit, -count, anchor)
    if form == "weekday":
        back = (anchor.weekday() - _WEEKDAYS.index(m["weekday"].lower())) % 7 or 7
        day = anchor - timedelta(days=back)
        return "word", "day", -back, day, day
    unit, shift = _WORDS[m[0].lower()]
    return "word", unit, shift, *_span(unit, shift, anchor)


def _span(unit: Unit, shift: int, anchor: date) -> tuple[date, date]:
    """The days of the ``unit`` that lies ``shift`` units from ``anchor``."""
    if unit == "day":
        day = anchor + timedelta(days=shift)
        return day, day
    if unit in ("week", "weekend"):
        monday = anchor - timedelta(days=anchor.weekday()) + timedelta(weeks=shift)
        if unit == "weekend":
            return monday + timedelta(days=5), monday + timedelta(days=6)
        return monday, monday + timedelta(days=6)
    if unit == "month":
        index = anchor.year * 12 + anchor.month - 1 + shift
        return _month(index // 12, index % 12 + 1)
    return date(anchor.year + shift, 1, 1), date(anchor.year + shift, 12, 31)


def _month(year: int, month: int) -> tuple[date, date]:
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])
