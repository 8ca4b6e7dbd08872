"""Requirement version chains: which later goal / constraint / decision replaces which.

A later fragment ``j`` is a new version of an earlier one ``i`` when

* they are on the same topic: the key terms they share (words without stop words, CJK
  bigrams, never numbers), each weighted by its rarity in the conversation (inverse document
  frequency divided by its maximum, so the weight is comparable between a 20-fragment and a
  100k-fragment conversation), add up to at least ``threshold``; a *slot* whose value changed
  adds ``slot_bonus``;
* and ``j`` shows a change: a change cue ("actually", "switch to", "改成", "不用…了") or a
  slot whose value changed. A slot is a number with its context, the word before it
  (``python 3.9``, ``node 18``, ``预算 3万``) or the unit after it (``500mb``, ``30 分钟``,
  ``4.5 万``): "Python 3.9" -> "Python 3.10" changes the slot ``python``.

Two fragments that share nothing but a changed slot must be close (at most 16 eligible
fragments apart). Each fragment links to its best-scoring earlier candidate and joins that
candidate's chain at the end, so "退到余额" -> "退到银行卡" -> "还是退到余额" is one chain of
three. Candidates come from an inverted index of key terms that keeps the ``max_postings``
latest fragments per term, so the work per fragment is bounded.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import compress
from operator import itemgetter

from precis.analysis._phrases import (
    CHANGE_CUE,
    CJK_FUNCTION_CHARS,
    CJK_STOP_WORDS,
    STOP_WORDS,
    strip_change_cue,
)
from precis.analysis._shingles import CJK_CHARS, Shingler, is_cjk, stem, tokens

__all__ = ["ChainItem", "chain_item", "link_versions", "topic_label"]

_DIGIT = re.compile(r"\d")
# Two fragments that share no key term, only a slot whose value changed ("under 500MB" ->
# "the target is 300MB"), are versions only when at most this many eligible fragments apart.
_SLOT_ONLY_WINDOW = 16
# In a short conversation every topic word is "frequent"; terms in up to this many fragments
# always count.
_MIN_DF_CAP = 5
# Rarity is measured as if the conversation had at least this many fragments, so the topic
# words of a five-message exchange still count.
_MIN_DOCS = 20
_MAX_CHARS = 2000  # characters of a fragment read for chain detection
_NUM = re.compile(r"(?<![a-z0-9_#./-])(\d+(?:[.:]\d+)*)([a-z%]*)")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_WORD_BEFORE = re.compile(f"([{CJK_CHARS}]+|[a-z][a-z0-9_-]*)[\\s:=：]*$")
_WORD_AFTER = re.compile(f"\\s*([{CJK_CHARS}]|[a-z]+)")


@dataclass(frozen=True)
class ChainItem:
    """What version linking needs to know about one eligible fragment."""

    index: int  # position in the fragment list
    terms: tuple[str, ...]  # key terms in text order (for the label)
    hashes: frozenset[int]  # their hash32 values (to look up document frequency)
    slots: Mapping[str, frozenset[str]]  # slot -> values
    cue: bool
    message: int = -1  # the message it is in (-1: not known)
    role: str = ""  # who said it ("": not known)


def chain_item(
    index: int,
    text: str,
    normalized: str,
    shingler: Shingler,
    terms: list[tuple[str, int]] | None = None,
    *,
    maybe_cue: bool = True,
    message: int = -1,
    role: str = "",
) -> ChainItem | None:
    """The :class:`ChainItem` of fragment ``index``, or None when it has no key term or slot.

    Key terms leave out the change cue itself ("改成", "switch to"): two fragments that both
    say "改成" are not on the same topic for that. Only the first ``_MAX_CHARS`` characters
    count: a requirement is stated in a sentence or two, and a 1 MB "goal" stays cheap.
    ``terms`` may give ``shingler.terms(normalized)`` if it is already known; ``maybe_cue``
    false says the text holds no change cue (no word of
    :data:`~precis.analysis._phrases.CHANGE_HINT`). ``message`` is the message the fragment
    is in (two fragments of one message are never versions of each other) and ``role`` who
    said it (only the user's words are a new version of the user's).
    """
    if len(normalized) > _MAX_CHARS:
        terms = None
    text, normalized = text[:_MAX_CHARS], normalized[:_MAX_CHARS]
    cue = maybe_cue and CHANGE_CUE.search(normalized) is not None
    if cue:
        normalized = strip_change_cue(normalized)
        terms = None
    if terms is None:
        terms = shingler.terms(normalized)
    pairs = list(compress(terms, map(_is_key, map(itemgetter(0), terms))))  # (C level)
    del terms
    found = slots(text) if _DIGIT.search(text) else {}
    if not pairs and not found:
        return None
    key_terms, hashes = zip(*pairs) if pairs else ((), ())
    return ChainItem(index=index, terms=key_terms, hashes=frozenset(hashes), slots=found, cue=cue,
                     message=message, role=role)


_FUNCTION_CHAR = re.compile("[" + "".join(sorted(CJK_FUNCTION_CHARS)) + "]")


@lru_cache(maxsize=1 << 16)
def _is_key(term: str) -> bool:
    """Whether a shingle can tie two versions to one topic (not a number, stop word, ...)."""
    if term[0].isdigit() or len(term) < 2:
        return False
    if is_cjk(term):
        return term not in CJK_STOP_WORDS and _FUNCTION_CHAR.search(term) is None
    return term not in STOP_WORDS


def slots(text: str) -> dict[str, frozenset[str]]:
    """Numbers keyed by their context: ``{"p:python": {"3.9"}, "u:mb": {"500"}}``."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    low = text.lower()
    if "," in low:
        low = _THOUSANDS.sub("", low)
    out: dict[str, set[str]] = {}
    for m in _NUM.finditer(low):
        value, unit = m.group(1), m.group(2)
        keys: list[str] = []
        if unit:
            keys.append("u:" + unit)
        else:
            after = _WORD_AFTER.match(low, m.end(), m.end() + 16)
            if after:
                word = after.group(1)
                if is_cjk(word) or word not in STOP_WORDS:
                    keys.append("u:" + stem(word))
        before = _WORD_BEFORE.search(low, max(0, m.start() - 24), m.start())
        if before:
            word = before.group(1)
            if is_cjk(word):
                keys.append("p:" + word[-2:])
            elif word not in STOP_WORDS:
                keys.append("p:" + word)
        for key in keys:
            out.setdefault(key, set()).add(value)
    return {k: frozenset(v) for k, v in out.items()}


def changed_slots(a: Mapping[str, frozenset[str]], b: Mapping[str, frozenset[str]]) -> list[str]:
    """Slots both fragments fill, with different values."""
    return [k for k in a.keys() & b.keys() if a[k] != b[k]]


def link_versions(
    items: Sequence[ChainItem],
    *,
    df: Mapping[int, int],
    n_docs: int,
    threshold: float,
    slot_bonus: float,
    max_df: float,
    max_postings: int,
) -> list[list[int]]:
    """Chains of positions in ``items`` (time order), each of two or more versions.

    Work per fragment is bounded: a fragment with a change cue visits at most
    ``max_postings`` earlier fragments per key term and slot; one without a cue can only be
    a new version through a changed slot, so it visits the postings of its slots only.
    """
    rarity = _Rarity(df, n_docs, max_df)
    # only a fragment with a cue looks its terms up: just those terms are indexed
    cue_terms = rarity.positive(set().union(*(it.hashes for it in items if it.cue)))
    postings: defaultdict[int | str, list[int]] = defaultdict(list)
    chain_of: dict[int, list[int]] = {}
    chains: list[list[int]] = []
    cap = max_postings
    slot_cap = max(4, cap // 4)  # the latest fragments with the same slot
    limit = 2 * cap
    for pos, item in enumerate(items):
        changed: set[int] = set()  # earlier fragments with the same slot, another value
        for key, values in item.slots.items():
            for cand in postings.get(key, ())[-slot_cap:]:
                if items[cand].slots[key] != values:
                    changed.add(cand)
        score: dict[int, float] = {}
        if item.cue or changed:
            weights = rarity.weights(item.hashes)
            if item.cue:
                for h, w in weights.items():
                    for cand in postings.get(h, ())[-cap:]:
                        score[cand] = score.get(cand, 0.0) + w
            for cand in changed:  # without a cue, only a changed slot makes a new version
                if cand not in score:
                    shared = weights.keys() & items[cand].hashes  # (a set)
                    score[cand] = sum(weights[h] for h in shared)
        best: tuple[float, int] | None = None
        for cand, value in score.items():
            if value <= 0 and pos - cand > _SLOT_ONLY_WINDOW:
                continue  # nothing but a unit in common: only a version if close by
            if item.message >= 0 and items[cand].message == item.message:
                continue  # one message states its points side by side: a change comes later
            if item.role and item.role != "user":
                versions = chain_of.get(cand)
                if items[versions[-1] if versions else cand].role == "user":
                    continue  # only the user changes what the user asked for
            if cand in changed:
                value += slot_bonus
            if value >= threshold and (best is None or (value, cand) > best):
                best = (value, cand)
        if best is not None:
            chain = chain_of.get(best[1])
            if chain is None:
                chain = chain_of[best[1]] = [best[1]]
                chains.append(chain)
            chain.append(pos)
            chain_of[pos] = chain
        index_keys: list[int | str] = [*cue_terms.intersection(item.hashes), *item.slots]
        for index_key in index_keys:
            plist = postings[index_key]
            plist.append(pos)
            if len(plist) > limit:  # keep the latest entries: O(1) amortised
                del plist[:-cap]
    chains.sort(key=lambda c: c[0])
    return chains


class _Rarity:
    """The weight of a key term: its inverse document frequency divided by its maximum,
    0 for a term in too many fragments; each term's worked out once, when first needed."""

    __slots__ = ("_df", "_df_cap", "_log_n", "_memo", "_n_idf")

    def __init__(self, df: Mapping[int, int], n_docs: int, max_df: float) -> None:
        self._df = df
        self._df_cap = max(_MIN_DF_CAP, max_df * n_docs)
        self._n_idf = max(n_docs, _MIN_DOCS)
        self._log_n = math.log(self._n_idf + 1)
        self._memo: dict[int, float] = {}

    def _weight(self, h: int) -> float:
        d = self._df.get(h, 1)
        if d > self._df_cap:
            return 0.0
        return math.log((self._n_idf + 1) / (d + 0.5)) / self._log_n

    def weights(self, hashes: frozenset[int]) -> dict[int, float]:
        """``hash -> weight`` of the terms that weigh something, in ``hashes`` order."""
        memo = self._memo
        for h in hashes.difference(memo):
            memo[h] = self._weight(h)
        return {h: w for h in hashes if (w := memo[h]) > 0}

    def positive(self, hashes: set[int]) -> set[int]:
        """The terms of ``hashes`` that weigh something."""
        return set(self.weights(frozenset(hashes)))


def topic_label(
    members: Sequence[ChainItem], texts: Sequence[str], *, max_terms: int = 4
) -> str:
    """A short label: the key terms the versions share, CJK bigrams merged back into words.

    ``texts`` are the members' normalised texts, to show a stemmed word as it was written.
    """
    counts: dict[str, int] = {}
    for item in members:
        for term in set(item.terms):
            counts[term] = counts.get(term, 0) + 1
    shared = {t for t, c in counts.items() if c >= 2}
    current = members[-1]
    words = _merge_runs(t for t in current.terms if t in shared)
    if not words:
        words = _merge_runs(t for t in members[0].terms if t in shared)
    if not words:
        slot_words: list[str] = []
        for item in members[1:]:
            for key in changed_slots(members[0].slots, item.slots):
                if key[2:] not in slot_words:
                    slot_words.append(key[2:])
        words = sorted(slot_words)
    if not words:
        words = _merge_runs(current.terms)
    surface: dict[str, str] = {}  # stem -> the word as written
    for text in texts:
        for word in tokens(text):
            if not is_cjk(word):
                surface.setdefault(stem(word), word)
    out: list[str] = []
    for w in words:
        w = surface.get(w, w)
        if w not in out:
            out.append(w)
        if len(out) == max_terms:
            break
    return " ".join(out)


def _merge_runs(terms: Iterable[str]) -> list[str]:
    """Join overlapping CJK bigrams that follow each other (过期, 期时, 时间 -> 过期时间)."""
    out: list[str] = []
    for t in terms:
        if out and is_cjk(t) and is_cjk(out[-1]) and out[-1][-1] == t[0] and len(t) == 2:
            out[-1] += t[1:]
        else:
            out.append(t)
    return out
