"""Todo lists, plans and issue trackers.

- Todo tools carry the whole list each time (Claude Code ``TodoWrite``: ``content`` /
  ``status``; Codex ``update_plan``: ``step`` / ``status``); the last one is the state.
- Plan tools: Claude Code ``EnterPlanMode`` / ``ExitPlanMode`` (its ``plan`` is the text).
- Issue trackers run from the shell (``bd`` / beads, ``gh issue``): a command changes an
  item's status (``bd close X``, ``bd update X --status in_progress``, ``gh issue close 12``)
  and the listings it prints (``bd ready``, ``bd show X``) name items with their titles.
"""

from __future__ import annotations

import re
from typing import Any

from precis.events._registry import Call, ToolVocabulary
from precis.events.model import Draft, TaskItem

__all__ = ["TaskTools", "tracker_draft", "tracker_items"]

_TODO_TOOLS = frozenset({"TodoWrite", "todo_write", "write_todos", "update_todos",
                         "update_plan", "todowrite", "TodoUpdate", "set_todos"})
_PLAN_TOOLS = frozenset({"EnterPlanMode", "ExitPlanMode", "exit_plan_mode", "create_plan",
                         "make_plan", "plan"})
_STATUS = {"pending": "pending", "todo": "pending", "not_started": "pending",
           "in_progress": "in_progress", "in-progress": "in_progress", "active": "in_progress",
           "completed": "completed", "complete": "completed", "done": "completed",
           "cancelled": "cancelled", "canceled": "cancelled"}


def _todos(value: Any) -> tuple[TaskItem, ...]:
    items: list[TaskItem] = []
    if isinstance(value, list):
        for entry in value:
            if not isinstance(entry, dict):
                continue
            text = entry.get("content") or entry.get("step") or entry.get("task") or \
                entry.get("title") or entry.get("description")
            if not isinstance(text, str) or not text.strip():
                continue
            status = str(entry.get("status", "pending")).lower()
            ident = entry.get("id")
            items.append(TaskItem(text=text.strip(), status=_STATUS.get(status, status),
                                  id=str(ident) if ident is not None else None))
    return tuple(items)


class TaskTools(ToolVocabulary):
    name = "tasks"

    def read(self, call: Call) -> Draft | None:
        if call.tool in _TODO_TOOLS:
            todos = _todos(call.args.get("todos", call.args.get("plan", call.args.get("items"))))
            done = sum(1 for t in todos if t.done)
            return Draft(kind="todo", target="todo list", tasks=todos,
                         detail=f"{done} of {len(todos)} done",
                         snippet=call.arg("explanation"))
        if call.tool in _PLAN_TOOLS:
            plan = call.arg("plan", "content", "text")
            return Draft(kind="plan", target=call.tool, snippet=plan,
                         detail="plan presented" if plan else "planning started")
        return None


_ITEM_ID = r"[A-Za-z][A-Za-z0-9]*-[a-z0-9]{2,}(?:\.\d+)*"
_STATUS_WORD = re.compile(r"\b(OPEN|IN[_ ]PROGRESS|CLOSED|BLOCKED|DONE|DEFERRED)\b")
# an item line: what may stand before the id (a list number, glyphs, bracketed tags), the
# id, more tags, a separator, the title, and trailing tags / a "(blocked by: …)" note
_LISTED = re.compile(
    rf"^[ \t]*(?:\d+\.[ \t]*)?(?:[○◐●✓✔↳↑←→•*-][ \t]*)*(?:\[[^\]\n]*\][ \t]*)*"
    rf"(?P<id>{_ITEM_ID})(?:[ \t]*\[[^\]\n]*\])*[ \t]*[:·-][ \t]*(?:\(\w+\)[ \t]*)?"
    rf"(?P<title>[^\n]+?)[ \t]*(?:\[[^\]\n]*\]|●[ \t]*P\d|\((?:blocked|blocks)[^)\n]*\))*[ \t]*$",
    re.MULTILINE)
_GLYPH = {"○": "open", "◐": "in_progress", "✓": "closed", "✔": "closed"}
_CLOSE_WORDS = frozenset({"close", "done", "resolve", "complete"})
# what the agent said when it closed an item (``bd close X --reason="…"``, ``gh issue close
# 12 --comment "…"``)
_REASON = re.compile(r"""(?:--reason|--comment|--message|-m|-r)[= ]"""
                     r"""(?:"((?:[^"\\]|\\.)*)"|'([^']*)')""")


def tracker_items(output: str) -> tuple[TaskItem, ...]:
    """Items a tracker listing names, each with its title and the status it shows."""
    items: dict[str, TaskItem] = {}
    for m in _LISTED.finditer(output):
        line_start = output.rfind("\n", 0, m.start()) + 1
        line = output[line_start: output.find("\n", m.end()) if "\n" in output[m.end():]
                      else len(output)]
        title = m.group("title").strip(" ·")
        if len(title) < 4 or title.startswith(("Closed", "Updated", "Created")):
            continue
        status = "open"
        word = _STATUS_WORD.search(line)
        if word:
            status = word.group(1).lower().replace(" ", "_")
        else:
            glyph = next((g for g in _GLYPH if g in line[: line.find(m.group("id"))]), None)
            if glyph:
                status = _GLYPH[glyph]
        items.setdefault(m.group("id"), TaskItem(text=title, status=status, id=m.group("id")))
    return tuple(items.values())


def tracker_draft(command: str, simple: list[list[str]], call: Call, description: str) -> Draft:
    """A tracker command (``bd …``, ``gh issue …``): the status changes it makes and the items
    its output lists."""
    ops: list[tuple[str, str]] = []
    for words in simple:
        if not words:
            continue
        args = words[1:]
        if words[0] in ("gh", "glab") and args[:1] in (["issue"], ["pr"]):
            args = args[1:]
        verb = next((w for w in args if not w.startswith("-")), "")
        ids = [w for w in args if re.fullmatch(_ITEM_ID, w) or re.fullmatch(r"#?\d+", w)]
        ids = [i if not i.isdigit() else f"#{i}" for i in ids]
        status = ""
        if verb in _CLOSE_WORDS:
            status = "closed"
        elif verb == "reopen":
            status = "open"
        elif verb in ("update", "edit"):
            for k, w in enumerate(args):
                if w.startswith("--status"):
                    status = w.split("=", 1)[1] if "=" in w else (args[k + 1] if k + 1 < len(args)
                                                                   else "")
        elif verb in ("claim", "start"):
            status = "in_progress"
        if status:
            ops.extend((i, status) for i in ids)
    items = tracker_items(call.output or "") if call.output else ()
    reason = _REASON.search(command)
    return Draft(kind="tracker", target=command.strip(), detail=description,
                 snippet=(reason.group(1) or reason.group(2) or "") if reason else "",
                 tasks=items, task_ops=tuple(ops), reads_only=not ops)
