"""Sentences of a prose block, Chinese and English, in one regex pass over the block.

Boundaries:

* after ``。！？；`` (full width) and after ``!`` / ``?``, with any closing quotes or
  brackets that follow (``“好。”``, ``(see above.)``); ``…`` / ``……`` too, unless a
  lower-case Latin letter follows;
* after ``.`` / ``!`` / ``?`` (and ``...``) followed by white space and then an upper-case
  letter, a Han character, an opening quote or bracket, ``*``, ``_``, a backtick, or the
  end of the block; ``!`` / ``?`` also before a lower-case letter is *not* a boundary;
* at a line break, unless it is a soft wrap: the line ends in a Latin letter, digit, comma,
  hyphen, quote, bracket or space and the next line starts (unindented) with a lower-case
  Latin letter.

Never a boundary: a ``.`` not followed by white space (``3.14``, ``v1.2.3``, ``a.b()``,
``https://x.y/z.html``, ``src/app/main.py``, ``C:\\dir\\file.txt``, ``me@x.org``), an
abbreviation (``e.g.``, ``i.e.``, ``etc.``, ``Mr.``, ``Dr.``, ``U.S.``, ``vs.``, ``Fig.``,
a single upper-case initial), a one- or two-digit number (``步骤 1. 安装 2. 配置``, an
inline enumeration), anything inside inline code (```a. B```), and the inside of an
ellipsis. Every candidate is checked in O(1), so the pass is linear in the block length.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from functools import cache

__all__ = ["ABBREVIATIONS", "MAX_SENTENCE_CHARS", "split_sentences"]

MAX_SENTENCE_CHARS = 1000
"""A piece with no boundary longer than this is kind ``paragraph`` instead of ``sentence``."""

ABBREVIATIONS = frozenset(
    [
        "e.g.",
        "i.e.",
        "etc.",
        "vs.",
        "cf.",
        "al.",
        "approx.",
        "resp.",
        "viz.",
        "ca.",
        "ibid.",
        "esp.",
        "incl.",
        "excl.",
        "misc.",
        "mr.",
        "mrs.",
        "ms.",
        "dr.",
        "prof.",
        "sr.",
        "jr.",
        "st.",
        "mt.",
        "gen.",
        "gov.",
        "sgt.",
        "capt.",
        "lt.",
        "col.",
        "rev.",
        "hon.",
        "messrs.",
        "fig.",
        "figs.",
        "eq.",
        "eqs.",
        "eds.",
        "dept.",
        "inc.",
        "ltd.",
        "corp.",
        "bros.",
        "jan.",
        "feb.",
        "mar.",
        "apr.",
        "jun.",
        "jul.",
        "aug.",
        "sep.",
        "sept.",
        "oct.",
        "nov.",
        "dec.",
    ]
)
"""Words ending in ``.`` that do not end a sentence (matched case-insensitively). Words that
also end sentences in everyday text (``no.``, ``sun.``, ``sat.``, ``est.``, ``sec.``, ``co.``)
are left out on purpose."""

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december", "jan", "feb", "mar", "apr", "jun",
           "jul", "aug", "sep", "sept", "oct", "nov", "dec")
_CLOSERS = "\"'”’」』）)\\]】》〉›»"
_CJK = "\u3000-\u9fff\uf900-\ufaff\uff00-\uffef"
_STARTERS = "A-Z\u00c0-\u00d6\u00d8-\u00de\u0391-\u03a9\u0410-\u042f\"'“‘「『《（(【\\[*_`" + _CJK
# One pass finds every boundary. The pattern starts with a plain character class so the
# regex engine skips to candidates at C speed; lookbehinds then say which rule applies:
#   a line break that is not a soft wrap (Latin text continued in lower case);
#   a cluster with 。！？； (always a boundary);
#   ! ? … or .. before white space + not-lower-case, before a CJK character, or at the end;
#   a single . before white space + a sentence start, or at the end, unless the word before
#   it is an abbreviation, an initial or a 1-2 digit enumerator (fixed-width lookbehinds).
# A cluster is only matched from its first character (the (?<![P].) check), so a run of
# punctuation is scanned once and the whole pass stays linear.
_P = ".!?。！？；…"
_SOFT_END = rf"(?=\s*\Z|\s+[^a-z\s]|[{_CJK}])"


def _not_abbreviation() -> str:
    by_length: dict[int, list[str]] = {}
    for word in sorted(ABBREVIATIONS):
        core = word[:-1]
        if "." not in core:  # "e.g." and "i.e." are caught by the initials rule
            by_length.setdefault(len(core), []).append(re.escape(core))
    checks = [rf"(?<!\b(?i:{'|'.join(words)})\.)" for _, words in sorted(by_length.items())]
    initials = r"(?<!\b[A-Z]\.)(?<!\b[A-Za-z]\.[A-Za-z]\.)"
    enumerators = r"(?<![^0-9.][0-9]\.)(?<![^0-9.][0-9]{2}\.)"  # "... 2. next item"
    # ... unless it is the day of a date ("on June 3. Then"): a month name comes before it
    dates = "|".join(rf"(?<=\b(?i:{m}) [0-9]{{{w}}}\.)" for m in _MONTHS for w in (1, 2))
    return "".join(checks) + initials + f"(?:{enumerators}|{dates})"


@cache
def _boundary() -> re.Pattern[str]:
    """The boundary pattern, compiled on first use (it is large)."""
    return re.compile(
        rf"[\n{_P}](?:"
        r"(?<=\n)(?!(?<=[A-Za-z0-9,;\-–'\"’”) \t]\n)[a-z])"
        rf"|(?<![{_P}].)(?:"
        rf"(?<=[。！？；])[{_P}]*[{_CLOSERS}]*"
        rf"|[.!?…]*[。！？；][{_P}]*[{_CLOSERS}]*"
        rf"|(?<=[!?…])[.!?…]*[{_CLOSERS}]*{_SOFT_END}"
        rf"|(?<=\.)(?=[.!?…]*[!?…]|\.)[.!?…]*[{_CLOSERS}]*{_SOFT_END}"
        rf"|(?<=\.){_not_abbreviation()}[{_CLOSERS}]*(?=\s*\Z|\s+[{_STARTERS}])))"
    )


_INLINE_CODE = re.compile(r"`[^`\n]*`")
_VISIBLE = re.compile(r"\S(?:.*\S)?", re.S)


def _cuts(text: str, lo: int, hi: int) -> list[int]:
    """Offsets just after each sentence end in ``text[lo:hi]``, in order."""
    found = _boundary().finditer(text, lo, hi)
    if text.find("`", lo, hi) < 0:
        return [m.end() for m in found]
    spans = [m.span() for m in _INLINE_CODE.finditer(text, lo, hi)]
    starts = [s for s, _ in spans]
    cuts = []
    for m in found:
        a = m.start()
        i = bisect_right(starts, a) - 1
        if i < 0 or a >= spans[i][1]:  # not inside inline code
            cuts.append(m.end())
    return cuts


def split_sentences(text: str, lo: int, hi: int) -> list[tuple[str, int, int, None]]:
    """Sentence spans of the prose ``text[lo:hi]``, stripped, as ``(kind, start, end, None)``."""
    out: list[tuple[str, int, int, None]] = []
    visible = _VISIBLE.search
    start = lo
    cuts = _cuts(text, lo, hi)
    cuts.append(hi)
    for cut in cuts:
        v = visible(text, start, cut)
        start = cut
        if v is not None:
            s, e = v.span()
            out.append(("sentence" if e - s <= MAX_SENTENCE_CHARS else "paragraph", s, e, None))
    return out
