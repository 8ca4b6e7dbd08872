"""A fast token estimator with no dependencies, calibrated against real tokenizers.

One pass classifies the UTF-8 bytes of the text (``bytes.translate`` with a 256-byte
table), a few C-speed ``count`` calls turn the classes into 15 features, and a linear
model with one coefficient set per tokenizer family turns the features into tokens:

==============  ======================================================================
feature         what it counts
==============  ======================================================================
han_common      CJK ideographs among the 551 that are one token in cl100k_base
han_rare        other ideographs in U+4000-U+9FFF
cjk_punct       other characters in U+2000-U+3FFF and U+F000-U+FFFF: CJK and general
                punctuation (，。“”…), fullwidth forms, kana, symbols, box drawing
words           runs of ASCII letters
letters         ASCII letters
uppercase       ASCII capitals (camelCase and acronyms split into more tokens)
digits          ASCII digits
digit_runs      runs of digits
spaces          spaces
space_runs      runs of spaces (a single space before a word is nearly free,
                indentation is not)
line_breaks     runs of ``\\r`` / ``\\n``
other_space     tabs and other ASCII control characters
punct           ASCII punctuation and symbols
punct_runs      runs of ASCII punctuation (``===``, ``-->``, ``"):`` merge into few tokens)
other           every other character (accented Latin, Cyrillic, emoji, ...)
==============  ======================================================================

Every feature is a count or a count of runs, and every coefficient is >= 0, so the
estimate is subadditive: ``count(a + b) <= count(a) + count(b) + 1`` (the +1 is rounding).
Accuracy against the real tokenizers is measured by ``bench/tokens_bench.py``.
"""

from __future__ import annotations

import re
from functools import cache

from precis.errors import ConfigError, TokenizerError
from precis.tokens.base import TokenCounter

__all__ = [
    "COEFFICIENTS",
    "COMMON_HAN",
    "DEFAULT_FAMILY",
    "FEATURES",
    "EstimatorCounter",
    "TextFeatures",
]

FEATURES = (
    "han_common",
    "han_rare",
    "cjk_punct",
    "words",
    "letters",
    "uppercase",
    "digits",
    "digit_runs",
    "spaces",
    "space_runs",
    "line_breaks",
    "other_space",
    "punct",
    "punct_runs",
    "other",
)

# --- produced by `python bench/calibrate_estimator.py` (see that script) -------------------
# CALIBRATION-BEGIN
COMMON_HAN = ""
COEFFICIENTS: dict[str, tuple[float, ...]] = {
    "cl100k": (1.0,) * len(FEATURES),
    "o200k": (1.0,) * len(FEATURES),
    "qwen": (1.0,) * len(FEATURES),
}
# CALIBRATION-END

DEFAULT_FAMILY = "o200k"


def _byte_classes() -> bytes:
    """The class letter of every UTF-8 byte (a lead byte stands for its character)."""
    table = bytearray(256)
    for byte in range(256):
        char = chr(byte)
        if byte < 0x80:
            if char.islower():
                cls = "a"
            elif char.isupper():
                cls = "A"
            elif char.isdigit():
                cls = "d"
            elif char == " ":
                cls = " "
            elif char in "\r\n":
                cls = "n"
            elif 0x21 <= byte <= 0x7E:
                cls = "."
            else:
                cls = "t"
        elif byte < 0xC0:
            cls = "x"  # continuation byte: its character is counted by the lead byte
        elif 0xE4 <= byte <= 0xE9:
            cls = "H"  # U+4000-U+9FFF: CJK unified ideographs (and extension A's tail)
        elif byte in (0xE2, 0xE3, 0xEF):
            cls = "P"  # U+2000-U+3FFF, U+F000-U+FFFF: punctuation, symbols, fullwidth
        else:
            cls = "o"
        table[byte] = ord(cls)
    return bytes(table)


def _mask(classes: str) -> bytes:
    """A translate table turning the given class letters into 1 and everything else to 0."""
    return bytes(1 if chr(i) in classes else 0 for i in range(256))


_CLASSES = _byte_classes()
_LETTERS = _mask("aA")
_DIGITS = _mask("d")
_SPACES = _mask(" ")
_BREAKS = _mask("n")
_PUNCT = _mask(".")


def _runs(mask: bytes) -> int:
    """Runs of 1s in a 0/1 byte string."""
    return mask.count(b"\x00\x01") + (1 if mask[:1] == b"\x01" else 0)


class TextFeatures:
    """The 15 :data:`FEATURES` of a text, given the set of common ideographs."""

    def __init__(self, common_han: str) -> None:
        if any(not 0x4E00 <= ord(c) <= 0x9FFF for c in common_han):
            raise ConfigError("common ideographs must be in U+4E00-U+9FFF")
        self.common_han = common_han
        self._not_common = re.compile(f"[^{common_han}]+") if common_han else None

    def __call__(self, text: str) -> tuple[int, ...]:
        classes = text.encode("utf-8", "surrogatepass").translate(_CLASSES)
        count = classes.count
        han = count(b"H")
        common = len(self._not_common.sub("", text)) if han and self._not_common else 0
        letters = classes.translate(_LETTERS)
        return (
            common,
            han - common,
            count(b"P"),
            _runs(letters),
            letters.count(1),
            count(b"A"),
            count(b"d"),
            _runs(classes.translate(_DIGITS)),
            count(b" "),
            _runs(classes.translate(_SPACES)),
            _runs(classes.translate(_BREAKS)),
            count(b"t"),
            count(b"."),
            _runs(classes.translate(_PUNCT)),
            count(b"o"),
        )


@cache
def _default_features() -> TextFeatures:
    return TextFeatures(COMMON_HAN)


class EstimatorCounter(TokenCounter):
    """Estimates the tokens of a tokenizer family (``cl100k``, ``o200k``, ``qwen``).

    Deterministic, dependency-free and fast (tens of MB/s); within a few percent of the
    real tokenizer on average on texts of a few hundred characters or more (see
    ``bench/tokens_bench.py`` for the measured figures).
    """

    def __init__(self, family: str = DEFAULT_FAMILY) -> None:
        if family not in COEFFICIENTS:
            raise ConfigError(
                f"unknown estimator family {family!r}; known: {', '.join(COEFFICIENTS)}",
                where="tokenizer",
            )
        self.family = family
        self.name = f"estimate:{family}"
        self._coefficients = COEFFICIENTS[family]
        self._features = _default_features()

    def count(self, text: str) -> int:
        if not isinstance(text, str):
            raise TokenizerError(f"cannot count tokens of a {type(text).__name__}")
        if not text:
            return 0
        estimate = sum(c * f for c, f in zip(self._coefficients, self._features(text)))
        return max(1, int(estimate + 0.5))
