"""Views over a session's actions: the file ledger, failures paired with their fixes, and the
task list (todo tool and issue tracker) as last seen."""

from __future__ import annotations

from collections.abc import Sequence

from precis.events._shell import classify_command
from precis.events.model import Action, Failure, FileRecord, SessionEvents, TaskItem

__all__ = ["failures", "file_ledger", "signature", "task_list"]

_RUNS = frozenset({"command", "test", "build", "lint", "install", "commit", "push", "vcs",
                   "tracker"})


def file_ledger(events: SessionEvents) -> list[FileRecord]:
    """One record per file an action touched, changed files first (in the order of their
    first change), then files only read (in the order of their first read). A moved file's
    record names where it went; the new path has a record of its own."""
    actions_of: dict[str, list[Action]] = {}
    moved: dict[str, str] = {}
    for a in events.actions:
        ops = a.file_ops or tuple((p, a.kind) for p in a.paths)
        if a.kind == "move" and len(a.paths) == 2 and not a.file_ops:
            src, dst = a.paths
            actions_of.setdefault(src, []).append(a)
            actions_of.setdefault(dst, []).append(a)
            if a.status != "failed":
                moved[src] = dst
            continue
        for path, _kind in ops:
            if path and not path.endswith("/"):
                actions_of.setdefault(path, []).append(a)
    records = [FileRecord(path=p, actions=tuple(acts), moved_to=moved.get(p))
               for p, acts in actions_of.items()]
    changed = [r for r in records if r.changed]
    changed.sort(key=lambda r: next(a.index for a in r.actions if a.changes_files))
    read = [r for r in records if not r.changed]
    return changed + read


def signature(action: Action) -> tuple[str, ...]:
    """What makes two actions the same attempt: a command's program and subcommand (``mix
    test``, ``cargo build``), a file change's path, a domain tool's name."""
    if action.kind in _RUNS:
        _, simple = classify_command(action.target)
        best = next((w for w in simple if w), [])
        words = [w for w in best[:3] if not w.startswith("-")][:2]
        return ("run", *words)
    if action.changes_files:
        return ("file", *action.paths[:1])
    return ("tool", action.tool)


def failures(events: SessionEvents) -> list[Failure]:
    """Each failed action (the same failure repeated counts once), with the later success
    of the same attempt (``fixed_by``) and, as its fix, the file changes made before the
    next try of that attempt (the try that succeeded, or one that failed another way)."""
    out: list[Failure] = []
    acts = events.actions
    open_streak: set[tuple[tuple[str, ...], str]] = set()
    for k, a in enumerate(acts):
        sig = signature(a)
        if a.status == "ok":
            open_streak = {s for s in open_streak if s[0] != sig}
            continue
        if a.status != "failed" or (sig, a.result) in open_streak:
            continue
        open_streak.add((sig, a.result))
        fixed_by: Action | None = None
        for later in acts[k + 1:]:
            if signature(later) == sig and later.status == "ok":
                fixed_by = later
                break
        retry = next((b.index for b in acts[k + 1:] if signature(b) == sig), len(acts))
        fix = tuple(b for b in acts[k + 1: retry] if b.changes_files or b.kind == "install")
        explanation = _explanation(acts, k, retry)
        out.append(Failure(action=a, cause=a.result, fixed_by=fixed_by, fix=fix,
                           explanation=explanation))
    return out


def _explanation(acts: Sequence[Action], k: int, stop: int) -> str:
    """The assistant's words before the next calls after the failure, up to the run that
    succeeded (what it made of the failure)."""
    failed = acts[k]
    for later in acts[k + 1: min(k + 4, stop + 1)]:
        if later.message != failed.message and later.intent:
            return later.intent
    return ""


def task_list(events: SessionEvents) -> tuple[tuple[TaskItem, ...], tuple[TaskItem, ...]]:
    """``(todos, tracked)``: the last todo list written, and the tracker items seen with
    the status the last successful tracker command gave them."""
    todos: tuple[TaskItem, ...] = ()
    tracked: dict[str, TaskItem] = {}
    for a in events.actions:
        if a.kind in ("todo",) and a.tasks and a.status != "failed":
            todos = a.tasks
        if a.kind == "tracker" and a.status != "failed":
            for item in a.tasks:
                if item.id:
                    old = tracked.get(item.id)
                    keep = old.status if old and old.status in ("closed", "in_progress") and \
                        item.status == "open" else item.status
                    tracked[item.id] = TaskItem(text=item.text, status=keep, id=item.id)
            for ident, status in a.task_ops:
                old = tracked.get(ident)
                tracked[ident] = TaskItem(text=old.text if old else "", status=status, id=ident)
    return todos, tuple(tracked.values())
