"""Calendar dates of messages, written the way the summary's reader expects them.

Only a conversation that spans more than one day gets dates in its summary (within one day
they add nothing). Timestamps are ISO 8601 strings (formats normalise them on load).
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

from precis.model import Conversation
from precis.timeexpr import MONTH_NAMES, TimeExpr, find_times

__all__ = ["DateFormatter", "format_date", "parse_date", "resolve_relative"]


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
    return f"{day.day} {MONTH_NAMES[day.month - 1]} {day.year}"


def _label(time: TimeExpr, day: date) -> str | None:
    """What ``time``, written on ``day``, means, in its own language; ``None`` for what a
    summary leaves as written: calendar dates, a zero count ("0 days ago"), "this week /
    month / year" (这周, 本月, 今年...) and 上月 (also read inside 登上月球, 赶上月底)."""
    if time.kind not in ("word", "count") or time.text == "上月":
        return None
    if time.shift == 0 and (time.kind == "count" or time.unit != "day"):
        return None
    zh = time.language == "zh"
    language = "zh" if zh else "en"
    if time.unit == "day":
        return format_date(time.first, language)
    if time.unit == "month":
        first = time.first
        return f"{first.year}年{first.month}月" if zh else \
            f"{MONTH_NAMES[first.month - 1]} {first.year}"
    if time.unit == "year":
        return f"{time.first.year}年" if zh else str(time.first.year)
    if time.kind == "word" and time.shift in (-1, 1):  # last / next week(end), 上周, 下周
        written = format_date(day, language)
        if zh:
            if time.unit == "weekend":
                return f"{written}{'之前' if time.shift < 0 else '之后'}的周末"
            return f"{written}的{'前' if time.shift < 0 else '后'}一周"
        return f"the {time.unit} {'before' if time.shift < 0 else 'after'} {written}"
    # "3 weeks ago", 上上周: the week of the day that many weeks back
    back = format_date(day + timedelta(weeks=time.shift), language)
    return f"{back}那周" if zh else f"the week of {back}"


def resolve_relative(text: str, day: date) -> str:
    """``text`` with each relative time expression followed by what it means on ``day``:
    ``"yesterday"`` -> ``"yesterday (7 May 2023)"``,
    ``"上周"`` -> ``"上周（2023年5月8日的前一周）"``."""
    pieces: list[str] = []
    done = 0
    for time in find_times(text, day):
        label = _label(time, day)
        if label is not None:
            note = f"（{label}）" if time.language == "zh" else f" ({label})"
            pieces += [text[done:time.end], note]
            done = time.end
    return "".join(pieces) + text[done:] if pieces else text


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
