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
  ``三天前``, ``2周前``, ``两个星期前``, ``五个月前``, ``十年前`` (numbers up to ten in words);
- ``"named"``: holidays with a fixed date (Christmas / 圣诞节, Christmas Eve / 平安夜, New
  Year / 元旦, Valentine's Day / 情人节, Halloween / 万圣节, 国庆, 劳动节, 儿童节, 教师节;
  Thanksgiving / 感恩节, Mother's / Father's Day by their weekday rule), months and parts of
  months (``三月``, ``三月初``, ``3月8日``, ``去年十二月底``, ``上个月底``, ``月初``, ``年底``,
  ``early March``, ``mid-March``, ``the end of March``, ``in March``, ``last March``), each
  with an optional year (``去年圣诞节``, ``2023年3月初``, ``last Christmas``, ``Christmas
  2023``). Without a year they are the latest one that has begun by ``anchor``; ``shift`` is
  the years a 去年 / 前年 / 今年 / 明年 / last / this puts them from ``anchor``'s year.
  Early / 初 / 上旬 is days 1-10, mid / 中旬 11-20, late / end / 下旬 / 底 / 末 21 to the
  end; 年初 is January and February, 年底 November and December.

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

Kind = Literal["iso", "calendar", "word", "count", "named"]
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


# holidays of a fixed date: (month, first day, last day)
_FIXED: dict[str, tuple[int, int, int]] = {
    "christmas eve": (12, 24, 24), "christmas day": (12, 25, 25), "christmas": (12, 24, 25),
    "new year's eve": (12, 31, 31), "new year's day": (1, 1, 1), "new year": (1, 1, 1),
    "valentine's day": (2, 14, 14), "halloween": (10, 31, 31), "independence day": (7, 4, 4),
    "平安夜": (12, 24, 24), "圣诞节": (12, 24, 25), "圣诞": (12, 24, 25), "元旦": (1, 1, 1),
    "情人节": (2, 14, 14), "万圣节": (10, 31, 31), "国庆节": (10, 1, 7), "国庆": (10, 1, 7),
    "劳动节": (5, 1, 5), "儿童节": (6, 1, 1), "教师节": (9, 10, 10),
}
# holidays on the n-th weekday of a month: (month, weekday, n)
_NTH: dict[str, tuple[int, int, int]] = {
    "thanksgiving": (11, 3, 4), "感恩节": (11, 3, 4),
    "mother's day": (5, 6, 2), "母亲节": (5, 6, 2), "father's day": (6, 6, 3), "父亲节": (6, 6, 3),
}
_HOLIDAYS = (*_FIXED, *_NTH)
_ZH_YEARS = {"前年": -2, "去年": -1, "今年": 0, "明年": 1}
_EN_YEARS = {"last": -1, "this": 0}
# parts of a month, as (first day, last day or 31 for the month's end)
_PARTS = {"初": (1, 10), "上旬": (1, 10), "中旬": (11, 20), "中": (11, 20), "下旬": (21, 31),
          "底": (21, 31), "末": (21, 31), "early": (1, 10), "the beginning of": (1, 10),
          "beginning of": (1, 10), "the start of": (1, 10), "start of": (1, 10),
          "mid": (11, 20), "the middle of": (11, 20), "middle of": (11, 20),
          "late": (21, 31), "the end of": (21, 31), "end of": (21, 31)}
_ZH_MONTH = r"十[一二]|[一二三四五六七八九十]|1[0-2]|0?[1-9]"
_ZH_DAY = r"3[01]|[12]\d|0?[1-9]|[二三]?十[一二三四五六七八九]?|[一二三四五六七八九]"


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
    rf"|(?P<en_hol>(?:(?P<ehrel>last|this)\s+)?"
    + rf"(?P<ehname>{_either(h for h in _HOLIDAYS if h.isascii())})".replace("'", "['’]")
    + r"(?:,?\s+(?P<ehyear>(?:19|20)\d{2}))?\b)"
    rf"|(?P<en_mon>(?:(?P<emp>{_either(p for p in _PARTS if p.isascii())})[\s-]+"
    r"|(?P<emrel>last|this)\s+(?!may\b)|in\s+)"
    rf"(?P<emname>{_either(_MONTHS)})\.?(?:,?\s+(?P<emyear>(?:19|20)\d{{2}}))?\b)"
    rf"|last (?P<weekday>{_either(_WEEKDAYS)})\b"
    rf"|(?P<en_word>{_either(w for w in _WORDS if w.isascii())})\b"
)
_ZH = (
    r"(?P<zh_ymd>(?P<zy>\d{4})年(?P<zm>\d{1,2})月(?:(?P<zd>\d{1,2})[日号])?(?P<zpart>初|上旬|中旬|下旬|底|末)?)"
    rf"|(?P<zh_hol>(?:(?P<hy>\d{{4}})年|(?P<hrel>{_either(_ZH_YEARS)}))?的?"
    rf"(?P<hname>{_either(h for h in _HOLIDAYS if not h.isascii())}))"
    rf"|(?P<zh_yp>(?:(?P<yprel>{_either(_ZH_YEARS)})|(?P<ypy>\d{{4}})年)?年?(?<=年)(?P<yp>初|底|末))"
    rf"|(?P<zh_md>(?P<mrel>{_either(_ZH_YEARS)})?(?<![\d一二三四五六七八九十])(?P<mon>{_ZH_MONTH})月"
    rf"(?:(?P<zmday>{_ZH_DAY})[日号]|(?P<mpart>初|上旬|中旬|下旬|底|末))?)"
    r"|(?P<zh_mp>(?:(?P<mprel>上个月|上月|这个月|本月)|月)(?P<mp2>初|底|末|上旬|中旬|下旬))"
    r"|(?P<zh_y>(?P<zy2>\d{4})年)"
    rf"|(?P<zh_ago>(?P<zn>\d+|[{''.join(_ZH_COUNTS)}])(?P<zunit>天|周|个星期|个月|年)前)"
    rf"|(?P<zh_word>{_either(w for w in _WORDS if not w.isascii())})"
)
_EN_AT_WORD = rf"(?i:(?=[\da-z])\b(?:{_EN}))"
_ZH_STARTS = "".join(_ZH_COUNTS) + "".join(sorted(
    {w[0] for w in (*_WORDS, *_HOLIDAYS) if not w.isascii()} | {"年", "月"}))
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
    if form == "zh_ymd" and m["zpart"]:
        return "named", "month", 0, *_part(int(m["zy"]), int(m["zm"]), m["zpart"])
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
    if form in ("zh_hol", "en_hol", "zh_md", "en_mon", "zh_mp", "zh_yp"):
        return _named(m, form, anchor)
    unit, shift = _WORDS[m[0].lower()]
    return "word", unit, shift, *_span(unit, shift, anchor)


def _named(m: re.Match[str], form: str, anchor: date) -> tuple[Kind, Unit, int, date, date]:
    """A holiday, a month, a day of a month or a part of a month or year (``"named"``)."""
    if form == "zh_mp":  # 月底, 上个月初: a part of this or last month
        shift = -1 if m["mprel"] in ("上个月", "上月") else 0
        first, last = _span("month", shift, anchor)
        return "named", "month", shift, *_part(first.year, first.month, m["mp2"])
    if form == "zh_yp":  # 年底, 去年初, 2023年底
        year, shift = _year(m["ypy"], _ZH_YEARS.get(m["yprel"] or ""), anchor)
        months = (1, 2) if m["yp"] == "初" else (11, 12)
        return ("named", "month", shift, date(year, months[0], 1),
                _month(year, months[1])[1])
    if form in ("zh_hol", "en_hol"):
        name, written, relative = ((m["hname"], m["hy"], _ZH_YEARS.get(m["hrel"] or ""))
                                   if form == "zh_hol" else
                                   (m["ehname"].lower().replace("’", "'"), m["ehyear"],
                                    _EN_YEARS.get((m["ehrel"] or "").lower())))
        year, shift = _year(written, relative, anchor)
        first, last = _holiday(name, year)
        if written is None and relative is None and first > anchor:  # the latest one
            first, last = _holiday(name, year - 1)
        return "named", "day", shift, first, last
    if form == "zh_md":
        month, relative, written = _zh_number(m["mon"]), _ZH_YEARS.get(m["mrel"] or ""), None
        day, part = (_zh_number(m["zmday"]) if m["zmday"] else None), m["mpart"]
    else:
        month, written = _MONTHS[m["emname"].lower()], m["emyear"]
        relative = _EN_YEARS.get((m["emrel"] or "").lower())
        day, part = None, (m["emp"] or "").lower() or None
    year, shift = _year(written, relative, anchor)
    for back in (0, 1):
        if day is not None:
            first = last = date(year - back, month, day)
        elif part is not None:
            first, last = _part(year - back, month, part)
        else:
            first, last = _month(year - back, month)
        # without a year: the latest that has begun ("last March": before this month)
        latest = relative is None or (relative == -1 and form == "en_mon")
        if written is not None or not latest or (
                first <= anchor and not (relative == -1 and first.month == anchor.month
                                         and first.year == anchor.year)):
            break
    return "named", "day" if day is not None else "month", shift, first, last


def _year(written: str | None, relative: int | None, anchor: date) -> tuple[int, int]:
    """The year a holiday or month is in, and its shift from ``anchor``'s year; an English
    "last" is resolved by the caller (the latest one before)."""
    if written is not None:
        return int(written), 0
    return anchor.year + (relative or 0), relative or 0


def _holiday(name: str, year: int) -> tuple[date, date]:
    if name in _FIXED:
        month, first, last = _FIXED[name]
        return date(year, month, first), date(year, month, last)
    month, weekday, n = _NTH[name]
    start = date(year, month, 1)
    day = start + timedelta(days=(weekday - start.weekday()) % 7 + 7 * (n - 1))
    return day, day


def _part(year: int, month: int, part: str) -> tuple[date, date]:
    first, last = _PARTS[part]
    end = calendar.monthrange(year, month)[1]
    return date(year, month, first), date(year, month, min(last, end))


def _zh_number(text: str) -> int:
    """1-31 written in digits or in Chinese numerals (十二, 二十三, 三十一)."""
    if text.isdigit():
        return int(text)
    digits = dict(zip("一二三四五六七八九", range(1, 10)))
    if "十" not in text:
        return digits[text]
    tens, _, ones = text.partition("十")
    return digits.get(tens, 1) * 10 + digits.get(ones, 0)


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
