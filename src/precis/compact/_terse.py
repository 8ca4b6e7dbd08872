"""Terse wording for timeline lines: a sentence without the words that only make it flow.

When a conversation of small talk must shrink to a small share of its size, a line of the
timeline says more per token in note style: "Melanie: ran charity race mental health last
Saturday (20 May 2023) – rewarding" instead of "Melanie: I ran a charity race for mental
health last Saturday (20 May 2023) – it was really rewarding". What goes:

- English: articles, auxiliaries and forms of "be", first and second person pronouns (the
  line names its speaker), common prepositions and conjunctions, intensifiers and fillers
  ("really", "pretty", "just"), interjections ("wow", "haha");
- Chinese: sentence-final and interjection particles (啊 呀 吧 呢 嘛 哈哈 嗯), and a few fillers
  ("其实", "真的");
- pictographs (emoji).

What stays: every word that carries content or is written in capitals ("US", "IT"),
negations ("not", "never", "didn't", "没"), modal verbs ("might", "will": a plan is not a
fact), third person pronouns (who did it), question words, and any word holding a digit or
a symbol (numbers, dates, paths, ids: exact facts are never touched). Punctuation and
brackets of a removed word go to its neighbours, so sentences and asides stay apart.
"""

from __future__ import annotations

import re

__all__ = ["terse"]

# Lower-cased, apostrophes as typed (both ' and ’ are tried).
_WORDS = """
a an the
am is are was were be been being 's 're 've 'm 'd 'll
do does did have has had having
i me my mine myself you your yours yourself yourselves we us our ours ourselves
i'm i've i'd i'll you're you've you'd you'll we're we've we'd we'll it's that's there's
here's what's let's
it its itself this that these those there here
and but so as of to for in on at by with about into onto from than then
just really very so pretty super totally actually literally basically definitely truly
quite rather also too even still already ever lot lots bit kinda sorta
oh wow hey hi hello yeah yep yup yes ya haha hahaha lol omg um uh ah aw aww awww hmm
ooh whoa yay gosh okay ok well gonna wanna gotta
thing things stuff
"""
_DROP_EN = frozenset(_WORDS.split())

_CJK_PARTICLES = re.compile(
    r"(?:哈哈+|嘿嘿+|呵呵+|嗯+|哇+|其实|真的|(?<=[\u4e00-\u9fff])[啊呀吧呢嘛哦哟啦]+(?=[，。！？,.!?\s]|$))")
_PICTOGRAPHS = re.compile(
    "[\U0001F000-\U0001FAFF\U00002600-\U000027BF\U0000FE0F\U0000200D\U00002B50\U00002B55]+")
_EDGES = re.compile(r"^(\W*)(.*?)(\W*)$", re.DOTALL)


def terse(text: str, language: str = "en") -> str:
    """``text`` in note style (see the module docs); unchanged when nothing can go."""
    text = _PICTOGRAPHS.sub("", text).strip()
    if language == "zh":
        return _CJK_PARTICLES.sub("", text).strip()
    out: list[str] = []
    opening = ""  # brackets and quotes a dropped word opened: they go to the next word
    for word in text.split():
        match = _EDGES.match(word)
        assert match is not None  # the pattern matches any text
        before, core, after = match.groups()
        if (core.lower().replace("’", "'") not in _DROP_EN
                or (len(core) > 1 and core.isupper())):  # "US", "IT": a name
            out.append(opening + word)
            opening = ""
            continue
        opening += before
        if after and out and not out[-1].endswith(after):
            out[-1] += after  # what closed the dropped word closes the one before
    if opening and out:
        out[-1] += opening.strip()
    if not out:
        return text.strip()
    if text[:1].isupper() and out[0][:1].islower():  # the sentence still starts as one
        out[0] = out[0][:1].upper() + out[0][1:]
    return " ".join(out)
