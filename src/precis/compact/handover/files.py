"""Files and code: a ledger, one line per file that changed (created / edited / moved /
deleted, the names it defines, why: the assistant's words before the change), and one line
naming the files only read."""

from __future__ import annotations

from precis.compact.handover._fit import Entry
from precis.compact.handover._story import Story, clip, plain
from precis.compact.handover._words import word
from precis.events import FileRecord

__all__ = ["build_files"]

_MAX_READ = 12


def _what(story: Story, rec: FileRecord) -> str:
    lang = story.language
    changes = [a for a in rec.actions if a.changes_files and a.status != "failed"]
    parts: list[str] = []
    if rec.created:
        parts.append(word(lang, "created"))
    writes = sum(1 for a in changes if a.kind == "create")
    edits = sum(1 for a in changes if a.kind == "edit") + max(0, writes - rec.created)
    if edits:
        parts.append(word(lang, "edited") if edits == 1 else word(lang, "edited_n", n=edits))
    if rec.moved_to:
        parts.append(word(lang, "moved_to", dst=f"`{rec.moved_to}`"))
    elif any(a.kind == "move" and a.paths[-1:] == (rec.path,) for a in changes):
        src = next(a.paths[0] for a in changes if a.kind == "move" and a.paths[-1:] == (rec.path,))
        parts.append(word(lang, "moved_from", src=f"`{src}`"))
    if rec.deleted:
        parts.append(word(lang, "deleted"))
    return (", " if not story.zh else "，").join(parts) or word(lang, "edited")


def _defines(story: Story, names: list[str]) -> str:
    """``defines module `A` and functions `b`, `c``` (the kinds said in words, so the line
    reads as a sentence)."""
    if not names:
        return ""
    modules = [n for n in names if "." in n or n[:1].isupper()]
    others = [n for n in names if n not in modules]
    parts = []
    if story.zh:
        if modules:
            parts.append("模块 " + "、".join(f"`{n}`" for n in modules))
        if others:
            parts.append("函数 " + "、".join(f"`{n}`" for n in others))
        return "定义" + "，".join(parts)
    if modules:
        parts.append(("module " if len(modules) == 1 else "modules ")
                     + ", ".join(f"`{n}`" for n in modules))
    if others:
        parts.append(("function " if len(others) == 1 else "functions ")
                     + ", ".join(f"`{n}`" for n in others))
    return "defines " + " and ".join(parts)


def _inline(story: Story, lines: list[str]) -> str:
    """``adds: `a`; `b``` for a few short lines; a code block when they are long (a line of
    markup is no sentence)."""
    if not lines:
        return ""
    if sum(len(x) for x in lines) > 90:
        return _code_block(story, lines, inline_up_to=0).lstrip("；; ")
    return ("新增：" if story.zh else "adds: ") + "; ".join(f"`{x}`" for x in lines)


def _code_block(story: Story, lines: list[str], inline_up_to: int = 2) -> str:
    """The lines a change added, as a code block under the entry's line (a line or two
    inline)."""
    if not lines:
        return ""
    label = "新增：" if story.zh else "adds: "
    sep = "；" if story.zh else "; "
    if len(lines) <= inline_up_to:
        return sep + label + "; ".join(f"`{x}`" for x in lines)
    body = "\n".join(f"    {x}" for x in lines)
    return f"{sep}{label.rstrip()}\n  ```\n{body}\n  ```"


def build_files(story: Story, key: str) -> list[Entry]:
    lang = story.language
    out: list[Entry] = []
    records = story.ledger
    changed = [r for r in records if r.changed and any(
        a.status != "failed" for a in r.actions if a.changes_files)]
    total = max(1, len(story.actions))
    request_text = " ".join(r.text for r in story.requests)
    commits = [a.index for a in story.actions if a.kind == "commit" and a.status == "ok"]
    since = commits[-1] if commits else -1  # the work since the last commit is in progress
    for rec in changed:
        changes = [a for a in rec.actions if a.changes_files and a.status != "failed"]
        names: list[str] = []
        for a in changes:
            names.extend(n for n in a.names if n not in names and not n.startswith("test")
                         and n != "tests")
        intents = list(dict.fromkeys(x for x in (plain(a.intent) for a in changes) if x))
        what = _what(story, rec)
        head = f"`{rec.path}` — {what}"
        sep = "；" if story.zh else "; "
        defines = _defines(story, names[:5])
        whys = [clip(t, 150) for t in (intents[:1] + intents[-1:] if len(intents) > 1
                                       else intents)]
        why = word(lang, "why", text=" / ".join(dict.fromkeys(whys))) if whys else ""
        all_whys = [clip(t, 150) for t in intents[:5]]
        why_all = word(lang, "why", text=" / ".join(all_whys)) if all_whys else ""
        added: list[str] = []
        for a in reversed(changes):  # the latest change's lines first
            added.extend(x for x in a.added if x not in added)
        current = bool(changes) and changes[-1].index > since
        adds = _code_block(story, added[:14 if current else 6])
        adds3 = _inline(story, added[:3])
        adds2 = _inline(story, added[:2])
        # what the code now says goes in before why it was changed (the why often
        # narrates the step; the added lines are the change)
        variants = [sep.join(p for p in (head, defines, why_all) if p) + adds,
                    sep.join(p for p in (head, defines, why, adds3) if p),
                    sep.join(p for p in (head, defines, adds3) if p),
                    sep.join(p for p in (head, adds2) if p), head]
        last = changes[-1].index if changes else rec.actions[-1].index
        priority = 5.0 + 0.3 * min(len(changes), 5) + 1.5 * last / total
        if rec.path.rsplit("/", 1)[-1] in request_text:
            priority += 1.0
        if current:
            priority += 1.0
        if rec.created:  # a new file: what the work made
            priority += 0.8
        if rec.path.startswith(("/", "~")):  # outside the project (a harness's plan file)
            priority -= 3.0
        sources = tuple(dict.fromkeys(f for a in changes[-12:]
                                      for f in (*a.intent_fragments, *a.fragments)))
        if not sources:
            continue
        out.append(Entry(key, changes[0].index if changes else 0, priority,
                         tuple(dict.fromkeys(variants)), sources, kind="file",
                         why=f"{len(changes)} change(s) to this file"))
    read_only = [r for r in records if not r.changed and not r.path.startswith(("/", "~"))]
    if read_only:
        sources = tuple(dict.fromkeys(r.actions[0].call_fragments[0] for r in read_only[:4]
                                      if r.actions[0].call_fragments))
        if sources:
            paths = [f"`{r.path}`" for r in read_only[:_MAX_READ]]
            more = len(read_only) - len(paths)
            tail = (f" (+{more})" if more > 0 else "")
            sep = "、" if story.zh else ", "
            listed = (word(lang, "read_only", items=sep.join(paths) + tail),
                      word(lang, "read_only", items=sep.join(paths[:4]) +
                           (f" (+{len(read_only) - 4})" if len(read_only) > 4 else "")))
            out.append(Entry(key, 1e9, 2.0, listed, sources, kind="file",
                             why="files the agent read and did not change"))
    return out
