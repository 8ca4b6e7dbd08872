"""Current work and the next step: what the agent did just before the cut and what came of
it, what is changed and not committed, the assistant's last words; next: the task in
progress and the steps that finished the earlier ones, the next open item, the assistant's
stated intent, or the question the user has yet to answer."""

from __future__ import annotations

import re

from precis.compact.handover._condense import list_items, split_sentences
from precis.compact.handover._fit import Entry
from precis.compact.handover._story import Story, clip, plain
from precis.compact.handover._words import word
from precis.compact.handover.errors import describe_action, short_command
from precis.compact.handover.runs import printed
from precis.compact.handover.work import item_sources, relevant_items
from precis.events import Action
from precis.model import Text

__all__ = ["action_phrase", "build_current", "build_next"]

_LAST = 6
_INTENT = re.compile(r"\b(?:let me(?! know)|let's|now i'll|i'll|i will|i need to|next,? i|"
                     r"next step|now (?:add|update|run|fix|write|create|implement|check)|then i)\b|"
                     r"接下来|下一步|我将|我会|然后", re.IGNORECASE)
# last words that hand the turn to the user, as a question does
_INVITES = re.compile(r"\b(?:let me know|feel free to|would you like|do you want|shall i)\b|"
                      r"请告诉我|请让我知道|您是否需要|需要我", re.IGNORECASE)
_RUNS = ("command", "test", "build", "lint", "install", "commit", "push", "vcs", "tracker")


def action_phrase(a: Action, zh: bool = False) -> str:
    """An action in a few words, with what came of it when it failed or counted tests."""
    if a.changes_files:
        verb = {"create": "wrote", "edit": "edited", "move": "moved", "delete": "deleted"}[a.kind]
        if zh:
            verb = {"create": "写入", "edit": "修改", "move": "移动", "delete": "删除"}[a.kind]
        return f"{verb} `{a.target}`"
    if a.kind == "commit" and a.commit:
        return ("提交 " if zh else "committed ") + a.commit
    if a.kind in ("lookup", "change"):
        args = f"({clip(a.target, 30)})" if a.target else ""
        state = "" if a.status == "ok" else f" → {a.status}"
        return f"{a.tool}{args}{state}"
    if a.kind in ("read", "search", "fetch"):
        return f"{a.kind} `{clip(a.target, 60)}`"
    text = describe_action(a, 70)
    if a.counts is not None:
        text += f" ({a.counts.describe()})"
    elif a.status in ("failed", "pending", "rejected"):
        text += f" ({a.status})"
    return text


def _last_text(story: Story) -> tuple[int, str]:
    for m in range(story.end - 1, story.start - 1, -1):
        msg = story.conv.messages[m]
        if msg.role == "assistant":
            text = " ".join(p.text for p in msg.parts if isinstance(p, Text)).strip()
            if text:
                return m, text
    return -1, ""


def build_current(story: Story, key: str) -> list[Entry]:
    lang = story.language
    out: list[Entry] = []
    acts = story.actions
    service = story.events.kind == "service"  # its replies, lookups and changes say it
    doing = [a for a in acts if a.kind not in ("read", "search", "think", "todo", "calc")
             ][-_LAST:]
    if not doing:
        doing = acts[-3:]
    if doing:
        sep = "；" if story.zh else "; "
        phrases = list(dict.fromkeys(action_phrase(a, story.zh) for a in doing))
        intent = plain(next((a.intent for a in reversed(doing) if a.intent), ""))
        tail = word(lang, "explained", text=clip(intent, 160)) if intent else ""
        variants = (f"{word(lang, 'last_actions', items=sep.join(phrases))} {tail}".strip(),
                    word(lang, "last_actions", items=sep.join(phrases[-3:])))
        explained = next((a for a in reversed(doing) if a.intent), None)
        sources = tuple(dict.fromkeys(f for a in doing for f in (
            *a.call_fragments,
            *(a.result_fragments[:1] if a.changes_files or a.kind == "commit"
              or a.counts is not None else ()),
            *(a.intent_fragments if a is explained else ()))))
        if sources:
            out.append(Entry(key, 0, 5.0 if service else 8.9, variants, sources,
                             critical=not service, kind="current",
                             why="the last actions before the summarized part ends"))
    runs = [a for a in acts if a.kind in _RUNS and a.kind not in ("vcs", "tracker", "commit",
                                                                  "push")
            and a.status in ("ok", "failed")]
    if runs:
        a = runs[-1]
        shown = printed(story, a) if a.counts is None and a.status == "ok" else ""
        result = action_phrase(a, story.zh) + (
            f" → {a.result}" if a.status == "failed" and a.result else
            (f" → {shown or 'ok'}" if a.counts is None and a.status == "ok" else ""))
        out.append(Entry(key, 1, 7.0, (word(lang, "last_result", text=clip(result, 220)),),
                         a.fragments, kind="current", why="the last command run"))
    commits = [a for a in acts if a.kind == "commit" and a.status == "ok"]
    uses_vcs = bool(commits) or any(a.kind in ("vcs", "push") for a in acts)
    if not commits and not uses_vcs:
        changed = [a for a in acts if a.changes_files and a.status == "ok"]
        paths = list(dict.fromkeys(p for a in changed for p in a.paths
                                   if not p.startswith(("/", "~"))))
        if paths:
            shown = ", ".join(f"`{p}`" for p in paths[:6]) + (
                f" (+{len(paths) - 6})" if len(paths) > 6 else "")
            last_change = {p: a for a in changed for p in a.paths}
            out.append(Entry(key, 2, 6.0, (word(lang, "no_commit", paths=shown),),
                             tuple(dict.fromkeys(f for p in paths[:6]
                                                 for f in last_change[p].call_fragments[:1])),
                             kind="current", why="files changed and no commit made"))
    if uses_vcs:
        after = commits[-1].index if commits else -1
        paths = list(dict.fromkeys(p for a in acts if a.index > after and a.changes_files
                                   and a.status == "ok" for p in a.paths
                                   if not p.startswith(("/", "~"))))
        if paths:
            shown = ", ".join(f"`{p}`" for p in paths[:8]) + (
                f" (+{len(paths) - 8})" if len(paths) > 8 else "")
            text = word(lang, "uncommitted", commit=commits[-1].commit or "?", paths=shown) \
                if commits else word(lang, "uncommitted_none", paths=shown)
            changed = [a for a in acts if a.index > after and a.changes_files]
            last_change = {p: a for a in changed for p in a.paths}
            commit_cite = commits[-1].fragments if commits else ()
            out.append(Entry(key, 2, 8.0, (text,), tuple(dict.fromkeys((*commit_cite, *(
                f for p in paths[:8] for f in last_change[p].fragments)))), critical=True,
                kind="current", why="files changed after the last commit"))
    m, text = _last_text(story) if not service else (-1, "")
    if text and len(list_items(text)) < 2:  # (a plan it lists is the next step's)
        frags = story.text_fragments(m)
        if frags:
            said = tuple(word(lang, "last_said", text=story.quote(text, n))
                         for n in (600, 300, 120))
            out.append(Entry(key, 3, 6.5, said, frags, kind="current",
                             why="what the assistant wrote last"))
    return out


def _workflow(story: Story) -> list[Action]:
    """The commands run between claiming a tracker item and closing it, for the last item
    closed (how earlier items were finished), each kind of step once."""
    acts = story.actions
    closes = [a for a in acts if a.kind == "tracker" and any(s == "closed" for _, s in a.task_ops)]
    if not closes:
        return []
    close = closes[-1]
    start = max((a.index for a in acts if a.index < close.index and (a.changes_files or any(
        s == "in_progress" for _, s in a.task_ops))), default=close.index)
    steps: dict[str, Action] = {}
    for a in acts:
        if start < a.index <= close.index + 3 and a.kind in ("test", "lint", "build", "commit",
                                                            "push", "tracker") \
                and a.status == "ok" and not a.reads_only:
            steps.setdefault(short_command(a), a)
    return list(steps.values())


_PLAN_REACH = 40  # a plan is looked for in this many of the last messages
_KEY = re.compile(r"[^a-z0-9]")


def _plan(story: Story) -> list[Entry]:
    """The steps the assistant last listed as its plan, after the user's latest request and
    shortly before the cut (``I'll update: 1. … 2. …``); a step that names a file changed
    since says so."""
    lang = story.language
    if story.events.kind != "coding":
        return []  # (a service agent's list is what it asks the customer for)
    latest = max((r.message for r in story.requests), default=story.start - 1)
    for m in range(story.end - 1, max(latest, story.end - _PLAN_REACH, story.start - 1), -1):
        msg = story.conv.messages[m]
        if msg.role != "assistant":
            continue
        text = " ".join(p.text for p in msg.parts if isinstance(p, Text)).strip()
        steps = list_items(text) if text else []
        if len(steps) < 2:
            continue
        frags = story.text_fragments(m)
        if not frags:
            return []
        changed = [p for a in story.actions if a.message >= m and a.changes_files
                   and a.status == "ok" for p in a.paths]

        def step(s: str, limit: int, changed: list[str] = changed) -> str:
            head = _KEY.sub("", re.split(r"\s[-–—:]\s|:\s", s, maxsplit=1)[0].lower())
            done = next((p for p in changed if len(head) >= 5 and
                         head in _KEY.sub("", p.lower())), None)
            mark = (f"（之后已改 `{done.rsplit('/', 1)[-1]}`）" if story.zh else
                    f" (edited since: `{done.rsplit('/', 1)[-1]}`)") if done else ""
            return clip(s, limit) + mark

        sep = "；" if story.zh else "; "
        variants = tuple(dict.fromkeys(
            word(lang, "next_plan", where=story.where(m),
                 items=sep.join(f"{n}. {step(s, limit)}" for n, s in enumerate(steps[:10], 1)))
            for limit in (200, 100, 50)))
        return [Entry("next_step", 2.5, 8.5, variants, frags, critical=True, kind="plan",
                      why="the steps the assistant listed as its plan before the cut")]
    return []


def build_next(story: Story, key: str) -> list[Entry]:
    lang = story.language
    out: list[Entry] = []
    acts = story.actions
    items = relevant_items(story)
    todos, _ = story.tasks
    in_progress = [t for t in items if t.status == "in_progress" and not t.done and
                   "." in (t.id or "")] or [t for t in todos if t.status == "in_progress"]
    pending = [t for t in items if t.status == "open" and "." in (t.id or "")] or \
        [t for t in todos if t.status == "pending"]
    cites = item_sources(story)
    if in_progress and cites.get(in_progress[-1].id or in_progress[-1].text):
        t = in_progress[-1]
        src = cites[t.id or t.text]
        task = f"{t.id} ({clip(t.text, 100)})" if t.id else clip(t.text, 120)
        steps = _workflow(story)
        text = word(lang, "next_task", task=task)
        if steps:
            text += ("；此前的条目以此收尾：" if story.zh else
                     "; earlier items were finished with: ") + ", ".join(
                f"`{short_command(a)}`" for a in steps)
        step_cites = tuple(f for a in steps for f in a.call_fragments)
        out.append(Entry(key, 0, 9.0, (text, word(lang, "next_task", task=task)),
                         tuple(dict.fromkeys((*src, *step_cites))),
                         critical=True, kind="next", why="the task in progress"))
    if pending and cites.get(pending[0].id or pending[0].text):
        t = pending[0]
        task = f"{t.id} ({clip(t.text, 100)})" if t.id else clip(t.text, 120)
        out.append(Entry(key, 1, 7.5, (word(lang, "next_open", task=task),),
                         cites[t.id or t.text],
                         kind="next", why="the next open task"))
    out.extend(_plan(story))
    m, text = _last_text(story)
    if text:
        sentences = split_sentences(text)
        intent = next((s for s in reversed(sentences) if _INTENT.search(s)), "")
        after = [a for a in acts if a.message >= m]
        if intent and (not after or any(a.status in ("pending", "failed") for a in after)
                       or not in_progress):
            frags = story.text_fragments(m)
            if frags:
                out.append(Entry(key, 2, 8.0 if not in_progress else 6.0,
                                 (word(lang, "next_intent", text=story.quote(intent, 200)),),
                                 frags, critical=not in_progress, kind="next",
                                 why="the assistant's last stated intent"))
        if text.rstrip().endswith(("?", "？")) or (sentences and _INVITES.search(sentences[-1])):
            frags = story.text_fragments(m)
            question = sentences[-1] if sentences else text
            if frags:
                out.append(Entry(key, 3, 8.5, (word(lang, "awaiting",
                                                    text=story.quote(question, 220)),),
                                 frags, critical=True, kind="next",
                                 why="the assistant's last words ask the user"))
    latest = [r for r in story.requests if r.kind == "request"]
    if len(latest) > 1 and not story.later_requests:  # (one request: the section above)
        r = latest[-1]
        if r.fragments:
            out.append(Entry(key, 4, 5.0, (word(lang, "next_request",
                                                text=story.quote(r.text, 240)),),
                             r.fragments, kind="next", why="the user's latest instruction"))
    return out
