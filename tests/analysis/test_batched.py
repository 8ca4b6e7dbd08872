"""The fast paths of analysis give exactly what the plain, one-text-at-a-time rules give.

Consolidation and scoring run their regexes over many texts joined together, look each
distinct token up once, skip work a cheap check rules out and hash new words in batches.
Each test here states the plain rule as a reference (one regex call per text, as the code
read before it was made fast) and checks the fast path against it on generated texts that
hold the characters those shortcuts must survive: separators (NUL, line breaks), white
space of every kind, full-width punctuation, combining marks, a capital sigma (whose lower
case depends on its neighbours), dotted and dotless i, long s.
"""

from __future__ import annotations

import random
import re
import string
import unicodedata
import zlib
from collections import Counter
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from precis.analysis import importance
from precis.analysis._entities import numbers, numbers_of
from precis.analysis._minhash import HIT_SHARE, BandIndex
from precis.analysis._phrases import CONFIRMATION, RESTATEMENT_CUE, RESTATEMENT_HINT, matching
from precis.analysis._shingles import Shingler, hash32, normalize, stem
from precis.analysis.consolidate import is_confirmation
from precis.segment.model import Fragment, Provenance

_PIECES = [
    "foo", "Bar", "fooBar", "user_id", "app/db.py", "https://x.io/a?b=1", "PAY-1287", "`x y`",
    "`", "-", "--flag", "/", ".", "a.py", "1.2", "3,400", "v1", "AB", "ABC", "I", " ", "\n",
    "\t", "\x00", "\x01", "\x00\n", "\x1c", "\u2028", "\x85", "\xa0", "\u3000", "1. ", "- ",
    "* ", "  2) ", "中文", "我们需要一个数据库", "刚才", "那个 SQL", "as I said", "AS WE MENTIONED",
    "aſ before", "İ", "ı", "\u212a", "the same query", "😀", "é", "e\u0301", "，", "？", "（",
    "）", "：", "…", "Σ", "ΑΣ", "ｏｋ", "Ｏｋ", "好的", "ok", "thanks", "👍", "\ufe0f", "again",
    "我再强调一下", "prices", "copies", "the", "ｶ", "①", "ﬁ", "가나다", "か\u3099", "\U00020000",
]
texts = st.lists(st.sampled_from(_PIECES), max_size=12).map("".join)
text_lists = st.lists(texts, min_size=1, max_size=12)
_SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(text_lists)
def test_matching_finds_the_texts_search_finds(items: list[str]) -> None:
    patterns = [RESTATEMENT_HINT, re.compile(r"\bfoo\b"), re.compile(r"(?<![a-z])bar", re.I),
                re.compile(r"\d"), re.compile(r"[A-Z]{2}")]
    for pattern in patterns:
        assert matching(pattern, items) == [i for i, t in enumerate(items) if pattern.search(t)]


def test_matching_by_hand() -> None:
    # "foo" at the end of one text and "bar" at the start of the next never make "foobar"
    assert matching(re.compile("foobar"), ["xfoo", "barx", "foobar"]) == [2]
    assert matching(re.compile(r"\bab\b"), ["ab", "xab", "ab\x00x"]) == [0, 2]
    assert matching(re.compile("a"), []) == []


_ASCII_PUNCT = str.maketrans(string.punctuation, " " * len(string.punctuation))


def _normalize_reference(text: str) -> str:
    if text.isascii():
        return " ".join(text.lower().translate(_ASCII_PUNCT).split())
    folded = unicodedata.normalize("NFKC", text).lower()
    return " ".join(re.sub(r"[\W_]+", " ", folded).split())


@_SETTINGS
@given(texts)
def test_normalize_is_nfkc_lower_case_without_punctuation(text: str) -> None:
    assert normalize(text) == _normalize_reference(text)


def test_normalize_keeps_the_final_sigma_rule() -> None:
    # "…" is NFKC "...", which lower() skips when it looks for the letter before a sigma
    assert normalize("ﬁmysql…Σ") == "fimysql ς"
    assert normalize("数据库，改成 Postgres？") == "数据库 改成 postgres"


@pytest.mark.parametrize("config", [{}, {"cjk_ngram": 3}, {"cjk_ngram": 1}, {"latin_ngram": 2},
                                    {"max_shingles": 4}])
def test_hashes_of_many_texts_equal_one_at_a_time(config: dict[str, int]) -> None:
    rnd = random.Random(7)
    items = [normalize("".join(rnd.choice(_PIECES) for _ in range(rnd.randint(0, 20))))
             for _ in range(600)]
    items.append(normalize("数据库迁移 " * 5000))  # longer than a chunk
    assert Shingler(**config).hashes_of(items) == [Shingler(**config).hashes(t) for t in items]


@pytest.mark.parametrize("config", [{}, {"cjk_ngram": 3}, {"latin_ngram": 2}])
def test_terms_made_with_the_hashes_equal_terms(config: dict[str, int]) -> None:
    rnd = random.Random(5)
    items = [normalize("".join(rnd.choice(_PIECES) for _ in range(rnd.randint(0, 20))))
             for _ in range(700)]
    wanted = set(range(0, 700, 3))
    hashes, terms = Shingler(**config).hashes_and_terms(items, wanted)
    assert hashes == [Shingler(**config).hashes(t) for t in items]
    assert terms == {k: Shingler(**config).terms(items[k]) for k in wanted}


@_SETTINGS
@given(texts)
def test_terms_are_the_shingles_with_their_hashes(text: str) -> None:
    norm = normalize(text)
    shingler = Shingler(max_shingles=10_000)
    terms = shingler.terms(norm)
    assert all(h == hash32(t) for t, h in terms)
    assert {h for _, h in terms} == shingler.hashes(norm)
    assert [t for t, _ in terms] == shingler.strings(norm)


def test_terms_by_hand() -> None:
    assert Shingler().terms("the prices 数据库") == [
        ("price", hash32("price")), ("数据", hash32("数据")), ("据库", hash32("据库")),
    ]
    assert stem("copies") == "copy"
    assert hash32("price") == zlib.crc32(b"price")


@_SETTINGS
@given(texts)
def test_confirmation_shortcut_keeps_the_rule(text: str) -> None:
    stripped = text.strip()
    expected = bool(stripped) and len(stripped) <= 40 and CONFIRMATION.fullmatch(
        unicodedata.normalize("NFKC", stripped).lower()) is not None
    assert is_confirmation(text) == expected


def test_confirmations_by_hand() -> None:
    assert is_confirmation("Ｏｋ，谢谢！")  # full-width letters become "ok" under NFKC
    assert is_confirmation("👍") and is_confirmation("好的")
    assert not is_confirmation("好的，我先看一下") and not is_confirmation("Okay, and the tests?")


@_SETTINGS
@given(text_lists)
def test_numbers_of_many_texts(items: list[str]) -> None:
    assert numbers_of(items) == [numbers(t) for t in items]


# -- importance -------------------------------------------------------------------------------

_REFERENCE_IDENTIFIERS = (
    ("`", re.compile(r"`([^`\n]{2,80})`")),
    ("://", re.compile(r"(https?://[^\s`'\"<>)\]]+)")),
    ("/", re.compile(r"(?<![\w.~@/-])((?:[\w.~@-]+)?(?:/[\w.@~-]+)+/?)")),
    ("-", re.compile(r"\b([A-Z][A-Z0-9]+-\d+)\b")),
    (".", re.compile(
        r"(?<![\w.-])([\w-]+\.(?:py|js|ts|tsx|jsx|json|md|sql|ya?ml|toml|go|rs|java|csv|txt|sh"
        r"|ini|cfg|lock|html|css))\b")),
    ("_", re.compile(r"\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b")),
    ("", re.compile(r"\b([a-z]+[A-Z][A-Za-z0-9]*)\b")),
)


def _identifiers_reference(text: str) -> set[str]:
    found: set[str] = set()
    for needle, pattern in _REFERENCE_IDENTIFIERS:
        if needle in text:
            found.update(v.lower() for v in pattern.findall(text) if len(v) >= 3)
    return found


@_SETTINGS
@given(text_lists)
def test_identifiers_per_token_equal_the_patterns_over_the_whole_text(items: list[str]) -> None:
    found = importance._identifiers_of(items)
    for i, text in enumerate(items):
        assert found.get(i, set()) == _identifiers_reference(text)
        assert importance.identifiers(text) == _identifiers_reference(text)


_DENSE = re.compile(
    r"\d+(?:[.,:]\d+)*%?|`[^`\n]+`|--?[a-zA-Z][\w-]*|[\w.-]*/[\w./-]+|\b[A-Z]{2,}\b"
    r"|(?m:^\s*(?:\d+[.)]|[-*+])\s)"
)


def _density_reference(text: str) -> float:
    text = text[:600]
    return min(1.0, len(_DENSE.findall(text)) / (1.0 + len(text) / 60.0))


@_SETTINGS
@given(text_lists)
def test_densities_counted_together_equal_one_at_a_time(items: list[str]) -> None:
    assert importance._densities(items) == [_density_reference(t) for t in items]


def test_densities_by_hand() -> None:
    # a line of one text ending in a bullet does not borrow the next text's line break
    assert importance._densities(["x\n-", "1. y"]) == [0.0, pytest.approx(1 / (1 + 4 / 60))]
    assert importance._densities(["a/b/c " * 200])[0] == 1.0


_BACK = re.compile(
    r"as (?:i |we )?(?:mentioned|said|discussed|agreed|noted)|as before|like before|"
    r"the same (?:query|sql|code|script|command|approach|file|config|one)|"
    r"(?:from|in) the (?:previous|earlier|last) (?:message|step|query|answer)|"
    r"(?:that|the) (?:query|sql|script|snippet|command) (?:above|earlier|before)|"
    r"刚才|前面(?:说|提|那)|之前(?:说|提|那|的)|上面(?:的|那)|还是按|按照?刚才|同样的|那个\s*(?:SQL|sql|脚本|方案|命令)",
    re.IGNORECASE,
)


def _fragments(items: Sequence[str], roles: Sequence[str]) -> list[Fragment]:
    return [Fragment(f"S{k + 1}", "sentence", t, roles[k % len(roles)], "en",
                     Provenance(0, k, 0, 0, len(t))) for k, t in enumerate(items)]


@_SETTINGS
@given(text_lists)
def test_back_references_found_together_equal_one_at_a_time(items: list[str]) -> None:
    frags = _fragments(items, ["user", "assistant", "tool"])
    expected = {k for k, f in enumerate(frags)
                if f.role in ("user", "assistant") and _BACK.search(f.text)}
    assert importance._back_references(frags) == expected


def test_back_references_by_hand() -> None:
    frags = _fragments(["AS WE MENTIONED", "aſ before", "nothing here", "刚才那个"], ["user"])
    assert importance._back_references(frags) == {0, 1, 3}


def test_restatement_hint_is_a_superset_of_the_cue() -> None:
    samples = ["as i said", "as we agreed", "as discussed earlier", "to repeat", "remember",
               "same as before", "再说一遍", "前面说过", "也就是说", "reiterate", "once more"]
    for text in samples:
        assert RESTATEMENT_CUE.search(text) and RESTATEMENT_HINT.search(text)


# -- LSH candidates ----------------------------------------------------------------------------


def _pairs_reference(
    items: Sequence[tuple[int, ...]], cap: int, min_hits: int
) -> set[tuple[int, int]]:
    """Buckets of every key with their ``cap`` latest items; pairs with enough shared keys."""
    buckets: dict[int, list[int]] = {}
    out: set[tuple[int, int]] = set()
    for item, keys in enumerate(items):
        hits: Counter[int] = Counter()
        for key in keys:
            bucket = buckets.setdefault(key, [])
            hits.update(bucket)
            bucket.append(item)
            del bucket[:-cap]
        for other, count in hits.items():
            if count >= min_hits and count >= HIT_SHARE * min(len(keys), len(items[other])):
                out.add((other, item))
    return out


@pytest.mark.parametrize(("num_perm", "bands", "cap", "min_hits"),
                         [(32, 32, 16, 2), (32, 32, 1, 1), (32, 32, 2, 2), (32, 16, 4, 1)])
def test_band_index_pairs_equal_the_plain_bucket_rule(
    num_perm: int, bands: int, cap: int, min_hits: int
) -> None:
    rnd = random.Random(11)
    vocabulary = [rnd.getrandbits(32) for _ in range(300)]
    index = BandIndex(num_perm=num_perm, bands=bands, bucket_cap=cap, min_hits=min_hits)
    items = []
    for _ in range(400):
        hashes = set(rnd.sample(vocabulary, rnd.randint(2, 25)))
        partition = rnd.choice([0, 0, 0, 7])
        index.add(hashes, partition)
        items.append(index.keys(hashes, partition))
    found = set(index.pairs(lambda a, b: True))
    assert found == _pairs_reference(items, cap, min_hits)
    assert found  # the random sets do share keys


def test_band_keys_are_the_bin_minima() -> None:
    index = BandIndex(num_perm=4, bands=4, bucket_cap=4)
    # bins by value mod 4: {8, 12} -> 8, {5} -> 5, {7, 3} -> 3
    assert sorted(index.keys({8, 12, 5, 7, 3}, 0)) == [3, 5, 8]
    assert sorted(index.keys({8, 5}, 1)) == [(1 << 32) | 5, (1 << 32) | 8]
