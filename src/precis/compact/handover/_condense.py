"""Long text made short in the speaker's own words: the sentences that carry the most
(exact facts first, the opening sentence a little), courtesies left out, kept in their
order; a sentence cut only at a word boundary and never inside an exact fact."""

from __future__ import annotations

import re

from precis.compact._facts import facts

__all__ = ["condense", "join", "sentences", "split_sentences", "top_sentences"]

_SPACE = re.compile(r"\s+")
# a sentence ends at . ! ? ; (not the "1." of a numbered list) or at a line break
_SENTENCE = re.compile(r"(?<=[^\d\s.][.!?;])\s+(?=\S)|(?<=[。！？；])")
_LINE = re.compile(r"\s*\n\s*")
_COURTESY = re.compile(
    r"^(?:hi|hello|hey|thanks?|thank you|sure|great|perfect|ok(?:ay)?|of course|certainly|"
    r"absolutely|got it|no problem|good|yes|you're welcome|i see|understood|"
    r"好的|谢谢|你好|您好|当然|没问题|是的|哈哈|太好了|哦|噢|啊|原来如此|明白|我明白了|嗯)"
    r"(?:\b|(?<=[\u4e00-\u9fff]))[^.!?。！？]{0,30}[.!?。！？,，]*$", re.IGNORECASE)
_WORD = re.compile(r"\w+")
_WORDISH = re.compile(r"[^\W_]")
_BULLET = re.compile(r"^(?:[-*•+]|#{1,6})\s+")  # a list item's or a heading's mark
_LATIN_END = re.compile(r"[A-Za-z0-9_/.)`]$")
_LATIN_START = re.compile(r"^[A-Za-z0-9_/(`]")


def _clip(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters at a word boundary, never inside an exact
    fact (the cut moves past the fact when that costs less than a third more)."""
    if len(text) <= limit:
        return text
    cut = limit
    for fact in facts(text[: limit + 200]):
        if fact.start < cut < fact.end:
            cut = fact.end if fact.end <= limit * 1.3 else fact.start
            break
    clause = max(text.rfind(p, 0, cut + 1) for p in ("，", "；", "：", "、", ", ", "; "))
    space = text.rfind(" ", 0, cut + 1)
    if clause > cut * 0.5:
        cut = clause
    elif cut < len(text) and text[cut:cut + 1] not in (" ", "") and space > cut * 0.6:
        cut = space
    out = text[:cut]
    if out.count("`") % 2:  # no code span left open
        out = out[: out.rfind("`")]
    return out.rstrip(" ,;:，；：、") + "…"


def condense(text: str, limit: int, language: str = "en", lead: float = 0.0) -> str:
    """``text`` within about ``limit`` characters (see the module docs); ``lead`` weighs
    sentences by how early they come (a long request says what it is about first)."""
    flat = _SPACE.sub(" ", text).strip()
    if len(flat) <= limit:
        return flat
    sentences = _all_sentences(text)
    content = [k for k, s in enumerate(sentences) if not _COURTESY.match(s)] or \
        list(range(len(sentences)))
    n = max(1, len(sentences))
    scored = sorted(content, key=lambda k: -(3.0 * len(facts(sentences[k])) + lead * (1 - k / n)
                                             + min(len(_WORD.findall(sentences[k])), 30) / 10
                                             + (4.0 if k == content[0] else 0.0)
                                             + (3.0 if sentences[k].endswith(("?", "？"))
                                                else 0.0)))
    joiner = " "  # at most one space between sentences (see join)
    picked: list[int] = []
    used = 0
    for k in scored:
        size = len(sentences[k]) + len(joiner)
        if used + size <= limit:
            picked.append(k)
            used += size
    if not picked:
        return _clip(sentences[scored[0]], limit)
    picked.sort()
    out: list[str] = []
    for n, k in enumerate(picked):
        if n and k != picked[n - 1] + 1:
            out.append("…")
        out.append(sentences[k])
    return join(out, language)


def join(pieces: list[str], language: str) -> str:
    """Sentences joined: by a space in English, and in Chinese where a sentence that ends
    in Latin text meets one that begins with it (``…/vars`` ``正在…`` stay apart)."""
    if language != "zh":
        return " ".join(pieces)
    out = ""
    for piece in pieces:
        if out and (_LATIN_END.search(out) or _LATIN_START.match(piece)):
            out += " "
        out += piece
    return out


def split_sentences(text: str) -> list[str]:
    """``text``'s sentences: each line of a list is one at least; a sentence ends at
    . ! ? ; (not after a number, as in "1.", nor in an ellipsis) or at 。！？；."""
    return _all_sentences(text)


def _all_sentences(text: str) -> list[str]:
    found: list[str] = []
    for line in _LINE.split(text.strip()):
        flat = _BULLET.sub("", _SPACE.sub(" ", line).strip())
        for piece in _SENTENCE.split(flat):
            piece = piece.strip()
            if not piece:
                continue
            if found and not _WORDISH.search(piece):  # a bracket or quote left over
                found[-1] += piece
            else:
                found.append(piece)
    return found


def sentences(text: str) -> list[str]:
    """``text``'s sentences (each line of a list is one at least; white space collapsed),
    courtesies left out."""
    found = _all_sentences(text)
    return [s for s in found if not _COURTESY.match(s)] or found


def _information(sentence: str) -> float:
    """How much a sentence tells: its exact facts (names, values, paths, commands) most,
    then its length in words; a question a little (it says what is asked)."""
    words = len(_WORD.findall(sentence)) if " " in sentence else len(sentence) // 2
    return (3.0 * len(facts(sentence)) + min(words, 24) / 8
            + (1.0 if sentence.endswith(("?", "？")) else 0.0))


def top_sentences(text: str, k: int, limit: int, language: str = "en") -> str:
    """The ``k`` sentences of ``text`` that tell the most, in their order, each cut to
    ``limit`` characters at most."""
    found = sentences(text)
    best = sorted(range(len(found)), key=lambda i: (-_information(found[i]), i))[:k]
    return join([_clip(found[i], limit) for i in sorted(best)], language)
