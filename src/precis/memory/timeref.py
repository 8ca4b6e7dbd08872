"""Time expressions in English and Chinese, resolved to calendar ranges.

``time_range("what did we decide last week", today)`` gives the dates of the week before
``today``; ``single_day("I went there yesterday", day)`` gives the day before ``day`` (used
for a memory card's event time). Ranges are inclusive ``(first_day, last_day)``. The
expressions themselves are found by :func:`precis.timeexpr.find_times`; memory leaves out
the ones that look ahead by more than a day ("next week", 下个月, 明年).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from precis.timeexpr import TimeExpr, find_times

__all__ = ["TimeRange", "single_day", "time_range"]


@dataclass(frozen=True)
class TimeRange:
    first: date
    last: date
    phrase: str


def _times(text: str, today: date) -> list[TimeExpr]:
    return [t for t in find_times(text, today) if t.shift <= 0 or t.unit == "day"]


def time_range(text: str, today: date) -> TimeRange | None:
    """The span of the time expressions in ``text`` (all of them together), or ``None``."""
    times = _times(text, today)
    if not times:
        return None
    if len(times) == 1:
        only = times[0]
        lead = text[: only.start].rstrip().lower()
        phrase = only.text.lower()
        if lead.endswith("since") or lead.endswith("after") or phrase.startswith("since"):
            return TimeRange(only.first, max(today, only.first), only.text)
        if lead.endswith("before") or phrase.startswith("before"):
            return TimeRange(date(1970, 1, 1), only.first - timedelta(days=1), only.text)
    return TimeRange(min(t.first for t in times), max(t.last for t in times),
                     " / ".join(t.text for t in times))


def single_day(text: str, today: date) -> date | None:
    """The one day ``text`` speaks of with a day word ("yesterday", "3 days ago", "昨天")
    or an ISO date, resolved against ``today``; ``None`` when there is none or they
    disagree."""
    found = {t.first for t in _times(text, today)
             if t.kind == "iso" or (t.unit == "day" and t.kind in ("word", "count"))}
    return found.pop() if len(found) == 1 else None
