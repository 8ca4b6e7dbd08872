"""The exact tokens that must agree for two fragments to say the same thing.

Two sentences can share almost every word and still say different things: "the limit is 31
days" / "the limit is 92 days", "PAY-1287" / "PAY-1278", ``orders_2024Q1.csv`` /
``orders_2024Q2.csv``, "use MySQL" / "use Postgres". :func:`entities` extracts

* ``numbers``: numbers, versions, dates and times (``31``, ``3.10``, ``2024-05-13``,
  ``15:42``; ``1,420`` is ``1420``; a unit glued on is dropped: ``500MB`` is ``500``);
* ``names``: ids and identifiers (``pay-1287``, ``v1``, ``ch_3pbx81``, ``created_at``,
  ``invoice.dict``), paths and URLs, and proper names (``MySQL``, ``CI``, a capitalised word
  inside an English sentence, a Latin word inside Chinese text), lower-cased.

:func:`compatible` is the rule: the numbers must be equal, and one name set must contain the
other. A summary line may leave a name out ("Scope: read-only ..." after "v1 scope is
read-only ..."), but two fragments that each name something the other does not are about
different things. All patterns are anchored at token starts, so they run in linear time
even on a 1 MB line without spaces.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import NamedTuple

from precis.analysis._phrases import matching

__all__ = ["Entities", "compatible", "entities", "numbers", "numbers_of"]


class Entities(NamedTuple):
    numbers: frozenset[str]
    names: frozenset[str]


_A_CHARS = "0-9A-Za-z_./:~@#%+-"  # characters of an id / path / number token (ASCII after NFKC)
_A = f"[{_A_CHARS}]"
# A token (maximal run of _A, so the match starts only where the run does) that holds a
# digit, a slash or underscore, or a dot between letters. Every match starts with a
# character of _A or a digit: a lookahead on that turns the other positions (most of a
# Chinese text) away at once, and changes no match.
_ATOM = re.compile(rf"(?=[\d{_A_CHARS}])(?<!{_A}){_A}*(?:\d|[/_]|[A-Za-z]\.[A-Za-z]){_A}*")
_URL = re.compile(r"https?://[^\s<>\"'`)\]}，。；！？]+", re.IGNORECASE)
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_NUMBER = re.compile(r"\d+(?:[.:/-]\d+)*")
_TRIM = "./:-~@#%+_"
# Proper names: camelCase / ALLCAPS words, and capitalised words not at a sentence start.
_CAPITAL = re.compile(
    r"(?<![A-Za-z0-9_])([A-Z][A-Za-z0-9]*|[a-z]+[A-Z][A-Za-z0-9]*)(?![A-Za-z0-9_])"
)
_SENTENCE_START = re.compile(r"(?:^|[.!?:;\n•*#>\-]\s*|[\"'(\[]|\s[-*]\s)$")
_LATIN_WORD = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z][A-Za-z0-9]*(?![A-Za-z0-9_])")
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_PLAIN_WORD = re.compile(r"[a-z0-9]+")
_DIGIT = re.compile(r"\d")
_NONE: frozenset[str] = frozenset()
_FULL_WIDTH = re.compile("[\uff01-\uff5e\u3000]")
_TO_ASCII = {**{c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)}, 0x3000: 0x20}
_ALL_CAPS_NOISE = frozenset({"I", "A", "OK", "AM", "PM", "TL", "DR", "FYI", "BTW", "PS"})


def numbers(text: str) -> frozenset[str]:
    """Only the numbers of :func:`entities` (cheap when the text has no digit)."""
    if _DIGIT.search(text) is None:
        return _NONE
    found: set[str] = set()
    _tokens(_prepare(text), found, set())
    return frozenset(found)


def numbers_of(texts: Sequence[str]) -> list[frozenset[str]]:
    """:func:`numbers` of each text; those without a digit are found in one regex pass."""
    out = [_NONE] * len(texts)
    for k in matching(_DIGIT, texts):
        found: set[str] = set()
        _tokens(_prepare(texts[k]), found, set())
        out[k] = frozenset(found)
    return out


def entities(text: str) -> Entities:
    """The numbers and names of ``text`` (see the module docstring)."""
    text = _prepare(text)
    numbers: set[str] = set()
    names: set[str] = set()
    _tokens(text, numbers, names)
    _proper_names(text, names)
    return Entities(frozenset(numbers), frozenset(names))


def _prepare(text: str) -> str:
    if not text.isascii():
        if _FULL_WIDTH.search(text):
            # NFKC maps each of these to one ASCII character; doing it first leaves NFKC a
            # text it usually finds normalised already (a quick check, not a rebuild)
            text = text.translate(_TO_ASCII)
        text = unicodedata.normalize("NFKC", text)
    if "," in text:
        text = _THOUSANDS.sub("", text)
    return text


def _tokens(text: str, numbers: set[str], names: set[str]) -> None:
    """Numbers, ids, identifiers, paths and URLs of a prepared text."""
    if "://" in text:  # (every URL has it)
        for url in _URL.findall(text):
            names.add(url.rstrip(".,;:!?").lower())
    for atom in _ATOM.findall(text):
        atom = atom.strip(_TRIM)
        if not atom:
            continue
        low = atom.lower()
        if low.startswith(("http://", "https://")):
            continue  # taken whole above
        if atom[0].isdigit():
            m = _NUMBER.match(atom)
            rest = atom[m.end() :] if m else atom
            if m and (not rest or rest.isalpha() or rest == "%"):
                numbers.add(m.group())  # 3.10, 2024-05-13, 500MB -> 500, 50%
                continue
        names.add(low)


def _proper_names(text: str, names: set[str]) -> None:
    if _HAN.search(text):
        # in Chinese text a Latin word is a name (a product, a term of art): MySQL, token
        names.update(w.lower() for w in _LATIN_WORD.findall(text) if len(w) > 1)
        return
    for m in _CAPITAL.finditer(text):
        word = m.group(1)
        if len(word) < 2 or word in _ALL_CAPS_NOISE:
            continue
        inner_caps = any(c.isupper() for c in word[1:])
        if inner_caps or not _SENTENCE_START.search(text, max(0, m.start() - 3), m.start()):
            names.add(word.lower())


def compatible(a: Entities, b: Entities, text_a: str = "", text_b: str = "") -> bool:
    """Whether two fragments may say the same thing: equal numbers, nested names.

    With the texts given, a name that the other text mentions as a plain word (at a sentence
    start, in another case) does not count as missing there: "September" is a name in "moves
    to September 10" and a plain word in "Launch: September 10".
    """
    if a.numbers != b.numbers:
        return False
    if a.names <= b.names or b.names <= a.names:
        return True
    only_a = a.names - b.names
    only_b = b.names - a.names
    if text_a and text_b:
        only_a -= _words(text_b)
        only_b -= _words(text_a)
    return not only_a or not only_b


def _words(text: str) -> set[str]:
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    return set(_PLAIN_WORD.findall(text.lower()))
