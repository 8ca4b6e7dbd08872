"""Errors and fixes: each failure (from structure: an error result, a non-zero exit code, a
traceback or failing tests in a command's output), its cause (the line of the output that
says it), what the assistant made of it, and the fix: the file changes made before the same
command passed."""

from __future__ import annotations

import re

from precis.compact.handover._fit import Entry
from precis.compact.handover._story import Story, clip, plain
from precis.compact.handover._words import word
from precis.events import Action, Failure
from precis.events._shell import classify_command

__all__ = ["build_errors", "describe_action", "short_command"]

_RUNS = frozenset({"command", "test", "build", "lint", "install", "commit", "push", "vcs",
                   "tracker"})


def describe_action(action: Action, limit: int = 90) -> str:
    """What an action was, in a few words: a command in backticks, a file change, a call."""
    if action.kind in ("command", "test", "build", "lint", "install", "commit", "push", "vcs",
                       "tracker"):
        first = action.target.strip().splitlines()[0] if action.target.strip() else action.tool
        return f"`{clip(first, limit)}`"
    if action.changes_files or action.kind == "read":
        verb = {"read": "reading", "create": "writing", "edit": "editing", "move": "moving",
                "delete": "deleting"}[action.kind]
        return f"{verb} `{action.target}`"
    target = f"({clip(action.target, 40)})" if action.target else ""
    return f"`{action.tool}{target}`"


def short_command(a: Action) -> str:
    """A command as its program and subcommand with their flags (no paths, no pipes)."""
    if a.kind == "commit":
        return "git commit"
    _, simple = classify_command(a.target)
    words = next((w for w in simple if w), [a.tool])
    kept = [w for w in words[:4] if "/" not in w and "=" not in w and len(w) < 30
            and not re.match(r"^\d*[<>&]", w)]
    return " ".join(kept[:3]) or a.tool


def _fix_text(story: Story, f: Failure) -> str:
    lang = story.language
    if f.fixed_by is None:
        return word(lang, "unfixed")
    paths = list(dict.fromkeys(p for a in f.fix for p in a.paths))
    counts = f"({f.fixed_by.counts.describe()})" if f.fixed_by.counts else ""
    if paths:
        text = word(lang, "fixed", fix=word(lang, "fix_edits", paths=", ".join(
            f"`{p}`" for p in paths[:4])))
    else:
        text = word(lang, "fixed_same")
    if f.fixed_by.target != f.action.target and f.fixed_by.kind not in ("test",):
        text += f" ({describe_action(f.fixed_by, 70)})"
    return f"{text} {counts}".rstrip()


def build_errors(story: Story, key: str) -> list[Entry]:
    """One line per failure, or per run of failures of the same attempt that ended in the
    same success (each with its cause and its own fix, the success said once)."""
    out: list[Entry] = []
    total = max(1, len(story.actions))
    found = story.failures
    last_unfixed = next((f.action.index for f in reversed(found) if not f.fixed), None)
    groups: list[list[Failure]] = []
    for f in found:
        same = groups and f.fixed_by is not None and groups[-1][-1].fixed_by is f.fixed_by
        if same:
            groups[-1].append(f)
        else:
            groups.append([f])
    sep = "；" if story.zh else "; "
    for group in groups:
        first, last = group[0], group[-1]
        a = first.action
        what = describe_action(a)
        minor = a.kind in ("read", "search", "fetch", "other") or a.reads_only
        if len(group) == 1:
            variants = _single(story, first, what)
        else:
            steps = [_step(story, f, n) for n, f in enumerate(group, start=1)]
            head = (f"{what} 失败 {len(group)} 次后通过" if story.zh else
                    f"{what} failed {len(group)} times before it passed")
            counts = f" ({last.fixed_by.counts.describe()})" if last.fixed_by and \
                last.fixed_by.counts else ""
            variants = tuple(dict.fromkeys((
                head + counts + ": " + sep.join(s for s, _ in steps),
                head + counts + ": " + sep.join(s for _, s in steps))))
        priority = (2.0 if minor else 6.5) + 1.5 * last.action.index / total
        critical = last.action.index == last_unfixed and not minor and \
            last.action.index >= total - 15
        if not last.fixed and not minor:
            priority += 2.0
        sources = tuple(dict.fromkeys(
            [*a.call_fragments[:1], *(r for f in group for r in f.action.result_fragments[:8]),
             *(f.fix[-1].call_fragments[0] for f in group if f.fix and f.fix[-1].call_fragments),
             *(last.fixed_by.fragments if last.fixed_by else ())]))
        if not sources:
            continue
        out.append(Entry(key, a.index, priority, variants, sources, critical=critical,
                         kind="error", why="a failed " + a.kind + (
                             " and the run that passed after it" if last.fixed else ", not fixed")))
    return out


def _single(story: Story, f: Failure, what: str) -> tuple[str, ...]:
    lang = story.language
    cause = clip(f.cause, 170) if f.cause else ""
    head = word(lang, "failed", what=what, cause=cause) if cause else \
        word(lang, "failed_plain", what=what)
    short_head = word(lang, "failed", what=what, cause=clip(f.cause, 120)) if cause else head
    fix = _fix_text(story, f)
    sep = "；" if story.zh else "; "
    said = word(lang, "explained", text=clip(plain(f.explanation), 160)) if f.explanation \
        else ""
    brief = _brief(story, f)
    return tuple(dict.fromkeys((sep.join(p for p in (f"{head} {said}".strip(), fix) if p),
                                sep.join(p for p in (head, fix) if p),
                                sep.join(p for p in (short_head, fix) if p), brief)))


def _brief(story: Story, f: Failure) -> str:
    """A failure in a dozen words: ``mix test`` failed: the cause's head → the file fixed."""
    a = f.action
    what = f"`{short_command(a)}`" if a.kind in _RUNS else describe_action(a, 40)
    failed = "失败" if story.zh else "failed"
    text = f"{what} {failed}: {clip(f.cause, 90)}" if f.cause else f"{what} {failed}"
    paths = list(dict.fromkeys(p for b in f.fix for p in b.paths))
    if paths:
        text += f" → `{paths[0]}`"
    if not f.fixed:
        text += ("；" if story.zh else "; ") + word(story.language, "unfixed")
    return text


def _step(story: Story, f: Failure, n: int) -> tuple[str, str]:
    """One failure of a run, fullest and shortest: ``(n) cause → what changed``."""
    paths = list(dict.fromkeys(p for a in f.fix for p in a.paths))
    changed = (" → " + ", ".join(f"`{p}`" for p in paths[:3])) if paths else ""
    said = f" ({clip(plain(f.explanation), 110)})" if f.explanation else ""
    return (f"({n}) {clip(f.cause, 120)}{said}{changed}",
            f"({n}) {clip(f.cause, 60)}{changed}")
