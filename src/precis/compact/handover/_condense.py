"""Long text made short in the speaker's own words: the sentences that carry the most
(exact facts first, the opening sentence a little), courtesies left out, kept in their
order; a sentence cut only at a word boundary and never inside an exact fact."""

from __future__ import annotations

import re

from precis.compact._facts import facts

__all__ = ["announces", "condense", "courtesy", "join", "list_items", "sentences",
           "split_pasted", "split_sentences", "top_of", "top_sentences"]

_SPACE = re.compile(r"\s+")
# a sentence ends at . ! ? ; (not the "1." of a numbered list: after a number only when
# a capital follows, as in "on May 22, 2024. If") or at a line break
_SENTENCE = re.compile(r"(?<=[^\d\s.][.!?;])\s+(?=\S)|(?<=\d\d[.!?;])\s+(?=[A-Z])|"
                       r"(?<=[。！？；])")
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
    def score(k: int) -> float:
        said = sentences[k]
        return (3.0 * len(facts(said)) + lead * (1 - k / n)
                + min(len(_WORD.findall(said)), 30) / 10
                + (4.0 if k == content[0] else 0.0)
                + (3.0 if said.endswith(("?", "？")) else 0.0)
                # what the speaker asks for and the rules they set say what they want
                + (3.0 if _ASKS.search(said) else 0.0)
                + (3.0 if _STANCE.search(said) else 0.0))

    scored = sorted(content, key=lambda k: -score(k))
    joiner = " "  # at most one space between sentences (see join)
    if len(sentences[scored[0]]) > limit:  # the one that tells the most, cut, over others
        return _clip(sentences[scored[0]], limit)
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


_ITEM = re.compile(r"^(\s*)(?:[-*•+]|\d{1,2}[.)])\s+(.*)$")
_EMPHASIS = re.compile(r"\*\*|__")
_ITEM_CHARS = 120  # a list whose items are all this short is one sentence
_ITEMS = 8  # ... of at most this many items


def _flat(line: str) -> str:
    return _EMPHASIS.sub("", _BULLET.sub("", _SPACE.sub(" ", line).strip()))


def _lists(text: str) -> list[tuple[str, bool]]:
    """``text``'s lines, where a list of short items (with the items nested under each)
    is one line: ``Origin: IAH; Destination: SEA; Passengers: Liam Khan, James Kim``. A
    reply that lists details keeps them together, each with its label. Each line comes
    with whether it may be split into sentences (a list made one line is not)."""
    rows: list[tuple[int, bool, str]] = []  # (indent, is an item, text)
    for line in text.strip().splitlines():
        if not line.strip():
            continue
        m = _ITEM.match(line)
        if m:
            rows.append((len(m.group(1).expandtabs(4)), True, _flat(m.group(2))))
        else:
            rows.append((len(line) - len(line.lstrip()), False, _flat(line)))

    def item(k: int) -> tuple[str, int]:
        """The item at row ``k`` with its nested items, and the row after them."""
        indent, _, head = rows[k]
        k += 1
        children: list[str] = []
        while k < len(rows) and rows[k][1] and rows[k][0] > indent:
            child, k = item(k)
            children.append(child)
        if not children:
            return head, k
        inner = ", ".join(children)
        return (f"{head} {inner}" if head.endswith(":") else f"{head}: {inner}"), k

    out: list[tuple[str, bool]] = []
    k = 0
    while k < len(rows):
        if not rows[k][1]:
            out.append((rows[k][2], True))
            k += 1
            continue
        indent = rows[k][0]
        items: list[str] = []
        while k < len(rows) and rows[k][1] and rows[k][0] <= indent:
            text_, k = item(k)
            items.append(text_)
        short = len(items) > 1 and all(len(i) <= _ITEM_CHARS for i in items)
        if not short:
            out.extend((i, True) for i in items)
            continue
        for n in range(0, len(items), _ITEMS):
            out.append(("; ".join(i.rstrip(";.") for i in items[n:n + _ITEMS]), False))
    return out


def list_items(text: str) -> list[str]:
    """The items of the last list in ``text`` (each with the items nested under it, on one
    line; emphasis marks left out): the steps of a plan the speaker lists."""
    items: list[str] = []
    indent = 0
    in_list = False
    for line in text.strip().splitlines():
        if not line.strip():
            continue  # blank lines between items keep the list
        m = _ITEM.match(line)
        if not m:
            in_list = in_list and line[0].isspace()  # prose at the margin ends a list
            continue
        depth = len(m.group(1).expandtabs(4))
        if not in_list:
            items, indent, in_list = [], depth, True
        if depth <= indent or not items:
            items.append(_flat(m.group(2)))
        else:
            items[-1] += (" " if items[-1].endswith(":") else ", ") + _flat(m.group(2))
    return items


def _all_sentences(text: str) -> list[str]:
    found: list[str] = []
    for line, split in _lists(text):
        for piece in _SENTENCE.split(line) if split else [line]:
            piece = piece.strip()
            if not piece:
                continue
            if found and not _WORDISH.search(piece):  # a bracket or quote left over
                found[-1] += piece
            else:
                found.append(piece)
    return found


# a sentence that only announces what the speaker is about to do ("Let me check that.")
_ANNOUNCE = re.compile(r"^(?:(?:ok(?:ay)?|now|first|next|then|also|sure|great)[,.!]?\s+)*"
                       r"(?:let me|let's|i'll|i will|i'm going to|i am going to|please hold|"
                       r"one moment|让我|我来|我先|请稍等)(?! know)", re.IGNORECASE)


def announces(sentence: str) -> bool:
    """Whether ``sentence`` only says what the speaker is about to do."""
    return bool(_ANNOUNCE.match(sentence.strip()))


def courtesy(text: str) -> bool:
    """Whether ``text`` is nothing but courtesies ("Thanks!", "I see.", "好的")."""
    found = _all_sentences(text)
    return bool(found) and all(_COURTESY.match(s) for s in found)


def sentences(text: str) -> list[str]:
    """``text``'s sentences (each line of a list is one at least; white space collapsed),
    courtesies left out."""
    found = _all_sentences(text)
    return [s for s in found if not _COURTESY.match(s)] or found


# a wish, a refusal or a condition: what the speaker wants or will not have
_STANCE = re.compile(r"\b(?:don't|do not|doesn't|does not|never|must|only|without|instead|"
                     r"prefer|rather|(?:not|n't) (?:want|like|need)|avoid|except)\b|"
                     r"不想|不希望|不要|不需要|必须|只想|只要|不能|避免|而不是|宁愿|除了",
                     re.IGNORECASE)


# what someone asks for: a request in their own words
_ASKS = re.compile(r"\b(?:please|can you|could you|would you|write|explain|help me|show me|"
                   r"give me|make|create|add|fix)\b|请|帮我|帮忙|能否|能不能|可以.{0,12}吗|写一|"
                   r"给我|解释|怎么做|如何", re.IGNORECASE)
# what a terminal printed and was pasted: a shell prompt, a menu's "[1-2]:", option lists
_PASTED = re.compile(r"\w+@[\w.-]+:\S*\s*[#$]|\[\d+-\d+\]|(?:^|\s)\d[)）]\s*\S")


_PROMPT_LINE = re.compile(r"^\s*\S+@[\w.-]+:\S*\s*[#$]")
_PASTED_LINE = re.compile(r"^\s*\S+@[\w.-]+:\S*\s*[#$]|\[\d+-\d+\]\s*[:：]|^\s*\d[)）]\s*\S")


def split_pasted(text: str) -> tuple[str, str]:
    """``(own, pasted)``: the user's own words of ``text`` and what they pasted from a
    terminal (the lines from the first that looks printed, a shell prompt or a menu, to
    the last one). Text without such lines is all the user's own; a message that is only
    a paste has no words of its own."""
    lines = text.splitlines()
    marked = [k for k, line in enumerate(lines) if _PASTED_LINE.search(line)]
    if not marked:
        return text, ""
    first, last = marked[0], marked[-1]
    def printed(line: str) -> bool:
        return bool(line.strip()) and not _ASKS.search(line) \
            and not line.rstrip().endswith(("?", "？"))

    # a printed block starts a few lines above its first menu or prompt line and goes on
    # after its last one, up to a blank line or the user's own question
    while first > 0 and printed(lines[first - 1]):
        first -= 1
    while last + 1 < len(lines) and printed(lines[last + 1]):
        last += 1
    own = "\n".join(lines[:first] + lines[last + 1:]).strip()
    pasted = "\n".join(lines[first:last + 1]).strip()
    return own, pasted


def _information(sentence: str) -> float:
    """How much a sentence tells: its exact facts (names, values, paths, commands) most,
    then a stance (a wish, a refusal, a condition) or a request, its length in words; a
    question a little (it says what is asked). What a terminal printed and was pasted in
    tells less than the words around it."""
    words = len(_WORD.findall(sentence)) if " " in sentence else len(sentence) // 2
    pasted = bool(_PASTED.search(sentence))
    return (3.0 * min(len(facts(sentence)), 4) * (0.3 if pasted else 1.0)
            + min(words, 24) / 8
            + (1.5 if _STANCE.search(sentence) else 0.0)
            + (1.5 if not pasted and _ASKS.search(sentence) else 0.0)
            + (1.0 if sentence.endswith(("?", "？")) else 0.0))


def top_sentences(text: str, k: int, limit: int, language: str = "en") -> str:
    """The ``k`` sentences of ``text`` that tell the most, in their order, each cut to
    ``limit`` characters at most."""
    return top_of(sentences(text), k, limit, language)


def top_of(found: list[str], k: int, limit: int, language: str = "en") -> str:
    """The ``k`` of the sentences ``found`` that tell the most (:func:`top_sentences`),
    each said once."""
    found = list(dict.fromkeys(found))
    best = sorted(range(len(found)), key=lambda i: (-_information(found[i]), i))[:k]
    return join([_clip(found[i], limit) for i in sorted(best)], language)
