"""What is done and what is pending, from the tools' own records: commits (id and message),
pushes, items closed in an issue tracker, the todo list as last written, the last passing
test runs; pending: the todo items and tracker items not done (the tracker items that belong
to the work: named by the user or acted on, and their sub-items)."""

from __future__ import annotations

import re

from precis.compact.handover._fit import Entry
from precis.compact.handover._story import Story, clip
from precis.compact.handover._words import word
from precis.compact.handover.errors import describe_action
from precis.events import Action, TaskItem
from precis.events._ledger import signature
from precis.events._shell import classify_command

__all__ = ["build_done", "build_pending", "relevant_items"]


def relevant_items(story: Story) -> list[TaskItem]:
    """The tracker items that belong to the work (see the module docs), in the tracker's
    order."""
    _, tracked = story.tasks
    if not tracked:
        return []
    ids = [t.id for t in tracked if t.id]
    text = " ".join(r.text for r in story.requests)
    roots = {i for i in ids if re.search(rf"(?<![\w.-]){re.escape(i)}(?![\w-])", text)}
    for a in story.actions:
        for ident, _ in a.task_ops:
            roots.add(ident.split(".")[0])
    if not roots:
        return list(tracked)
    return [t for t in tracked if t.id and any(t.id == r or t.id.startswith(r + ".")
                                               for r in roots)]


def item_sources(story: Story) -> dict[str, tuple[str, ...]]:
    """Tracker item or todo text -> the fragments that say it: the output that listed the
    item last (its title) and the command that changed its status last."""
    listed: dict[str, tuple[str, ...]] = {}
    changed: dict[str, tuple[str, ...]] = {}
    for a in story.actions:
        if a.kind == "tracker":
            for t in a.tasks:
                if t.id:
                    listed[t.id] = a.result_fragments
            for ident, _ in a.task_ops:
                changed[ident] = a.call_fragments[:1]
        elif a.kind == "todo":
            for t in a.tasks:
                listed[t.text] = a.call_fragments
    return {k: tuple(dict.fromkeys((*listed.get(k, ()), *changed.get(k, ()))))
            for k in dict.fromkeys([*listed, *changed])}


def _pushes(a: Action) -> bool:
    """A command line that also pushes (``git commit … && git push``)."""
    _, simple = classify_command(a.target)
    return any(w[:2] == ["git", "push"] for w in simple)


def _titles(story: Story) -> dict[str, str]:
    _, tracked = story.tasks
    return {t.id: t.text for t in tracked if t.id and t.text}


def build_done(story: Story, key: str) -> list[Entry]:
    lang = story.language
    out: list[Entry] = []
    total = max(1, len(story.actions))
    titles = _titles(story)
    closed_seen: set[str] = set()
    last_test: dict[tuple[str, ...], Action] = {}
    closes = {ident: a for a in story.actions if a.kind == "tracker" and a.status == "ok"
              for ident, status in a.task_ops if status == "closed"}
    for a in story.actions:
        recency = 1.5 * a.index / total
        if a.kind == "commit" and a.status == "ok":
            text = (word(lang, "commit", id=a.commit, message=clip(a.result, 140)) if a.commit
                    else word(lang, "commit_noid", message=clip(a.result or a.detail, 140)))
            if _pushes(a):
                text += word(lang, "and_pushed")
            sources = a.fragments
            # the item the commit names and that was closed: said once, on this line
            named = [i for i in closes if re.search(
                rf"(?<![\w.-]){re.escape(i)}(?![\w-]|\.\w)", a.result or a.target)]
            if named:
                closed_seen.update(named)
                text += ("；已关闭 " if story.zh else "; closed ") + ", ".join(named)
                sources = tuple(dict.fromkeys((*sources, *(f for i in named
                                                           for f in closes[i].call_fragments[:1]))))
            # the commit message's body says what the commit does, in the agent's words
            variants = tuple(dict.fromkeys(
                [f"{text} — {story.core(a.snippet, n)}" for n in (700, 300, 120)
                 if a.snippet] + [text]))
            out.append(Entry(key, a.index, 6.0 + recency, variants, sources,
                             kind="done", why="a commit the agent made"))
        elif a.kind == "push" and a.status == "ok":
            out.append(Entry(key, a.index, 3.5 + recency,
                             (word(lang, "pushed", what=describe_action(a)),),
                             a.call_fragments[:1], kind="done", why="a push that succeeded"))
        elif a.kind == "tracker" and a.status == "ok":
            for ident, status in a.task_ops:
                if status != "closed" or ident in closed_seen or any(
                        c.kind == "commit" and c.status == "ok" and ident in (c.result or c.target)
                        for c in story.actions if c.index > a.index):
                    continue  # a commit naming it says it
                closed_seen.add(ident)
                title = titles.get(ident, "")
                text = word(lang, "closed", id=ident, title=clip(title, 110)) if title else \
                    word(lang, "closed_noid", title=ident)
                said = item_sources(story).get(ident, ())
                variants = tuple(dict.fromkeys(
                    [f"{text} — {story.core(a.snippet, n)}" for n in (400, 160)
                     if a.snippet] + [text]))
                out.append(Entry(key, a.index, 6.0 + recency, variants,
                                 tuple(dict.fromkeys((*a.call_fragments[:1], *said))),
                                 kind="done", why="an item the agent closed in the tracker"))
        elif a.kind == "test" and a.status in ("ok", "failed") and a.counts is not None:
            last_test[signature(a)] = a
    for a in last_test.values():
        if a.status != "ok":
            continue  # a failing last run is in Errors
        text = word(lang, "tests_passed", what=describe_action(a, 80),
                    counts=a.counts.describe() if a.counts else "")
        out.append(Entry(key, a.index, 6.0 + 1.5 * a.index / total, (text,),
                         a.fragments, kind="done", why="the last run of these tests"))
    todos, _ = story.tasks
    done = [t for t in todos if t.done]
    todo_action = next((a for a in reversed(story.actions) if a.kind == "todo" and a.tasks),
                       None)
    if done and todo_action is not None:
        sep = "；" if story.zh else "; "
        variants = (word(lang, "todo_done", items=sep.join(clip(t.text, 80) for t in done)),
                    word(lang, "todo_done", items=sep.join(clip(t.text, 40) for t in done[-4:])))
        out.append(Entry(key, todo_action.index, 5.0, variants, todo_action.call_fragments[:1],
                         kind="done", why="the items the last todo list marks completed"))
    return out


def build_pending(story: Story, key: str) -> list[Entry]:
    lang = story.language
    out: list[Entry] = []
    todos, _ = story.tasks
    todo_action = next((a for a in reversed(story.actions) if a.kind == "todo" and a.tasks),
                       None)
    if todo_action is not None:
        for k, t in enumerate(todos):
            if t.done or t.status == "cancelled":
                continue
            status = word(lang, "status_in_progress" if t.status == "in_progress"
                          else "status_pending")
            out.append(Entry(key, todo_action.index + k / 100, 8.0 if t.status == "in_progress"
                             else 7.0, (word(lang, "todo_open", status=status,
                                             text=clip(t.text, 160)),),
                             todo_action.call_fragments[:1],
                             critical=t.status == "in_progress", kind="pending",
                             why="an item of the last todo list that is not done"))
    cites = item_sources(story)
    for k, t in enumerate(relevant_items(story)):
        if t.done or not t.id or not cites.get(t.id):
            continue
        status = word(lang, "status_in_progress" if t.status == "in_progress"
                      else "status_open")
        sources = cites[t.id]
        out.append(Entry(key, 1e6 + k, 8.0 if t.status == "in_progress" else 6.5,
                         (word(lang, "tracked_open", status=status, id=t.id,
                               title=clip(t.text, 140)),), sources,
                         critical=t.status == "in_progress", kind="pending",
                         why="a tracker item of this work that is not closed"))
    return out
