"""Consolidation (seed 002 二.4): duplicates, requirement version chains, confirmations.

* :func:`find_duplicates`: groups of fragments that say the same thing anywhere in the
  conversation (not only next to each other); the latest member is kept, ``count`` says how
  often it was said, ``most_complete`` names the member with the fullest wording (most
  numbers and names, then the longest).
* :func:`find_chains`: goals / constraints / decisions that replace earlier ones on the same
  topic ("数据库用 MySQL" -> "数据库改成 Postgres" -> "数据库定为 Postgres 16, 部署在 RDS"; "keep
  Python 3.9" -> "the minimum is now Python 3.10"); the last version is in force. A later
  version needs a shared key term or slot *and* a change (a cue such as "actually" / "改成",
  or a number that changed in the same slot); see :mod:`precis.analysis._chains`.
* :func:`is_confirmation`: short acknowledgements ("ok", "好的", "thanks", "👍") that fold
  away.
* :func:`consolidate`: all three as one :class:`~precis.analysis.model.Consolidation`.

How duplicates are found, in linear time:

1. Exact path: fragments with the same normalised text (NFKC, lower case, no punctuation,
   collapsed spaces) are one group at once; only the first copy goes further. A text seen
   before is not even normalised again: the same sentence said 100k times costs 100k
   dictionary lookups.
2. Which fragments: running text (``sentence``, ``paragraph``, ``list_item``, ``thinking``)
   is compared by meaning below. Headings and structured fragments (code, SQL, JSON, tables,
   tool calls and results, images) are grouped only when their text is identical up to white
   space: the same file read twice is a duplicate, but two SQL queries that differ in one
   condition are versions, not duplicates. Confirmations are folded, not grouped.
3. Near duplicates: shingles (CJK character bigrams, other words without stop words; see
   :mod:`precis.analysis._shingles`), a one-permutation MinHash signature and LSH banding
   (:mod:`precis.analysis._minhash`) propose candidates; a candidate pair is a duplicate when
   the exact Jaccard similarity of the shingle sets reaches ``threshold``, both or neither
   are questions, and the numbers / names agree (:mod:`precis.analysis._entities`: "31
   days" vs "92 days", ``PAY-1287`` vs ``PAY-1278`` and "MySQL" vs "Postgres" are never
   duplicates). Fragments with fewer than ``min_shingles`` shingles take the exact path only.
4. Restatements: a fragment that says it repeats something ("as I said", "again",
   "我再强调一下") joins the earlier fragment it overlaps most (the same speaker's first),
   if the overlap coefficient (shared shingles / the smaller set, cue words left out)
   reaches ``restate_threshold`` and the numbers and names agree.

Every step keeps its work per fragment bounded (LSH buckets and term postings keep their
latest entries only), so time and memory grow linearly with the conversation. Work that
runs the same regex over many short texts runs it once over the texts joined
(:func:`precis.analysis._phrases.matching`), since the call overhead would dominate.
"""

from __future__ import annotations

import dataclasses
import math
import unicodedata
import zlib
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain as concat
from itertools import compress, pairwise
from operator import ne
from typing import Any

from precis._settings import settings_table
from precis.analysis._chains import ChainItem, chain_item, link_versions, topic_label
from precis.analysis._entities import Entities, compatible, entities, numbers, numbers_of
from precis.analysis._minhash import BandIndex
from precis.analysis._phrases import (
    CHANGE_HINT,
    CONFIRMATION,
    CONFIRMATION_START,
    RESTATEMENT_CUE,
    RESTATEMENT_HINT,
    matching,
)
from precis.analysis._shingles import Shingler, fingerprint, normalize
from precis.analysis.model import Chain, Consolidation, DuplicateGroup
from precis.errors import ConfigError, InputError
from precis.segment.model import Fragment

__all__ = [
    "PROSE_KINDS",
    "ConsolidationConfig",
    "consolidate",
    "find_chains",
    "find_duplicates",
    "is_confirmation",
]

PROSE_KINDS = frozenset({"sentence", "paragraph", "list_item", "thinking"})
"""Fragment kinds compared by meaning; all others are grouped only when identical."""

# A shingle in more than max(_COMMON_DF_MIN, _COMMON_DF_SHARE * fragments) fragments is
# left out of MinHash signatures (never out of the exact Jaccard check).
_COMMON_DF_MIN = 64
_COMMON_DF_SHARE = 0.005
# A normalised text longer than this is keyed by its digest on the exact-duplicate path.
_KEY_CHARS = 64
_FOLDED, _EMPTY = -2, -1  # what a raw text seen before turned out to be


@dataclass(frozen=True)
class ConsolidationConfig:
    """Settings of consolidation; every value is checked on construction.

    Duplicates: ``threshold`` (Jaccard similarity of shingle sets), ``restate_threshold``
    (overlap coefficient when a restatement cue is present), ``cjk_ngram`` / ``latin_ngram``
    (shingle sizes), ``min_shingles`` (fewer: exact match only), ``max_shingles`` (a larger
    set keeps a bottom-k sample), ``num_perm`` / ``bands`` (MinHash bins and LSH bands; rows
    per band = ``num_perm / bands``), ``min_band_hits`` (band keys two fragments must share to
    be compared, and at least a quarter of the smaller one's), ``bucket_cap`` (fragments kept
    per LSH bucket), ``max_postings`` (fragments kept per term in the restatement / chain
    term index).
    Confirmations: ``max_confirmation_chars``. Chains: ``chain_types``, ``chain_threshold``
    (summed rarity of shared key terms), ``slot_bonus`` (added when a number in the same
    slot changed), ``chain_max_df`` (terms in a larger share of fragments do not count).
    """

    threshold: float = 0.5
    restate_threshold: float = 0.5
    cjk_ngram: int = 2
    latin_ngram: int = 1
    min_shingles: int = 3
    max_shingles: int = 256
    num_perm: int = 32
    bands: int = 32
    min_band_hits: int = 2
    bucket_cap: int = 16
    max_postings: int = 32
    max_confirmation_chars: int = 40
    chain_types: tuple[str, ...] = ("goal", "constraint", "decision")
    chain_threshold: float = 0.5
    slot_bonus: float = 0.5
    chain_max_df: float = 0.5

    def __post_init__(self) -> None:
        for name in ("threshold", "restate_threshold", "chain_max_df"):
            value = getattr(self, name)
            if not _is_number(value) or not 0 < value <= 1:
                raise ConfigError(f"must be a number in (0, 1], got {value!r}", where=_where(name))
        for name in ("chain_threshold", "slot_bonus"):
            value = getattr(self, name)
            if not _is_number(value) or not 0 <= value < math.inf:
                raise ConfigError(f"must be a finite number >= 0, got {value!r}",
                                  where=_where(name))
        for name, low in (
            ("cjk_ngram", 1), ("latin_ngram", 1), ("min_shingles", 1), ("max_shingles", 1),
            ("num_perm", 1), ("bands", 1), ("min_band_hits", 1), ("bucket_cap", 1),
            ("max_postings", 1),
            ("max_confirmation_chars", 1),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigError(
                    f"must be a whole number >= {low}, got {value!r}", where=_where(name)
                )
        if self.min_band_hits > self.bands:
            raise ConfigError(
                f"min_band_hits ({self.min_band_hits}) must not exceed bands ({self.bands})",
                where=_where("min_band_hits"),
            )
        if self.num_perm % self.bands:
            raise ConfigError(
                f"num_perm ({self.num_perm}) must be a multiple of bands ({self.bands})",
                where=_where("bands"),
            )
        if self.min_shingles > self.max_shingles:
            raise ConfigError(
                f"min_shingles ({self.min_shingles}) must not exceed max_shingles "
                f"({self.max_shingles})",
                where=_where("min_shingles"),
            )
        if not isinstance(self.chain_types, tuple) or not all(
            isinstance(t, str) for t in self.chain_types
        ):
            raise ConfigError(
                f"must be a tuple of type names, got {self.chain_types!r}",
                where=_where("chain_types"),
            )
        from precis.analysis.model import FRAGMENT_TYPES

        unknown = sorted(set(self.chain_types) - set(FRAGMENT_TYPES))
        if unknown:
            raise ConfigError(
                f"unknown fragment type(s) {unknown}; known: {', '.join(FRAGMENT_TYPES)}",
                where=_where("chain_types"),
            )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ConsolidationConfig:
        """Build from a mapping such as ``{"threshold": 0.6}``; unknown keys are an error."""
        kwargs = settings_table(data, cls, "consolidation")
        if isinstance(kwargs.get("chain_types"), list):
            kwargs["chain_types"] = tuple(kwargs["chain_types"])
        return cls(**kwargs)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _where(name: str) -> str:
    return f"consolidation.{name}"


# -- confirmations ---------------------------------------------------------------------------


def is_confirmation(text: str, *, max_chars: int = 40) -> bool:
    """Whether ``text`` is only an acknowledgement ("ok", "好的，谢谢！", "👍", "got it.") or a
    prompt to go on ("continue", "继续").

    Only short texts (at most ``max_chars`` characters once stripped) made entirely of
    acknowledgement phrases, emoji, punctuation and spaces count; "好的，我先看一下" and
    "Thanks! Can you also ..." carry content and do not. Answers such as "yes" or "可以" are
    not confirmations: after a question they are the content.
    """
    stripped = text.strip()
    if not stripped or len(stripped) > max_chars:
        return False
    # Cheap exit on the first character when NFKC cannot change it into an acknowledgement's
    # first letter: an ASCII character (at most composed with a following accent) or a CJK
    # ideograph (NFKC-stable, composes with nothing).
    first = stripped[0]
    if first < "\x80":
        if first.lower() not in CONFIRMATION_START:
            return False
    elif ("\u4e00" <= first <= "\u9fff" or "\u3400" <= first <= "\u4dbf") and (
        first not in CONFIRMATION_START
    ):
        return False
    folded = (stripped if stripped.isascii() else unicodedata.normalize("NFKC", stripped)).lower()
    return CONFIRMATION.fullmatch(folded) is not None


# -- duplicates ------------------------------------------------------------------------------


class _UnionFind:
    __slots__ = ("parent",)

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, x: int) -> int:
        parent = self.parent
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            # the earlier fragment is the root, so roots are stable and ordered
            if ra < rb:
                self.parent[rb] = ra
            else:
                self.parent[ra] = rb

    def groups(self) -> list[list[int]]:
        """The sets of two or more, each in order, ordered by their first (= root) member."""
        parent = self.parent
        joined = list(compress(range(len(parent)), map(ne, parent, range(len(parent)))))
        members: dict[int, list[int]] = {}
        for i in sorted({*joined, *(parent[i] for i in joined)}):
            members.setdefault(self.find(i), []).append(i)
        return [members[root] for root in sorted(members)]


def _is_question(text: str) -> bool:
    return text.rstrip(" \t\r\n)]\"'”」*_`").endswith(("?", "？"))


class _Lazy:
    """Entities and question flags, computed only for fragments that meet a candidate."""

    __slots__ = ("_ents", "_questions", "fragments")

    def __init__(self, fragments: Sequence[Fragment]) -> None:
        self.fragments = fragments
        self._ents: dict[int, Entities] = {}
        self._questions: dict[int, bool] = {}

    def may_match(self, a: int, b: int) -> bool:
        """Both or neither a question, and numbers / names that agree."""
        qa = self._questions.get(a)
        if qa is None:
            qa = self._questions[a] = _is_question(self.fragments[a].text)
        qb = self._questions.get(b)
        if qb is None:
            qb = self._questions[b] = _is_question(self.fragments[b].text)
        if qa != qb:
            return False
        return compatible(
            self.entities(a), self.entities(b), self.fragments[a].text, self.fragments[b].text
        )

    def entities(self, i: int) -> Entities:
        ent = self._ents.get(i)
        if ent is None:
            ent = self._ents[i] = entities(self.fragments[i].text)
        return ent

    def entity_count(self, i: int) -> int:
        ent = self.entities(i)
        return len(ent.numbers) + len(ent.names)


@dataclass
class _Analysis:
    """Per-fragment features shared by duplicate and chain detection."""

    folded: set[int]
    groups: list[list[int]]  # duplicate groups, fragment indices in time order
    n_docs: int  # prose representatives with shingles (the df denominator)
    rep_of: array[int]  # fragment -> the first fragment with the same text, -1: none
    shingler: Shingler
    normalized: dict[int, str]
    terms: dict[int, list[tuple[str, int]]]  # shingler.terms(normalized[i])
    lazy: _Lazy
    df: Counter[int]  # shingle -> number of representatives holding it


def _analyse(
    fragments: Sequence[Fragment],
    cfg: ConsolidationConfig,
    keep_normalized: Callable[[int], bool] | None = None,
) -> _Analysis:
    uf = _UnionFind(len(fragments))
    shingler = Shingler(
        cjk_ngram=cfg.cjk_ngram, latin_ngram=cfg.latin_ngram, max_shingles=cfg.max_shingles
    )
    texts = _exact_pass(fragments, cfg, uf, keep_normalized)
    shingles, terms = _shingle_sets(shingler, texts)
    restated = _restated_sets(shingler, texts, shingles)
    df: Counter[int] = Counter(concat.from_iterable(shingles.values()))
    lazy = _Lazy(fragments)
    _near_duplicates(fragments, shingles, df, lazy, uf, cfg)
    if restated:
        _restatements(restated, shingles, lazy, [f.role for f in fragments], uf, cfg)
    return _Analysis(
        texts.folded, uf.groups(), len(shingles), texts.rep_of, shingler, texts.normalized,
        terms, lazy, df,
    )


@dataclass
class _Texts:
    """What the exact-duplicate pass found out about each fragment's text."""

    folded: set[int]
    rep_of: array[int]  # fragment -> the first fragment with the same text, -1: none
    prose: list[int]  # prose representatives (first of their text), in order
    prose_texts: list[str]  # ... their normalised texts
    normalized: dict[int, str]  # the normalised texts kept for chain detection
    wanted: set[int]  # their positions in ``prose``


def _exact_pass(
    fragments: Sequence[Fragment],
    cfg: ConsolidationConfig,
    uf: _UnionFind,
    keep_normalized: Callable[[int], bool] | None,
) -> _Texts:
    """Fold confirmations and join fragments with the same normalised text (step 1)."""
    out = _Texts(set(), array("i", [-1]) * len(fragments), [], [], {}, set())
    folded, rep_of, prose, prose_texts = out.folded, out.rep_of, out.prose, out.prose_texts
    # normalised text -> its first fragment; a long text is keyed by its digest (bytes and
    # str keys never compare equal, so the two cannot mix)
    exact_prose: dict[str | bytes, int] = {}
    exact_other: dict[str | bytes, int] = {}
    max_ack = cfg.max_confirmation_chars
    # raw text -> what its first fragment turned out to be (_FOLDED, _EMPTY or the index of
    # the representative of its normalised text): a text said again costs one lookup
    # (prose and other kinds are normalised differently, so they have a table each)
    seen_prose: dict[str, int] = {}
    seen_other: dict[str, int] = {}
    for i, frag in enumerate(fragments):
        text = frag.text
        is_prose = frag.kind in PROSE_KINDS
        seen = seen_prose if is_prose else seen_other
        outcome = seen.get(text)
        if outcome is not None:
            if outcome >= 0:
                rep_of[i] = outcome
                uf.union(outcome, i)
            elif outcome == _FOLDED:
                folded.add(i)
            continue
        if len(text) <= 2 * max_ack and is_confirmation(text, max_chars=max_ack):
            folded.add(i)
            seen[text] = _FOLDED
            continue
        if is_prose:
            norm = normalize(text)
            exact = exact_prose
        else:
            norm = " ".join(text.split())
            exact = exact_other
        if not norm:
            seen[text] = _EMPTY
            continue
        first = exact.setdefault(norm if len(norm) <= _KEY_CHARS else fingerprint(norm), i)
        seen[text] = rep_of[i] = first
        if first != i:
            uf.union(first, i)
            continue
        if not is_prose:
            continue
        if keep_normalized is not None and keep_normalized(i):
            out.normalized[i] = norm  # for chain detection
            out.wanted.add(len(prose))
        prose.append(i)
        prose_texts.append(norm)
    return out


def _shingle_sets(
    shingler: Shingler, texts: _Texts
) -> tuple[dict[int, set[int]], dict[int, list[tuple[str, int]]]]:
    """The shingles of each prose representative that has some, and the terms of those
    kept for chain detection."""
    prose = texts.prose
    hash_sets, term_lists = shingler.hashes_and_terms(texts.prose_texts, texts.wanted)
    shingles = {i: hashes for i, hashes in zip(prose, hash_sets) if hashes}
    terms = {prose[k]: found for k, found in term_lists.items()}
    return shingles, terms


def _restated_sets(
    shingler: Shingler, texts: _Texts, shingles: dict[int, set[int]]
) -> dict[int, set[int]]:
    """Fragments with a restatement cue -> their shingles without the cue words
    ("我再强调一下", "as I said")."""
    restated: dict[int, set[int]] = {}
    prose, prose_texts = texts.prose, texts.prose_texts
    for k in matching(RESTATEMENT_HINT, prose_texts):
        norm = prose_texts[k]
        if prose[k] in shingles and RESTATEMENT_CUE.search(norm):
            restated[prose[k]] = shingler.hashes(RESTATEMENT_CUE.sub(" ", norm))
    return restated


def _near_duplicates(
    fragments: Sequence[Fragment],
    shingles: dict[int, set[int]],
    df: Counter[int],
    lazy: _Lazy,
    uf: _UnionFind,
    cfg: ConsolidationConfig,
) -> None:
    """Join the near duplicates among the prose representatives (step 3)."""
    # Signatures leave out shingles found in many fragments: two unrelated sentences that
    # share a few such words would otherwise collide in LSH bands (exact verification still
    # counts every shingle). A set made only of common shingles keeps them all.
    common = max(_COMMON_DF_MIN, _COMMON_DF_SHARE * len(shingles))
    common_set = set(compress(df, map(common.__lt__, df.values())))
    indexed = [i for i, sh in shingles.items() if len(sh) >= cfg.min_shingles]  # item -> fragment
    index = BandIndex(
        num_perm=cfg.num_perm,
        bands=cfg.bands,
        bucket_cap=cfg.bucket_cap,
        min_hits=cfg.min_band_hits,
    )
    add = index.add
    for i, nums in zip(indexed, numbers_of([fragments[i].text for i in indexed])):
        partition = zlib.crc32("\x00".join(sorted(nums)).encode()) if nums else 0
        add(shingles[i], partition, common_set)
    threshold = cfg.threshold
    sets = [shingles[i] for i in indexed]  # LSH item -> its shingles
    sizes = list(map(len, sets))

    def similar(a: int, b: int) -> bool:
        la, lb = sizes[a], sizes[b]
        if (la < threshold * lb) if la < lb else (lb < threshold * la):
            return False  # Jaccard <= smaller / larger
        shared = len(sets[a] & sets[b])
        return shared >= threshold * (la + lb - shared) and lazy.may_match(indexed[a], indexed[b])

    for a, b in index.pairs(similar):
        uf.union(indexed[a], indexed[b])


def _restatements(
    restated: dict[int, set[int]],
    shingles: dict[int, set[int]],
    lazy: _Lazy,
    roles: list[str],
    uf: _UnionFind,
    cfg: ConsolidationConfig,
) -> None:
    """Join each fragment with a restatement cue to the earlier fragment it overlaps most.

    The overlap coefficient (shared shingles / the smaller set) must reach
    ``restate_threshold`` with at least two shared shingles, and the earlier fragment must
    have ``min_shingles``: a two-word fragment lies inside almost any restatement.

    Earlier fragments are found through an index shingle -> the ``max_postings`` latest
    fragments holding it, so the work per fragment is bounded. Only the shingles of the
    restatements are ever looked up, so only those are indexed.
    """
    postings: defaultdict[int, list[int]] = defaultdict(list)
    cap = cfg.max_postings
    limit = 2 * cap
    threshold, min_shingles = cfg.restate_threshold, cfg.min_shingles
    last = max(restated)
    wanted: set[int] = set().union(*restated.values())
    for i, sh in shingles.items():  # insertion order = time order
        if i > last:
            break
        mine = restated.get(i)
        if mine:
            best: tuple[bool, float, int] | None = None
            seen: set[int] = set()
            for h in mine:
                for j in postings.get(h, ())[-cap:]:
                    if j in seen:
                        continue
                    seen.add(j)
                    other = shingles[j]
                    if len(other) < min_shingles:
                        continue  # a two-word fragment lies inside almost any restatement
                    shared = len(mine & other)
                    overlap = shared / min(len(mine), len(other))
                    if shared < 2 or overlap < threshold or not lazy.may_match(j, i):
                        continue
                    # "as I said" / "我再强调一下": the speaker repeats their own words first
                    rank = (roles[j] == roles[i], overlap, -j)
                    if best is None or rank > best:
                        best = rank
            if best is not None:
                uf.union(-best[2], i)
        for h in wanted.intersection(sh):
            plist = postings[h]
            plist.append(i)
            if len(plist) > limit:  # keep the latest entries: O(1) amortised
                del plist[:-cap]


def _groups_to_records(
    fragments: Sequence[Fragment], analysis: _Analysis
) -> list[DuplicateGroup]:
    out: list[DuplicateGroup] = []
    for group in analysis.groups:
        ids = tuple(fragments[i].id for i in group)
        out.append(
            DuplicateGroup(
                kept=ids[-1],
                members=ids,
                most_complete=fragments[_fullest(fragments, group, analysis)].id,
            )
        )
    return out


def _fullest(fragments: Sequence[Fragment], group: list[int], analysis: _Analysis) -> int:
    """The member with the most numbers and names, then the longest text, then the latest.

    Copies with the same normalised text count once (their representative's entities), so
    a group of 10k identical lines costs one entity extraction.
    """
    rep_of = analysis.rep_of
    reps = {rep_of[i] for i in group}
    if len(reps) == 1:
        return max(group, key=lambda i: (len(fragments[i].text.strip()), i))
    size = {r: analysis.lazy.entity_count(r) for r in reps}
    return max(group, key=lambda i: (size[rep_of[i]], len(fragments[i].text.strip()), i))


def find_duplicates(
    fragments: Sequence[Fragment],
    *,
    threshold: float | None = None,
    config: ConsolidationConfig | None = None,
) -> list[DuplicateGroup]:
    """Groups of fragments that say the same thing, in order of their first member.

    ``threshold`` overrides ``config.threshold`` (the Jaccard similarity of shingle sets a
    near-duplicate pair must reach). Members are in time order and the latest is ``kept``.
    """
    cfg = config or ConsolidationConfig()
    if threshold is not None:
        cfg = dataclasses.replace(cfg, threshold=threshold)
    return _groups_to_records(fragments, _analyse(fragments, cfg))


# -- chains ----------------------------------------------------------------------------------


def _check_types(fragments: Sequence[Fragment], types: Sequence[str]) -> None:
    if len(types) != len(fragments):
        raise InputError(
            f"got {len(types)} fragment types for {len(fragments)} fragments; "
            "give one type per fragment",
            where="types",
        )


def _chain_type(types: Sequence[str], cfg: ConsolidationConfig) -> Callable[[int], bool]:
    eligible = set(cfg.chain_types)
    return lambda i: types[i] in eligible


def _chains(
    fragments: Sequence[Fragment],
    types: Sequence[str],
    analysis: _Analysis,
    cfg: ConsolidationConfig,
) -> tuple[list[Chain], list[list[int]]]:
    later_copy: set[int] = set()
    for group in analysis.groups:
        later_copy.update(group[1:])  # a restatement is not a new version
    eligible_types = set(cfg.chain_types)
    # the normalised texts are kept for the prose representatives (never folded) of the
    # eligible types only, in time order
    eligible = [
        (i, norm) for i, norm in analysis.normalized.items()
        if types[i] in eligible_types and fragments[i].kind in PROSE_KINDS
        and i not in analysis.folded and i not in later_copy
    ]
    hinted = set(matching(CHANGE_HINT, [norm for _, norm in eligible]))
    items: list[ChainItem] = []
    for k, (i, norm) in enumerate(eligible):
        item = chain_item(i, fragments[i].text, norm, analysis.shingler, analysis.terms.get(i),
                          maybe_cue=k in hinted, message=fragments[i].provenance.message,
                          role=fragments[i].role)
        if item is not None:
            items.append(item)
    if len(items) < 2:
        return [], []
    linked = link_versions(
        items,
        df=analysis.df,
        n_docs=max(1, analysis.n_docs),
        threshold=cfg.chain_threshold,
        slot_bonus=cfg.slot_bonus,
        max_df=cfg.chain_max_df,
        max_postings=cfg.max_postings,
    )
    chains: list[Chain] = []
    index_chains: list[list[int]] = []
    for n, chain in enumerate(linked, 1):
        members = [items[p] for p in chain]
        chains.append(
            Chain(
                id=f"C{n}",
                topic=topic_label(members, [analysis.normalized[m.index] for m in members]),
                fragments=tuple(fragments[m.index].id for m in members),
            )
        )
        index_chains.append([m.index for m in members])
    return chains, index_chains


def find_chains(
    fragments: Sequence[Fragment],
    types: Sequence[str],
    *,
    config: ConsolidationConfig | None = None,
) -> list[Chain]:
    """Requirement version chains; ``types[i]`` is the fragment type of ``fragments[i]``.

    Only fragments whose type is in ``config.chain_types`` (goal, constraint, decision) take
    part; a restatement (a later member of a duplicate group) is never a new version, a
    fragment is never a new version of one in the same message (``provenance.message``), and
    only the user's words are a new version of the user's. Chains are in order of their
    first version; ids are ``C1``, ``C2``, ...
    """
    _check_types(fragments, types)
    cfg = config or ConsolidationConfig()
    return _chains(fragments, types, _analyse(fragments, cfg, _chain_type(types, cfg)), cfg)[0]


# -- everything ------------------------------------------------------------------------------


_ECHO_CHARS = 160


def _echoes(fragments: Sequence[Fragment], older: int, newer: int,
            superseded: dict[str, str]) -> None:
    """A short reply of the other speaker that repeats a value the newer version changed
    ("OK, 31 days it is." after "the limit must be 31 days", before "... 92 days
    instead") is superseded with it: it holds only as long as the old version did."""
    stale = numbers(fragments[older].text) - numbers(fragments[newer].text)
    if not stale:
        return
    speaker = fragments[older].role
    for i in range(older + 1, newer):
        f = fragments[i]
        if (f.role != speaker and f.id not in superseded and len(f.text) <= _ECHO_CHARS
                and stale & numbers(f.text)):
            superseded[f.id] = fragments[newer].id


def consolidate(
    fragments: Sequence[Fragment],
    types: Sequence[str],
    *,
    config: ConsolidationConfig | None = None,
) -> Consolidation:
    """Duplicates, chains, folded confirmations and what supersedes what.

    ``superseded_by`` maps an older duplicate to the kept (latest) copy and an older chain
    version to the next version; a copy of a chain version made before the next version
    also points to that next version.
    """
    _check_types(fragments, types)
    cfg = config or ConsolidationConfig()
    analysis = _analyse(fragments, cfg, _chain_type(types, cfg))
    duplicates = _groups_to_records(fragments, analysis)
    chains, index_chains = _chains(fragments, types, analysis, cfg)
    superseded: dict[str, str] = {}
    group_of: dict[int, list[int]] = {}
    for group in analysis.groups:
        for i in group:
            group_of[i] = group
        for i in group[:-1]:
            superseded[fragments[i].id] = fragments[group[-1]].id
    for chain in index_chains:
        for older, newer in pairwise(chain):
            if fragments[older].provenance.message == fragments[newer].provenance.message:
                continue  # two parts of one new version, said together: both hold
            for i in group_of.get(older, [older]):
                if i < newer:
                    superseded[fragments[i].id] = fragments[newer].id
            _echoes(fragments, older, newer, superseded)
    return Consolidation(
        duplicates=duplicates,
        chains=chains,
        folded={fragments[i].id for i in sorted(analysis.folded)},
        superseded_by=superseded,
    )
