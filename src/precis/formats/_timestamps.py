"""Turn the date / time strings found in conversation files into ISO 8601.

Sources write times in many shapes: ISO 8601 (``2024-05-01T10:00:00Z``), ISO with a space
or slashes (``2024/05/01 10:00``), LoCoMo's ``1:56 pm on 8 May, 2023``, English month
names in either order (``May 8, 2023 1:56 PM``), and Chinese dates (``2024年5月1日 下午3:05``).
:func:`to_iso` understands these and answers ``None`` for anything else, so callers keep the
raw string (in metadata) instead of guessing. Times without a zone stay naive: precis never
invents a time zone.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time

__all__ = ["to_iso"]

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"

_DATE_PATTERNS = (
    # 8 May, 2023 / 8 May 2023
    re.compile(r"\b(?P<day>\d{1,2})(?:st|nd|rd|th)?\s+" + _MONTH + r",?\s+(?P<year>\d{4})\b", re.I),
    # May 8, 2023 / May 8 2023
    re.compile(r"\b" + _MONTH + r"\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<year>\d{4})\b", re.I),
    # 2023-05-08 / 2023/05/08 / 2023.05.08
    re.compile(r"\b(?P<year>\d{4})[-/.](?P<mnum>\d{1,2})[-/.](?P<day>\d{1,2})(?!\d)"),
    # 2023年5月8日
    re.compile(r"(?P<year>\d{4})\s*年\s*(?P<mnum>\d{1,2})\s*月\s*(?P<day>\d{1,2})\s*[日号]"),
)

_TIME = re.compile(
    r"(?P<cn>上午|下午|晚上|凌晨|中午)?\s*"
    r"(?<![\d.])(?P<hour>\d{1,2})[:：](?P<minute>\d{2})(?:[:：](?P<second>\d{2}))?(?!\d)"
    r"(?:\s*(?P<ampm>[ap])\.?\s?m\b\.?)?",
    re.I,
)


def _iso_direct(raw: str) -> str | None:
    """ISO 8601 (and its space / slash spellings) through :mod:`datetime` itself."""
    text = raw.strip()
    if not re.fullmatch(r"\d{4}[-/]\d{2}[-/]\d{2}([T ][0-9:.,]+(Z|[+-]\d{2}:?\d{2})?)?", text):
        return None
    text = text[:10].replace("/", "-") + text[10:]
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        if len(text) == 10:
            return date.fromisoformat(text).isoformat()
        return datetime.fromisoformat(text).isoformat()
    except ValueError:
        return None


def _find_date(text: str) -> tuple[date, tuple[int, int]] | None:
    for pattern in _DATE_PATTERNS:
        match = pattern.search(text)
        if match is None:
            continue
        groups = match.groupdict()
        month = (
            _MONTHS[groups["month"].lower()] if groups.get("month") else int(groups["mnum"])
        )
        try:
            return date(int(groups["year"]), month, int(groups["day"])), match.span()
        except ValueError:
            return None
    return None


def _find_time(text: str) -> time | None:
    match = _TIME.search(text)
    if match is None:
        return None
    hour, minute = int(match["hour"]), int(match["minute"])
    second = int(match["second"] or 0)
    ampm = (match["ampm"] or "").lower()
    cn = match["cn"]
    if ampm or cn:
        if not 1 <= hour <= 12:
            return None
        afternoon = ampm == "p" or cn in ("下午", "晚上") or (cn == "中午" and hour != 11)
        hour = hour % 12 + (12 if afternoon else 0)
    try:
        return time(hour, minute, second)
    except ValueError:
        return None


def to_iso(raw: str) -> str | None:
    """``raw`` as an ISO 8601 string, or ``None`` when it holds no recognisable date.

    >>> to_iso("1:56 pm on 8 May, 2023")
    '2023-05-08T13:56:00'
    >>> to_iso("2024-05-01 10:00")
    '2024-05-01T10:00:00'
    >>> to_iso("8 May, 2023")
    '2023-05-08'
    >>> to_iso("10:00") is None
    True
    """
    if not raw or len(raw) > 200:
        return None
    direct = _iso_direct(raw)
    if direct is not None:
        return direct
    found = _find_date(raw)
    if found is None:
        return None
    day, (start, end) = found
    clock = _find_time(raw[:start] + " " * (end - start) + raw[end:])
    if clock is None:
        return day.isoformat()
    return datetime.combine(day, clock).isoformat()
