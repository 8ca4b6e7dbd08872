"""Normalised text, tokens and shingles of fragments, with deterministic 32-bit hashes.

* :func:`normalize`: NFKC, lower case, punctuation / symbols / emoji to spaces, white space
  collapsed. ASCII text skips NFKC and uses one ``str.translate`` (the common case, fast).
* :func:`tokens`: runs of CJK characters (Han, kana, Hangul) and other words.
* :class:`Shingler`: the shingle set of a normalised text as 32-bit hashes: character
  n-grams of CJK runs (bigrams by default), words for everything else (lightly stemmed:
  "prices" -> "price"), English stop words and grammar-only CJK n-grams dropped. Hashes are
  CRC-32 of the UTF-8 shingle, so they are the same on every run and machine (Python's
  ``hash()`` of a string is salted per process and is never used for a value that reaches
  the output). A per-call cache keeps the cost of a repeated word to one dictionary lookup;
  :meth:`Shingler.hashes_of` shingles many texts at once, hashing the words not seen before
  together at C level.
"""

from __future__ import annotations

import heapq
import re
import string
import unicodedata
import zlib
from collections.abc import Collection, Container, Sequence
from hashlib import blake2b
from itertools import compress, repeat
from operator import add
from typing import cast

from precis.analysis._phrases import CJK_FUNCTION_CHARS, STOP_WORDS

__all__ = [
    "CJK_CHARS", "Shingler", "fingerprint", "hash32", "is_cjk", "normalize", "stem", "tokens",
]

# Han (with extension A and compatibility ideographs), kana, Hangul syllables.
CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK_RUN = re.compile(f"[{CJK_CHARS}]")
_TOKEN = re.compile(f"[{CJK_CHARS}]+|[^\\s{CJK_CHARS}]+")
_TOKEN_SPLIT = re.compile(f"([{CJK_CHARS}]+)|([^\\s{CJK_CHARS}]+)")
_PAIRS = re.compile("..", re.DOTALL)  # consecutive, non-overlapping character pairs
_WORD_RUN = re.compile(r"[^\W_]+")
# Full-width ASCII punctuation, CJK punctuation of the half-width block, the ideographic
# space and the ellipsis: each is a starter whose NFKC form holds no word character, so
# turning it into a space before NFKC gives the same normalised text (tested on random
# mixes with combining marks and jamo).
_WIDE_PUNCT = re.compile("[\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65\u3000\u2026]")

_CACHE_SIZE = 1 << 18  # words / n-grams remembered by a Shingler
_CHUNK = 16_384  # characters of a long text shingled at a time
_BATCH = 256  # texts whose words are looked up together
_ASCII_PUNCT = str.maketrans(string.punctuation, " " * len(string.punctuation))


def normalize(text: str) -> str:
    """``text`` in NFKC, lower case, with punctuation as spaces and white space collapsed."""
    if text.isascii():
        return " ".join(text.lower().translate(_ASCII_PUNCT).split())
    # Full-width punctuation ("，", "？", "（") is what usually keeps Chinese text from being
    # NFKC already; it ends up as a space either way, so it becomes one first and NFKC
    # mostly finds the text normalised (a quick check) instead of rebuilding it. Not next
    # to a capital sigma, whose lower case depends on the characters around it.
    if "\u03a3" not in text:
        text = _WIDE_PUNCT.sub(" ", text)
    # the words are the runs of word characters (no word character is white space)
    return " ".join(_WORD_RUN.findall(unicodedata.normalize("NFKC", text).lower()))


def tokens(normalized: str) -> list[str]:
    """The words of a normalised text; a run of CJK characters is one token."""
    if normalized.isascii():
        return normalized.split()
    return _TOKEN.findall(normalized)


def is_cjk(token: str) -> bool:
    """Whether a token from :func:`tokens` is a CJK run."""
    return _CJK_RUN.match(token) is not None


def fingerprint(text: str) -> bytes:
    """A 16-byte digest of ``text``: the key of the exact-duplicate path."""
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def hash32(shingle: str) -> int:
    """A deterministic 32-bit hash of a shingle: CRC-32 of its UTF-8 bytes.

    CRC-32 spreads distinct short strings evenly over its 32 bits, which is all
    one-permutation MinHash needs (bin = hash mod ``num_perm``), and is the cheapest
    deterministic hash in the standard library.
    """
    return zlib.crc32(shingle.encode("utf-8", "surrogatepass"))


class Shingler:
    """Shingle sets of normalised texts as 32-bit hashes.

    ``cjk_ngram`` is the character n-gram size of CJK runs, ``latin_ngram`` the word n-gram
    size of other text (1: single words). Stop words and CJK n-grams made of grammar
    characters only are left out. A set larger than ``max_shingles`` keeps its
    ``max_shingles`` smallest hashes (a bottom-k sample: the Jaccard similarity of two samples
    estimates that of the full sets), so a 1 MB line costs memory like a short paragraph.
    """

    __slots__ = ("_cache", "cjk_ngram", "latin_ngram", "max_shingles")

    def __init__(self, *, cjk_ngram: int = 2, latin_ngram: int = 1, max_shingles: int = 256):
        self.cjk_ngram = cjk_ngram
        self.latin_ngram = latin_ngram
        self.max_shingles = max_shingles
        # word / n-gram -> hash, or -1 when left out; bounded by the vocabulary of one call
        self._cache: dict[str, int] = self._fresh_cache()

    def _lookup(self, part: str) -> int:
        """The hash of a word (its light stem) or CJK n-gram; -1 when it is left out."""
        h = self._cache.get(part)
        if h is None:
            if len(self._cache) > _CACHE_SIZE:  # a large vocabulary: start afresh
                self._cache = self._fresh_cache()
            if self.cjk_ngram != 2 and is_cjk(part) and _all_function(part):
                h = -1
            else:  # stop words and grammar-only bigrams are in the cache from the start
                h = hash32(stem(part))
            self._cache[part] = h
        return h

    def _fresh_cache(self) -> dict[str, int]:
        cache = dict.fromkeys(STOP_WORDS, -1)
        if self.cjk_ngram == 2:
            cache.update(_FUNCTION_GRAMS)
        return cache

    def _parts(self, normalized: str, ordered: bool = True) -> list[str]:
        """Words and CJK n-grams of a normalised text, unfiltered, in text order (or, with
        ``ordered`` false, in an order only good for a set of them)."""
        if normalized.isascii():
            return normalized.split()
        n = self.cjk_ngram
        out: list[str] = []
        for cjk, word in _TOKEN_SPLIT.findall(normalized):
            if word:
                out.append(word)
            elif len(cjk) <= n:
                out.append(cjk)
            elif n != 2:  # (slices: faster than joining the characters, which makes each a string)
                out += [cjk[i : i + n] for i in range(len(cjk) - n + 1)]
            elif ordered:  # each character glued to the next, at C level
                out += map(add, cjk, cjk[1:])
            else:  # the pairs from the first character, then from the second: two C calls
                out += _PAIRS.findall(cjk)
                out += _PAIRS.findall(cjk, 1)
        return out

    def strings(self, normalized: str) -> list[str]:
        """The shingles of a normalised text as strings, in text order (with repeats).

        Words are stemmed; stop words and grammar-only CJK n-grams are left out;
        ``hash32(s)`` of each is its hash in :meth:`hashes`.
        """
        out = [t for t, _ in self.terms(normalized)]
        n = self.latin_ngram
        if n > 1:
            out = _word_ngrams(out, n)
        return out

    def terms(self, normalized: str) -> list[tuple[str, int]]:
        """``(shingle string, hash)`` pairs of :meth:`strings` (words only: ``latin_ngram``
        is taken as 1), reusing the cached hashes."""
        parts = self._parts(normalized)
        cache = self._cache
        hashes: list[int | None] = list(map(cache.get, parts))
        if None in hashes:
            cache = self._hash_missing(parts)
            hashes = list(map(cache.__getitem__, parts))
        # a shingle string is the stem of its part (a CJK n-gram is its own stem)
        return [(stem(p) if p[-1:] == "s" else p, h)
                for p, h in zip(parts, hashes) if h != -1 and h is not None]

    def _hash_missing(self, parts: Collection[str]) -> dict[str, int]:
        """Put the parts not in the cache into it (each once, at C level where it can) and
        return the cache, which is a fresh one when it would have grown too large."""
        cache = self._cache
        missing = set(parts).difference(cache)
        if not missing:
            return cache
        if len(cache) + len(missing) > _CACHE_SIZE:  # a large vocabulary: start afresh
            cache = self._cache = self._fresh_cache()
            missing = set(parts).difference(cache)
        words = list(missing)
        if self.cjk_ngram != 2:  # grammar-only n-grams are not in the cache from the start
            values = list(map(self._lookup, words))  # (which may start a fresh cache)
            self._cache.update(zip(words, values))
            return self._cache
        stems = words.copy()
        for k in compress(range(len(words)), map(str.endswith, words, repeat("s"))):
            stems[k] = stem(words[k])
        # one encoding for all (a part never holds a line break, nor does its UTF-8)
        utf8 = "\n".join(stems).encode("utf-8", "surrogatepass").split(b"\n")
        cache.update(zip(words, map(zlib.crc32, utf8)))  # = hash32(stem(word))
        return cache

    def hashes(self, normalized: str) -> set[int]:
        """The shingle set of a normalised text as 32-bit hashes (see the class docstring).

        A long text is read in pieces of about ``_CHUNK`` characters, keeping the bottom-k
        sample as it goes, so a 1 MB line never holds a million shingle strings at once.
        """
        if len(normalized) <= _CHUNK:
            return self._hashes(normalized)
        out: set[int] = set()
        k = self.max_shingles
        start = 0
        while start < len(normalized):
            end = normalized.find(" ", start + _CHUNK)  # cut between words when there is a space
            if end < 0 or end > start + 2 * _CHUNK:
                end = start + _CHUNK
            out |= self._hashes(normalized[start:end])
            if len(out) > 4 * k:
                out = set(heapq.nsmallest(k, out))
            start = end
        return set(heapq.nsmallest(k, out)) if len(out) > k else out

    def _hashes(self, normalized: str) -> set[int]:
        if self.latin_ngram > 1:
            out = {hash32(s) for s in self.strings(normalized)}
        else:
            parts = self._parts(normalized, ordered=False)
            cache = self._cache
            found: set[int | None] = set(map(cache.get, parts))  # one lookup per word
            if None in found:  # hash the words not seen before, each once
                found.discard(None)
                found.update(map(self._lookup, set(parts).difference(cache)))
            out = cast("set[int]", found)
            out.discard(-1)
        if len(out) > self.max_shingles:
            out = set(heapq.nsmallest(self.max_shingles, out))
        return out

    def hashes_of(self, texts: Sequence[str]) -> list[set[int]]:
        """:meth:`hashes` of each normalised text, in order (see :meth:`hashes_and_terms`)."""
        return self.hashes_and_terms(texts)[0]

    def hashes_and_terms(
        self, texts: Sequence[str], terms_for: Container[int] = ()
    ) -> tuple[list[set[int]], dict[int, list[tuple[str, int]]]]:
        """:meth:`hashes` of each normalised text, and :meth:`terms` of the texts whose
        positions are in ``terms_for`` (made from the same parts, not split again).

        The words and n-grams of up to ``_BATCH`` texts are gathered in one list; the ones not
        seen before are hashed together at C level, then every part is looked up in one
        call, so the cost per text is a few C calls.
        """
        terms: dict[int, list[tuple[str, int]]] = {}
        if self.latin_ngram > 1 or self.cjk_ngram != 2:
            for k, text in enumerate(texts):
                if k in terms_for:
                    terms[k] = self.terms(text)
            return [self.hashes(t) for t in texts], terms
        out: list[set[int]] = []
        for start in range(0, len(texts), _BATCH):
            out += self._hashes_batch(texts[start : start + _BATCH], start, terms_for, terms)
        return out, terms

    def _hashes_batch(
        self,
        texts: Sequence[str],
        offset: int,
        terms_for: Container[int],
        terms: dict[int, list[tuple[str, int]]],
    ) -> list[set[int]]:
        parts: list[str] = []
        ends: list[int] = []
        long: dict[int, set[int]] = {}
        with_terms: list[int] = []  # positions in ``texts`` whose terms are wanted
        for n, text in enumerate(texts):
            if len(text) > _CHUNK:
                long[n] = self.hashes(text)
                if offset + n in terms_for:
                    terms[offset + n] = self.terms(text)
            elif offset + n in terms_for:
                with_terms.append(n)
                parts += self._parts(text)
            else:
                parts += self._parts(text, ordered=False)
            ends.append(len(parts))
        cache = self._hash_missing(parts)
        values = list(map(cache.__getitem__, parts))
        starts = [0, *ends[:-1]]
        for n in with_terms:  # as terms() does it, from the same parts
            start, end = starts[n], ends[n]
            terms[offset + n] = [
                (stem(p) if p[-1:] == "s" else p, h)
                for p, h in zip(parts[start:end], values[start:end]) if h != -1
            ]
        # each text's hashes as a set: the slices of ``values`` between the ends, at C level
        out = list(map(set, map(values.__getitem__, map(slice, starts, ends))))
        for n, hashes in long.items():
            out[n] = hashes
        k = self.max_shingles
        for n, found in enumerate(out):
            found.discard(-1)
            if len(found) > k:
                out[n] = set(heapq.nsmallest(k, found))
        return out


def _word_ngrams(parts: list[str], n: int) -> list[str]:
    """Latin words joined into n-grams within runs; CJK n-grams pass through."""
    out: list[str] = []
    run: list[str] = []
    for part in [*parts, ""]:
        if part and not is_cjk(part):
            run.append(part)
            continue
        if len(run) < n:
            out.extend(run)
        else:
            out.extend(" ".join(run[i : i + n]) for i in range(len(run) - n + 1))
        run = []
        if part:
            out.append(part)
    return out


def stem(word: str) -> str:
    """A light English stem: plural endings off ("prices" -> "price", "copies" -> "copy")."""
    if word[-1:] == "s" and len(word) > 3 and word[-2] not in "su'" and not word.endswith("ous"):
        if word.endswith("ies") and len(word) > 4:
            return word[:-3] + "y"
        return word[:-1]
    return word


# CJK characters and bigrams made of grammar characters only: left out of shingle sets.
_FUNCTION_GRAMS: dict[str, int] = dict.fromkeys(
    [*CJK_FUNCTION_CHARS, *(a + b for a in CJK_FUNCTION_CHARS for b in CJK_FUNCTION_CHARS)], -1
)


def _all_function(gram: str) -> bool:
    return all(ch in CJK_FUNCTION_CHARS for ch in gram)
