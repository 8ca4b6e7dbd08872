"""Chats (no tool calls): each question with the core of its answer, so a fact keeps its
subject; what the user said about themselves; what the assistant delivered (code, the
commands it gave); what is still open."""

from __future__ import annotations

import re

from precis.compact._digest import code_stub
from precis.compact._facts import facts
from precis.compact.handover._condense import (
    announces,
    courtesy,
    join,
    sentences,
    split_pasted,
    split_sentences,
    top_sentences,
)
from precis.compact.handover._fit import Entry
from precis.compact.handover._story import Story, clip
from precis.compact.handover._words import word
from precis.compact.handover.requests import changed_by, is_rule
from precis.events import Request

__all__ = ["build_background", "build_delivered", "build_open", "build_qa"]

_SPOKEN = frozenset({"sentence", "paragraph", "list_item", "heading"})
_CODE = frozenset({"code", "sql", "json", "table"})


def _answer(story: Story, r: Request, until: int) -> tuple[list[int], list[int]]:
    """The fragment indexes of the assistant's answer to ``r`` (spoken ones by importance,
    small talk left out) and of its code blocks, up to message ``until``."""
    a = story.analysis
    frags = a.segmentation.fragments
    spoken: list[int] = []
    code: list[int] = []
    for i in story.range:
        f = frags[i]
        m = f.provenance.message
        if m <= r.message or m >= until or f.role != "assistant":
            continue
        if f.kind in _CODE:
            code.append(i)
        elif f.kind in _SPOKEN and a.classifications[i].type != "chitchat":
            spoken.append(i)
    return spoken, code


def _answer_text(story: Story, picks: list[int]) -> str:
    """The answer's words, without the sentences that only announce ("Let me look.")."""
    frags = story.analysis.segmentation.fragments
    said = [x for i in picks for x in split_sentences(frags[i].text)]
    kept = [x for x in said if not announces(x)]  # (an answer that only announces: none)
    return story.own_words(join(kept, story.language))


def build_qa(story: Story, key: str) -> list[Entry]:
    out: list[Entry] = []
    asked = [r for r in story.requests if r.kind in ("request", "reply")]
    substantive = [r.message for r in asked if r.kind == "request"]
    first, last = (substantive[0], substantive[-1]) if substantive else (-1, -1)
    nexts = [r.message for r in asked[1:]] + [story.end]
    total = max(1, len(asked))
    a = story.analysis
    for k, (r, until) in enumerate(zip(asked, nexts)):
        if not r.fragments:
            continue
        if r.kind == "reply" and r.answers:
            # "ok" / "好的" to an offer: what was accepted, not a question of its own
            variants = tuple(dict.fromkeys(
                word(story.language, "replied", where=story.where(r.message),
                     reply=story.quote(r.text, 60), offer=story.quote(r.answers, n))
                for n in (200, 90)))
            out.append(Entry(key, r.message, 4.0 + (k + 1) / total, variants, r.fragments,
                             kind="qa", why="a user's reply to the assistant's offer"))
            continue
        if courtesy(r.text) and k < len(asked) - 1:
            continue  # "I see." / "谢谢" tells nothing the next line does not
        spoken, _ = _answer(story, r, until)
        weight = max((a.importance[story.index[f]].score for f in r.fragments), default=0.0)
        told = min(2.0, 0.5 * len(facts(r.text)))  # what the user tells (names, values)
        recency = 1.0 * (k + 1) / total + min(1.0, weight / 4) + told
        answer = _answer_text(story, spoken) if spoken else ""
        variants = tuple(dict.fromkeys(_variants(story, r, answer)))
        changed = changed_by(story, r)
        rule = not changed and is_rule(story, r)
        if changed is not None:  # a rule replaced later: said so, and told last
            note = word(story.language, "changed_later", where=story.where(changed))
            variants = tuple(v + note for v in variants)
            recency -= 3.0
        frags = story.analysis.segmentation.fragments
        shown = [frags[i].id for i in spoken if frags[i].text.strip()[:24] in variants[0]]
        sources = tuple(dict.fromkeys((*r.fragments, *shown)))
        out.append(Entry(key, r.message, 5.5 + recency + (2.0 if rule else 0.0), variants,
                         sources, critical=r.message in (first, last) or rule, kind="qa",
                         why="a user message and the core of the answer to it"))
    return out


_PROMPT = re.compile(r"^\s*\S+@[\w.-]+:\S*\s*[#$]\s*$")


def _outcome_lines(pasted: str) -> list[str]:
    """What a pasted terminal output came to: its last two lines (a program says how it
    ended last), then its last one; shell prompts left out."""
    lines = [ln.strip() for ln in pasted.splitlines() if ln.strip() and not _PROMPT.match(ln)]
    if not lines:
        return [pasted.strip()[:200]]
    return list(dict.fromkeys((" ".join(lines[-2:]), lines[-1])))


def _variants(story: Story, r: Request, answer: str) -> list[str]:
    """A user message's line, fullest first: its telling sentences with the answer's two
    most telling ones; with the answer's most telling one; then fewer of the message's own
    sentences with that answer sentence; last, when the user's words tell something of
    their own (a value, a name, more than a short question), the message's most telling
    sentence alone. Sentences are whole, never cut mid-way."""
    lang = story.language
    where = story.where(r.message)
    text, pasted = split_pasted(r.text)  # what they wrote, what a terminal printed
    text = story.own_words(text)
    count = len(sentences(text)) if text else 0
    cut = story.chars(220)
    own = [top_sentences(text, k, cut, lang) for k in range(min(count, 4), 0, -1)]
    if pasted:  # the fullest line also tells what the pasted output said
        label = "粘贴的输出：" if story.zh else "pasted output: "
        shown = [clip(x, story.chars(200)) for x in _outcome_lines(pasted)]
        if own:
            fullest = f"{own[0]}（{label}{shown[0]}）" if story.zh else \
                f"{own[0]} ({label}{shown[0]})"
            own = [fullest, *own]
        else:
            own = [label + x for x in shown]
    if not answer:
        return [word(lang, "user_said", where=where, q=q) for q in own]
    best = top_sentences(answer, 1, story.chars(200), lang)
    out = [word(lang, "qa", where=where, q=own[0],
                a=top_sentences(answer, 2, story.chars(200), lang))]
    out.extend(word(lang, "qa", where=where, q=q, a=best) for q in own)
    if facts(text) or len(text) > story.chars(60):
        # the user's words tell something of their own: they may stand without the answer
        out.append(word(lang, "user_said", where=where, q=own[-1]))
    return out


def build_background(story: Story, key: str) -> list[Entry]:
    a = story.analysis
    frags = a.segmentation.fragments
    out: list[Entry] = []
    for i in story.range:
        f = frags[i]
        if f.role != "user" or f.kind not in _SPOKEN:
            continue
        if a.classifications[i].type not in ("background", "constraint"):
            continue
        if f.text.rstrip().endswith(("?", "？")):
            continue  # a question is asked, not a fact about the user
        if f.text.strip() in split_pasted(story.conv.messages[f.provenance.message].text)[1]:
            continue  # what a terminal printed is not the user's background
        if f.id in a.consolidation.superseded_by or a.importance[i].level == "LOW":
            continue
        if _said_before_by_assistant(story, f.text, f.provenance.message):
            continue  # the user quotes the assistant (to ask about it): not their own words
        variants = tuple(dict.fromkeys((story.core(f.text, 260), clip(f.text, 100))))
        out.append(Entry(key, f.provenance.message + i / 1e6, 4.0 + a.importance[i].score,
                         variants, (f.id,), kind=a.classifications[i].type,
                         why=f"the user's own {a.classifications[i].type}"))
    return out


def _said_before_by_assistant(story: Story, text: str, message: int) -> bool:
    """Whether ``text`` repeats a sentence an assistant said before ``message``, word for
    word or nearly (a user who pastes it back to ask about it): most of its units (words;
    character pairs in Chinese) are in one such sentence."""
    mine = _units(text)
    if len(mine) < 6:
        return False
    for m in story.conv.messages[story.start:message]:
        if m.role == "assistant":
            for said in sentences(m.text):
                if len(mine & _units(said)) >= _NEAR * len(mine):
                    return True
    return False


_NEAR = 0.6  # the share of a sentence's units that makes it a repeat of another
_ZH = re.compile(r"[\u4e00-\u9fff]")


def _units(text: str) -> set[str]:
    if _ZH.search(text):
        return {text[k:k + 2] for k in range(len(text) - 1) if not text[k:k + 2].isspace()}
    return {w.lower() for w in re.findall(r"\w+", text)}


def build_delivered(story: Story, key: str) -> list[Entry]:
    lang = story.language
    a = story.analysis
    frags = a.segmentation.fragments
    out: list[Entry] = []
    commands: list[str] = []
    cites: list[str] = []
    for i in story.range:
        f = frags[i]
        if f.role != "assistant":
            continue
        if f.kind in _CODE:
            if "\n" not in f.text.strip() and not f.lang_hint and \
                    "```" not in story.conv.messages[f.provenance.message].text:
                continue  # a sentence of prose that reads like code is no code given
            stub = code_stub(f.text, f.kind, f.lang_hint, lang)
            if stub.startswith("`") and stub.strip("`").strip() and stub not in commands:
                commands.append(stub)
                cites.append(f.id)
                continue
            if not stub.strip("` "):
                continue
            text = f"{story.where(f.provenance.message)}: {stub}"
            out.append(Entry(key, f.provenance.message + i / 1e6, 4.5, (text,), (f.id,),
                             kind="code", why="code the assistant gave"))
        elif f.kind in _SPOKEN and story.events.kind == "chat":  # (an agent's commands
            for fact in facts(f.text):                            # are its actions)
                if fact.kind == "command" and fact.text.strip() and f"`{fact.text}`" in f.text:
                    shown = f"`{fact.text}`"
                    if shown not in commands:
                        commands.append(shown)
                        cites.append(f.id)
    if commands:
        label = "助手给出的命令：" if story.zh else "Commands the assistant gave: "
        sep = "、" if story.zh else ", "
        variants = tuple(dict.fromkeys((label + sep.join(commands[:16]),
                                        label + sep.join(commands[-6:]))))
        out.append(Entry(key, 0, 6.5, variants, tuple(dict.fromkeys(cites)),
                         kind="code", why="commands the assistant wrote in its answers"))
    return out


def build_open(story: Story, key: str) -> list[Entry]:
    lang = story.language
    everything = story.events.requests
    if not everything:
        return []
    last = everything[-1]
    answered = any(m.role == "assistant" and m.text.strip()
                   for m in story.conv.messages[last.message + 1:])
    if answered or not story.start <= last.message < story.end or not last.fragments:
        return []
    return [Entry(key, last.message, 9.0, (word(lang, "unanswered", text=story.quote(
        last.text, 220), where=story.where(last.message)),), last.fragments[:2],
        critical=True, kind="open", why="the user's last message has no answer yet")]
