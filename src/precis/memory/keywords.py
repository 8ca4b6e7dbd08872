"""Keyword search for the memory store: BM25 over an inverted index held in memory.

Two parts:

* :func:`tokenize` is the one tokenizer of the keyword search, for what is indexed and
  for the query alike, in every store: the words of :func:`precis.memory.text.words`
  (Chinese cut by ``rjieba``, Chinese and Latin script cut apart: ``Postgres替换MySQL``,
  ``user_id字段``), each put once through SQLite's own FTS5 tokenizer (``porter unicode61
  remove_diacritics 2``: case and diacritic folding, Porter stemming) on a private
  in-memory table, so English stems the way SQLite's full-text search does and nothing
  else needs installing. :class:`Terms` does it for a store: a card has two fields, its
  own words (``body``) and the messages around it (``context``), which count half.
* :class:`KeywordIndex` holds, for every term, the cards that contain it and the term's
  weighted frequency in each (numpy arrays), and answers a query with exact BM25 top-k:
  each query term adds its score to the cards in its posting list, so the cost grows
  with the postings of the query's terms, never with a per-card SQL call. Scores are
  those of FTS5's ``bm25()`` with column weights 1.0 / 0.5 (k1 = 1.2, b = 0.75, document
  length = the tokens of both fields).

The store keeps each card's terms (term ids, weighted frequencies, length) in SQLite and
builds the index from them on first use; cards appended later are added as a new
segment, and segments merge once the small ones outweigh a quarter of the largest.
Searches may run concurrently with one another, not with :meth:`KeywordIndex.add` (the
store serialises them).
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from precis.errors import StoreError
from precis.memory._ivf import Allowed
from precis.memory.text import STOP_WORDS, words

__all__ = ["CardTerms", "KeywordIndex", "Terms", "tokenize"]

K1 = 1.2
B = 0.75
CONTEXT_WEIGHT = 0.5  # a word of the neighbouring messages counts half a word of the card
_TOKENIZER = "porter unicode61 remove_diacritics 2"
_KNOWN_WORDS = 500_000  # words whose terms are remembered

I64 = npt.NDArray[np.int64]
F32 = npt.NDArray[np.float32]


@dataclass(frozen=True)
class CardTerms:
    """What the index holds for one card: weighted frequencies by term, and its length
    in tokens (both fields, stop words included, as BM25 measures it)."""

    freqs: dict[str, float]
    length: int


def tokenize(text: str) -> list[str]:
    """The keyword terms of ``text``, in order, stop words included: what every store
    indexes for a text and looks up for a query word (see the module docstring).

    >>> tokenize("Postgres替换MySQL, the payments were timing out")
    ['postgr', '替换', 'mysql', 'the', 'payment', 'were', 'time', 'out']
    """
    return _shared().of(text)


_SHARED: Terms | None = None
_SHARED_LOCK = threading.Lock()


def _shared() -> Terms:
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = Terms()
        return _SHARED


class Terms:
    """Index terms of texts, by SQLite's FTS5 tokenizer (see the module docstring).

    Each distinct word (:func:`precis.memory.text.words`) goes through FTS5's tokenizer
    once (case and diacritic folding, Porter stemming) and is remembered, so a card costs
    the word cut and dictionary lookups, and cards and queries get their terms the same
    way. :func:`tokenize` uses one shared instance."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        try:
            self._db.execute(
                f"CREATE VIRTUAL TABLE t USING fts5 (x, tokenize = '{_TOKENIZER}')")
            self._db.execute("CREATE VIRTUAL TABLE v USING fts5vocab (t, 'instance')")
        except sqlite3.OperationalError as err:
            raise StoreError(
                f"keyword search needs SQLite's FTS5 extension, which this Python's SQLite "
                f"({sqlite3.sqlite_version}) lacks: {err}") from None
        self._known: dict[str, tuple[str, ...]] = {}  # word -> its terms
        self._stop = frozenset(self.of(" ".join(STOP_WORDS)))

    def cards(self, texts: Sequence[tuple[str, str]]) -> list[CardTerms]:
        """The terms of each (body, context) pair; query stop words are left out of the
        frequencies (a query never asks for them) but count in the length."""
        split = [(words(body), words(context)) for body, context in texts]
        with self._lock:
            known = self._learn([w for pair in split for part in pair for w in part])
        stop = self._stop
        out = []
        for body, context in split:
            freqs: dict[str, float] = {}
            length = 0
            for part, weight in ((body, 1.0), (context, CONTEXT_WEIGHT)):
                for word in part:
                    for term in known[word]:
                        length += 1
                        if term not in stop:
                            freqs[term] = freqs.get(term, 0.0) + weight
            out.append(CardTerms(freqs, length))
        return out

    def query(self, query_words: Iterable[str]) -> list[str]:
        """The distinct terms of query words (each cut as a text), in first-seen order."""
        return list(dict.fromkeys(t for w in query_words for t in self.of(w)))

    def of(self, text: str) -> list[str]:
        """The terms of a text, in order (:func:`tokenize`)."""
        split = words(text)
        with self._lock:
            known = self._learn(split)
        return [t for w in split for t in known[w]]

    def _learn(self, split: list[str]) -> dict[str, tuple[str, ...]]:
        """The terms of every word (call with the lock held): words not yet known go
        through FTS5's tokenizer."""
        new = list(dict.fromkeys(w for w in split if w not in self._known))
        if len(self._known) + len(new) > _KNOWN_WORDS:  # a bound on memory
            self._known = {}
            new = list(dict.fromkeys(split))
        if not new:
            return self._known
        db = self._db
        db.execute("BEGIN")
        try:
            db.executemany("INSERT INTO t (rowid, x) VALUES (?, ?)", list(enumerate(new)))
            rows = db.execute("SELECT doc, term FROM v ORDER BY doc, offset").fetchall()
        finally:
            db.execute("ROLLBACK")  # the scratch table stays empty
        terms: list[list[str]] = [[] for _ in new]
        for doc, term in rows:
            terms[doc].append(str(term))
        self._known.update((word, tuple(t)) for word, t in zip(new, terms))
        return self._known

    def close(self) -> None:
        with self._lock:
            self._db.close()


class _Segment:
    """Postings of a set of cards, grouped by term id (CSR): ``starts[t]:starts[t+1]``
    are term ``t``'s entries in ``docs`` (positions in the index's card arrays) and
    ``freqs``."""

    __slots__ = ("docs", "freqs", "starts")

    def __init__(self, docs: npt.NDArray[np.int32], terms: npt.NDArray[np.int32],
                 freqs: F32, vocabulary: int) -> None:
        # stable, so each term's cards stay in increasing order (numpy sorts 16-bit keys
        # by radix, in linear time)
        keys = terms.astype(np.uint16) if vocabulary <= 1 << 16 else terms
        order = np.argsort(keys, kind="stable")
        self.docs = docs[order]
        self.freqs = freqs[order]
        counts = np.bincount(terms, minlength=vocabulary)
        self.starts = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=self.starts[1:])

    def postings(self, term: int) -> tuple[npt.NDArray[np.int32], F32]:
        if term + 1 >= len(self.starts):
            return self.docs[:0], self.freqs[:0]
        lo, hi = int(self.starts[term]), int(self.starts[term + 1])
        return self.docs[lo:hi], self.freqs[lo:hi]

    def triples(self) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], F32]:
        terms = np.repeat(np.arange(len(self.starts) - 1, dtype=np.int32),
                          np.diff(self.starts))
        return self.docs, terms, self.freqs

    def __len__(self) -> int:
        return len(self.docs)


class KeywordIndex:
    """BM25 top-k over cards keyed by int64 ids (the store's card row ids), with terms as
    int ids (the store's vocabulary). Add cards in increasing id order."""

    def __init__(self) -> None:
        self._ids = np.empty(0, dtype=np.int64)
        self._lengths = np.empty(0, dtype=np.float32)
        self._segments: list[_Segment] = []
        self._total_length = 0.0
        self._shortest = 0.0  # the fewest tokens of any card held

    def __len__(self) -> int:
        return len(self._ids)

    @property
    def last_id(self) -> int:
        return int(self._ids[-1]) if len(self._ids) else 0

    def add(self, ids: I64, lengths: npt.ArrayLike, counts: npt.ArrayLike,
            terms: npt.ArrayLike, freqs: npt.ArrayLike) -> None:
        """Add cards ``ids`` (above every id already held) of these ``lengths``; card
        ``i`` has ``counts[i]`` entries of ``terms`` / ``freqs``, in card order."""
        ids = np.asarray(ids, dtype=np.int64)
        if not len(ids):
            return
        if (len(self._ids) and ids[0] <= self._ids[-1]) or np.any(np.diff(ids) <= 0):
            raise ValueError("cards must be added in increasing id order")
        term_ids = np.asarray(terms, dtype=np.int32)
        weights = np.asarray(freqs, dtype=np.float32)
        per_card = np.asarray(counts, dtype=np.int64)
        docs = np.repeat(np.arange(len(self._ids), len(self._ids) + len(ids), dtype=np.int32),
                         per_card)
        card_lengths = np.asarray(lengths, dtype=np.float32)
        self._ids = np.concatenate([self._ids, ids])
        self._lengths = np.concatenate([self._lengths, card_lengths])
        self._total_length += float(card_lengths.sum(dtype=np.float64))
        self._shortest = float(self._lengths.min())
        vocabulary = int(term_ids.max()) + 1 if len(term_ids) else 0
        self._segments.append(_Segment(docs, term_ids, weights, vocabulary))
        self._merge()

    def _merge(self) -> None:
        """Fold the newer segments into one once they hold a quarter of the largest's
        postings, so a query reads few segments and merging costs amortised O(1)."""
        if len(self._segments) < 2:
            return
        largest = max(len(s) for s in self._segments)
        rest = sum(len(s) for s in self._segments) - largest
        if rest * 4 < largest and len(self._segments) < 16:
            return
        parts = [s.triples() for s in self._segments]
        terms = np.concatenate([p[1] for p in parts])
        vocabulary = int(terms.max()) + 1 if len(terms) else 0
        self._segments = [_Segment(np.concatenate([p[0] for p in parts]), terms,
                                   np.concatenate([p[2] for p in parts]), vocabulary)]

    def _postings(self, term: int) -> tuple[npt.NDArray[np.int32], F32]:
        """A term's card positions (increasing) and weighted frequencies, all segments."""
        parts = [p for p in (s.postings(term) for s in self._segments) if len(p[0])]
        if len(parts) == 1:
            return parts[0]
        if not parts:
            return np.empty(0, dtype=np.int32), np.empty(0, dtype=np.float32)
        return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))

    def search(self, terms: Sequence[int], k: int, *, allowed: I64 | None = None
               ) -> tuple[I64, F32]:
        """The ``k`` best card ids for the query terms by BM25 (ties: lower id first), and
        their scores; only ids in the sorted array ``allowed`` when it is given.

        Exact, but it avoids scoring every card of a common term (in the manner of
        MaxScore): terms are taken rarest first, each scored for all the cards that hold
        it and not yet found, and the terms not yet taken are scored on the cards just
        found. Once the k-th best found beats the most the untaken terms could add up to
        on a card holding none of the taken ones (each term's highest frequency in the
        shortest card), no other card can enter the top ``k``."""
        n = len(self._ids)
        empty = np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
        if not n or k <= 0 or not terms:
            return empty
        usable = None if allowed is None else self._usable(allowed)
        pending = []  # per term: the cards holding it not found yet, and its frequencies
        for term in dict.fromkeys(terms):
            docs, freqs = self._postings(term)
            if not len(docs):
                continue
            idf = math.log((n - len(docs) + 0.5) / (len(docs) + 0.5))  # over every card
            if usable is not None:
                keep = usable[docs]
                docs, freqs = docs[keep], freqs[keep]
            if len(docs):
                pending.append((idf if idf > 0 else 1e-6, docs, freqs))  # as FTS5's bm25()
        pending.sort(key=lambda t: len(t[1]))  # rarest first
        acc = np.zeros(n, dtype=np.float64)  # score by card position
        held = np.zeros(n, dtype=bool)  # found: scored for every query term
        found: list[npt.NDArray[np.int32]] = []
        spent, budget = 0, max(20 * k, n // 64)
        while pending:
            idf, docs, freqs = pending.pop(0)
            acc[docs] += self._scores(idf, freqs, docs)
            held[docs] = True
            found.append(docs)
            spent += len(docs)
            for j, (other, others, weights) in enumerate(pending):
                inside = held[others]
                if inside.any():
                    acc[others[inside]] += self._scores(other, weights[inside], others[inside])
                    pending[j] = (other, others[~inside], weights[~inside])
            if not pending or spent < budget:
                continue  # rare terms are cheap: take them all before checking
            ids, scores = self._found(acc, np.concatenate(found))
            ceiling = sum(self._bound(idf, freqs) for idf, _, freqs in pending)
            if len(ids) >= k and -np.partition(-scores, k - 1)[k - 1] > ceiling:
                return _best(ids, scores, k)  # no card outside can enter the top k
        if not found:
            return empty
        return _best(*self._found(acc, np.concatenate(found)), k)

    def _found(self, acc: npt.NDArray[np.float64], docs: npt.NDArray[np.int32]
               ) -> tuple[I64, npt.NDArray[np.float64]]:
        return self._ids[docs], acc[docs]

    def _usable(self, allowed: I64) -> npt.NDArray[np.bool_]:
        """By card position, whether the card's id is in the sorted array ``allowed``:
        each allowed id looked up when they are few, else a bitmap over the ids."""
        n = len(self._ids)
        usable = np.zeros(n, dtype=bool)
        if not len(allowed):
            return usable
        if 32 * len(allowed) < n:
            at = np.minimum(np.searchsorted(self._ids, allowed), n - 1)
            usable[at[self._ids[at] == allowed]] = True
            return usable
        return Allowed(allowed).member(self._ids)

    def _bound(self, idf: float, freqs: F32) -> float:
        """The most a term can add to a card's score: its highest frequency in the
        shortest card there is."""
        if not len(freqs):
            return 0.0
        top = float(freqs.max())
        shortest = self._shortest
        average = self._total_length / len(self._ids) or 1.0
        return idf * (K1 + 1) * top / (top + K1 * (1 - B + B * shortest / average))

    def _scores(self, idf: float, freqs: F32, docs: npt.NDArray[np.int32]
                ) -> npt.NDArray[np.float64]:
        average = self._total_length / len(self._ids) or 1.0
        norm = K1 * (1 - B + B * self._lengths[docs].astype(np.float64) / average)
        return (idf * (K1 + 1)) * freqs / (freqs + norm)


def _best(ids: I64, scores: npt.NDArray[np.float64], k: int) -> tuple[I64, F32]:
    """The ``k`` highest scores, ties broken by the lower id."""
    if len(ids) > k:
        top = np.argpartition(-scores, k - 1)[:k]
        # cards tied with the k-th score are all candidates: the lowest ids win
        tied = np.flatnonzero(scores >= scores[top].min())
        ids, scores = ids[tied], scores[tied]
    order = np.lexsort((ids, -scores))[:k]
    return ids[order], scores[order].astype(np.float32)
