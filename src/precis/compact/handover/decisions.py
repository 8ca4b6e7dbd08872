"""Problem solving and decisions: what the assistant made of what its tools showed (its
words right after a tool result, when they explain: a cause, a limit, a choice), the
decisions and the reasoning the conversation states (typed by the analysis, in the
speakers' own words), the plan the agent presented, and the tasks handed to sub-agents with
what they reported."""

from __future__ import annotations

import re

from precis.compact.handover._condense import split_sentences
from precis.compact.handover._fit import Entry
from precis.compact.handover._story import Story, clip
from precis.compact.handover._words import word
from precis.compact.handover.spec import digest_lines
from precis.model import Text, Thinking

__all__ = ["build_decisions"]

_MAX = 14
_MAX_FINDINGS = 16
# words that explain: a cause, a limit, a finding, a choice
_EXPLAINS = re.compile(
    r"\b(?:because|since|so that|which means|doesn't|does not|don't|can't|cannot|won't|isn't|"
    r"instead|rather than|the (?:issue|problem|cause|fix|reason)|turns out|root cause|"
    r"needs? to|has to|must|only|already|missing|not found|fails?|failed|error|broken|"
    r"wrong|expects?|requires?|gitignored|conflict|warns?|warnings?|reports?|complain\w*|"
    r"too (?:deep|long|many|complex|high)|violat\w*|unused|undefined|deprecated|stale|"
    r"timed? ?out|blocked|ignored|flaky|regression)\b|因为|所以|原因|问题|需要|不能|无法|改为",
    re.IGNORECASE)
_SPOKEN = frozenset({"sentence", "paragraph", "list_item", "heading"})
# the assistant saying what it does next or how it feels about it: narration, not a decision
_NARRATION = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|good|great|perfect|excellent|all (?:clean|green|good)|now|first|"
    r"next|then)\b[,.!:]?\s*)*(?:let me|let's|i'll|i will|i need to|i have|i've|i now|"
    r"i can see|now i|lets|looking at|i see|we can use|we'll|we will|now let's|now that)\b",
    re.IGNORECASE)


def build_decisions(story: Story, key: str) -> list[Entry]:
    lang = story.language
    out: list[Entry] = _findings(story, key)
    explained = {int(e.order) for e in out}
    a = story.analysis
    frags = a.segmentation.fragments
    superseded = a.consolidation.superseded_by
    scored: list[tuple[float, int]] = []
    for i in story.range:
        f = frags[i]
        if f.provenance.message in explained:
            continue
        kind = a.classifications[i].type
        if f.kind not in _SPOKEN or kind not in ("decision", "reasoning") or f.id in superseded:
            continue
        if f.role != "assistant" or len(f.text) < 25 or _NARRATION.match(f.text):
            continue
        imp = a.importance[i]
        if imp.level == "LOW":
            continue
        scored.append((imp.score + (1.0 if kind == "decision" else 0.0)
                       + (1.0 if f.role == "user" else 0.0), i))
    scored.sort(reverse=True)
    for score, i in scored[:_MAX]:
        f = frags[i]
        text = f.text.strip()
        who = ("用户" if story.zh else "User") if f.role == "user" else ""
        lead = f"{who}: " if who and not story.zh else (f"{who}：" if who else "")
        variants = (lead + story.core(text, 260), lead + clip(text, 110))
        out.append(Entry(key, f.provenance.message + i / 1e6, 3.0 + min(score, 4.0) / 2,
                         tuple(dict.fromkeys(variants)), (f.id,), kind=a.classifications[i].type,
                         why=f"a {a.classifications[i].type} the {f.role} stated"))
    for act in story.actions:
        if act.kind == "plan" and act.snippet and act.call_fragments:
            plan = tuple(dict.fromkeys(
                word(lang, "plan", text=digest_lines(act.snippet, n, skip_title=False))
                for n in (1500, 700, 300)))
            out.append(Entry(key, act.message, 6.0, plan, act.call_fragments[:1],
                             kind="plan", why="the plan the agent presented"))
        elif act.kind == "subagent" and act.call_fragments:
            result = ""
            if act.result_message is not None:
                msg = story.conv.messages[act.result_message]
                body = " ".join(p.text for p in msg.parts)
                result = " → " + story.core(body, 220) if body.strip() else ""
            task = clip(act.target, 120)
            variants = (word(lang, "subagent", task=task) + result,
                        word(lang, "subagent", task=task))
            out.append(Entry(key, act.message, 4.0, tuple(dict.fromkeys(variants)),
                             act.fragments, kind="subagent",
                             why="a task handed to a sub-agent and its report"))
    return out


def _findings(story: Story, key: str) -> list[Entry]:
    """The assistant's words right after a tool result, when they explain something."""
    conv = story.conv
    failed_results = {a.result_message for a in story.actions if a.status == "failed"}
    found: list[Entry] = []
    for m in range(max(story.start, 1), story.end):
        msg = conv.messages[m]
        if msg.role != "assistant" or conv.messages[m - 1].role != "tool":
            continue
        text = " ".join(p.text for p in msg.parts if isinstance(p, Text)).strip()
        thought = " ".join(p.text for p in msg.parts if isinstance(p, Thinking)).strip()
        sentences = split_sentences(text)
        telling = [x for x in sentences if _EXPLAINS.search(x) and len(x) > 20
                   and not _NARRATION.match(x)]
        if not telling and thought:  # the reasoning block says why when the text does not
            telling = [x for x in split_sentences(thought)
                       if _EXPLAINS.search(x) and len(x) > 20][:2]
        if not telling:
            continue
        frags = story.text_fragments(m)
        if not frags:
            continue
        after_failure = (m - 1) in failed_results
        body = " ".join(telling)
        variants = tuple(dict.fromkeys((story.core(body, 300), story.core(body, 130))))
        priority = 4.0 + 1.5 * (m - story.start) / max(1, story.end - story.start) + (
            1.0 if after_failure else 0.0)
        found.append(Entry(key, m, priority, variants, frags, kind="finding",
                           why="what the assistant concluded from a tool's result"))
    found.sort(key=lambda e: -e.priority)
    return found[:_MAX_FINDINGS]
