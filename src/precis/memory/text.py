"""Words of a text, in Chinese and English: the one cut behind every keyword term.

:func:`words` splits a text into words: a run of Chinese characters is cut into words
(``rjieba``, search mode: a long word also yields its parts), a run of other letters and
digits is a word, and the two scripts are always cut apart where they meet, so
``Postgres替换MySQL`` gives ``postgres``, ``替换``, ``mysql`` and ``v2版本`` gives ``v2``,
``版本``; two single characters jieba leaves side by side are also joined (see
:func:`_cjk_words`). Full-width letters and digits are folded first (NFKC). The keyword
index's terms (:func:`precis.memory.keywords.tokenize`) are these words put through SQLite's
FTS5 tokenizer, for the text that is indexed and for the query alike. Stop words are dropped from
queries, and so never kept in the index's postings (they still count in a card's length).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from itertools import pairwise

from precis.errors import MissingDependencyError

__all__ = ["SEGMENTER", "query_words", "words"]

SEGMENTER = "rjieba-search-3"  # recorded in the store; change it when the terms a text gives change

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK = re.compile(f"[{_HAN}]+")
# a run of Chinese characters, or a run of other letters and digits (an apostrophe inside
# an English word keeps it whole: "don't"); "_" and punctuation separate words
_WORD = re.compile(f"[{_HAN}]+|[^\\W_{_HAN}]+(?:['’][^\\W_{_HAN}]+)?")

_cut: Callable[[str], list[str]] | None = None


def _cutter() -> Callable[[str], list[str]]:
    global _cut
    if _cut is None:
        try:
            import rjieba
        except ImportError:  # pragma: no cover - rjieba is a dependency of precis
            raise MissingDependencyError(
                package="rjieba", extra="zh", purpose="Chinese keyword search"
            ) from None
        _cut = rjieba.cut_for_search
    return _cut


def words(text: str) -> list[str]:
    """Lower-cased words of a text in order (see the module docstring)."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    out: list[str] = []
    for token in _WORD.findall(text):
        if _CJK.match(token):
            out.extend(_cjk_words(token))
        else:
            out.append(token.lower().replace("’", "'"))
    return out


def _cjk_words(run: str) -> list[str]:
    """The words of a run of Chinese characters: ``rjieba``'s search-mode cut, and each two
    single characters it leaves side by side also joined. jieba cuts a word by its context
    (``字段`` alone is ``字`` + ``段``, inside ``字段的类型`` it is one word): the joined pair
    makes the index and a query agree either way."""
    cut = [w for w in _cutter()(run) if w.strip()]
    return cut + [a + b for a, b in pairwise(cut) if len(a) == 1 and len(b) == 1]


def query_words(text: str) -> list[str]:
    """The distinct content words of a query, stop words removed, in first-seen order."""
    seen: dict[str, None] = {}
    for word in words(text):
        if word in STOP_WORDS or (len(word) == 1 and word.isascii() and not word.isdigit()):
            continue
        seen.setdefault(word, None)
    return list(seen)


# (the words that introduce a cause - because, 因为, 所以 - are kept: a "why" question
# looks for them, see precis.memory.query)
STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are aren't as at be been
    before being below between both but by can can't cannot could couldn't did didn't do does
    doesn't doing don't down during each few for from further had hadn't has hasn't have
    haven't having he he'd he'll he's her here here's hers herself him himself his how how's i
    i'd i'll i'm i've if in into is isn't it it's its itself let's me more most mustn't my
    myself no nor not of off on once only or other ought our ours ourselves out over own same
    shan't she she'd she'll she's should shouldn't so some such than that that's the their
    theirs them themselves then there there's these they they'd they'll they're they've this
    those through to too under until up very was wasn't we we'd we'll we're we've were weren't
    what what's when when's where where's which while who who's whom why why's with won't
    would wouldn't you you'd you'll you're you've your yours yourself yourselves also just
    ever anything something thing things get got tell told say said know think would will
    shall may might must us one ones kind
    的 了 是 我 你 他 她 它 我们 你们 他们 她们 吗 呢 吧 啊 呀 嘛
    和 与 或 及 在 有 没有 不 也 都 就 还 又 把 被 让 给 对 从 到
    这 那 这个 那个 这些 那些 什么 怎么 怎样 如何 为什么 哪 哪个 哪些
    哪里 谁 多少 几 之前 以前 当时 一下 一个 一些 个 上 下 里 中 吗
    过 着 得 地 之 但是 可是 然后 如果 就是 还是 或者 而且
    并且 可以 能 会 要 想 说 讲 问 请 帮 帮我
    """.split()  # noqa: SIM905 - a word list reads best as text
)
