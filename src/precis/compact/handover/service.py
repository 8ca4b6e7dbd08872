"""Service dialogues (a customer and an agent with domain tools, as in tau-bench): the
identifiers the customer gave, what the agent looked up and found, what it changed and
whether that went through, and the rules the agent stated to the customer."""

from __future__ import annotations

import re

from precis.compact._facts import facts
from precis.compact.handover._condense import (
    announces,
    sentences,
    split_sentences,
    top_of,
)
from precis.compact.handover._fit import Entry
from precis.compact.handover._story import Story, clip
from precis.compact.handover._words import word

__all__ = ["build_actions", "build_identifiers", "build_policy", "build_replies"]

_STOP = frozenset({"my", "is", "the", "a", "an", "it", "it's", "its", "and", "of", "for", "to",
                   "was", "are", "i", "i'm", "me", "our", "your", "with", "have", "has", "had",
                   "under", "by", "on", "in", "at", "as", "be", "this", "that", "sure", "ok",
                   "yes", "please", "here", "there", "use", "using", "can", "you", "their",
                   "his", "her", "we", "they", "these", "those"})
# a code in capitals (a booking reference: IFOYYZ) and the capitalised words that are none
_CODE = re.compile(r"(?<![\w-])[A-Z][A-Z0-9]{4,11}(?![\w-])")
_SHOUTED = frozenset({"HELLO", "PLEASE", "THANKS", "SORRY", "URGENT", "ASAP", "THANK", "REALLY",
                     "NEVER", "ALWAYS", "AGAIN", "TODAY", "EVERY", "STILL", "RIGHT", "WRONG"})
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_RULE = re.compile(r"\b(?:cannot|can't|can not|unable to|not (?:able|allowed|possible|"
                   r"permitted|eligible|refundable)|only (?:be|if|when|allowed)|must|policy|"
                   r"required|non-refundable|no longer)\b|不能|无法|只能|必须|不允许|不可",
                   re.IGNORECASE)
def _label_before(text: str, start: int) -> str:
    before = re.split(r"[.!?;,。！？；，]", text[max(0, start - 60):start])[-1]
    words = [w.rstrip(":") for w in re.findall(r"[\w'-]+:?", before)]
    kept = [w for w in words[-4:] if w.lower() not in _STOP]
    return " ".join(kept[-3:])


def build_identifiers(story: Story, key: str) -> list[Entry]:
    lang = story.language
    out: list[Entry] = []
    given: list[str] = []
    values: set[str] = set()
    cites: list[str] = []
    for r in story.requests:
        found = [(f.start, f.text) for f in facts(r.text) if f.kind == "identifier"]
        found += [(m.start(), m.group(0)) for m in _EMAIL.finditer(r.text)]
        found += [(m.start(), m.group(0)) for m in _CODE.finditer(r.text)
                  if m.group(0) not in _SHOUTED and not any(v == m.group(0) for _, v in found)]
        end = 0
        for start, value in sorted(found):
            label = _label_before(r.text[end:start], start - end)
            end = start + len(value)
            item = f"{label} `{value}`" if label else f"`{value}`"
            if value not in values:
                values.add(value)
                given.append(item)
                cites.extend(r.fragments)
    if given:
        sep = "；" if story.zh else "; "
        out.append(Entry(key, -1, 8.0, (word(lang, "user_gave", items=sep.join(given[:12])),),
                         tuple(dict.fromkeys(cites)), critical=True, kind="identifier",
                         why="identifiers and values the user gave"))
    seen: dict[tuple[str, str], int] = {}
    lookups = [a for a in story.actions if a.kind == "lookup" and a.status == "ok" and a.result]
    for a in lookups:
        seen[(a.tool, a.target)] = a.index  # the last lookup of the same thing wins
    total = max(1, len(story.actions))
    for a in lookups:
        if seen[(a.tool, a.target)] != a.index:
            continue
        what = f"{a.tool}({a.target})" if a.target and len(a.tool + a.target) <= 28 \
            else a.tool
        variants = (word(lang, "looked_up", what=what, result=clip(a.result, 400)),
                    word(lang, "looked_up", what=what, result=clip(a.result, 220)),
                    word(lang, "looked_up", what=what, result=clip(a.result, 120)))
        out.append(Entry(key, a.index, 5.0 + 1.5 * a.index / total, variants,
                         a.fragments, kind="lookup",
                         why="what a lookup tool returned"))
    return out


def build_actions(story: Story, key: str) -> list[Entry]:
    lang = story.language
    out: list[Entry] = []
    for a in story.actions:
        if a.kind not in ("change", "submit"):
            continue
        status = word(lang, {"ok": "status_ok", "failed": "status_failed"}.get(
            a.status, "status_pending_call"))
        what = f"{a.tool}({clip(a.detail, 200)})" if a.detail else a.tool
        result = f" → {clip(a.result, 160)}" if a.result else ""
        variants = (word(lang, "changed", what=what, status=status, result=result),
                    word(lang, "changed", what=f"{a.tool}({clip(a.detail, 80)})",
                         status=status, result=""))
        out.append(Entry(key, a.index, 8.5, tuple(dict.fromkeys(variants)), a.fragments,
                         critical=True, kind="action", why="a change the agent made with a tool"))
    return out


def build_policy(story: Story, key: str) -> list[Entry]:
    """The rules the agent stated to the customer, and its recorded reasoning (a ``think``
    tool's thoughts: how it applied the rules)."""
    out: list[Entry] = []
    seen: set[str] = set()
    for a in story.actions:
        if a.kind == "think" and a.detail and a.call_fragments:
            label = "助手的推理：" if story.zh else "Agent's reasoning: "
            out.append(Entry(key, a.message, 3.5, (label + story.core(a.detail, 300),
                                                   label + story.core(a.detail, 120)),
                             a.call_fragments[:1], kind="reasoning",
                             why="what the agent reasoned with its think tool"))
    for m in range(story.start, story.end):
        msg = story.conv.messages[m]
        if msg.role != "assistant" or not msg.text.strip():
            continue
        frags = story.text_fragments(m)
        if not frags:
            continue
        for s in split_sentences(msg.text):
            s = s.strip(" -*")
            if len(s) < 20 or not _RULE.search(s) or s.endswith(("?", "？")):
                continue
            norm = s.lower()
            if norm in seen:
                continue
            seen.add(norm)
            out.append(Entry(key, m, 5.0 + m / max(1, story.end), (story.core(s, 220),
                                                                   clip(s, 100)),
                             frags[:1], kind="constraint",
                             why="a rule the agent stated to the user"))
    return out[-8:]


def build_replies(story: Story, key: str) -> list[Entry]:
    """What the agent told the customer: each of its messages (not tool calls) by its most
    telling sentences (the details it found, the options it offered, what it refused and
    why), weighed by what they tell and how recent; the last one before the recent
    messages critical."""
    lang = story.language
    said = [m for m in range(story.start, story.end)
            if story.conv.messages[m].role == "assistant" and story.conv.messages[m].text.strip()]
    out: list[Entry] = []
    for n, m in enumerate(said):
        text = story.conv.messages[m].text
        frags = story.text_fragments(m)
        if not frags:
            continue
        found = sentences(text)
        told = [x for x in found if not announces(x)]  # not "Let me check that."
        head = ("助手（" + story.where(m) + "）：") if story.zh else f"Agent ({story.where(m)}): "
        # a list of details made one sentence may be long: it is cut later than prose
        variants = tuple(dict.fromkeys(head + top_of(told or found, k, story.chars(360), lang)
                                       for k in range(min(len(told or found), 6), 0, -1)))
        last = n == len(said) - 1
        # what it tells: values and names, a rule it applied (a refusal and its reason)
        tells = min(1.5, 0.5 * len(facts(text))) + (1.0 if _RULE.search(text) else 0.0) \
            - (0.0 if told else 1.0)
        out.append(Entry(key, m, 5.0 + 1.5 * (n + 1) / len(said) + tells, variants, frags,
                         critical=last, kind="reply", why="what the agent told the user"))
    return out
