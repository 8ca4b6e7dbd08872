"""The walk over a conversation that produces its :class:`SessionEvents`."""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import replace

from precis.events._outcome import outcome_of
from precis.events._registry import Call, parse_arguments, read_call
from precis.events._requests import read_requests
from precis.events.model import Action, Request, SessionEvents, SessionKind
from precis.model import Conversation, Text, ToolCall, ToolResult
from precis.segment.model import Fragment

__all__ = ["extract_events", "relative"]

_CODING = frozenset({"read", "create", "edit", "move", "delete", "command", "test", "build",
                     "lint", "install", "commit", "push", "vcs", "search", "tracker", "todo",
                     "plan", "fetch", "subagent"})
_SERVICE = frozenset({"lookup", "change"})
_INTENT_CHARS = 240
_LIST_ITEM = re.compile(r"^\s*(?:[-*•+]|\d{1,2}[.)])\s")
_SENTENCES = re.compile(r"(?<=[.!?。！？:])\s+|\n+")


def _intent(text: str) -> str:
    """The last sentence or two of what the assistant wrote before a call (its prose: the
    items of a list it wrote are no intent)."""
    lines = [ln for ln in text.splitlines() if not _LIST_ITEM.match(ln)] or text.splitlines()
    sentences = [s.strip().replace("**", "") for s in _SENTENCES.split("\n".join(lines))
                 if s.strip()]
    out = ""
    for s in reversed(sentences):
        candidate = (s + " " + out).strip() if out else s
        if len(candidate) > _INTENT_CHARS:
            break
        out = candidate
        if len(out) > 60:
            break
    if not out and sentences:
        out = sentences[-1][: _INTENT_CHARS - 1] + "…"
    return out


_CURRENT_DIR = re.compile(r"^\(Current directory: (/[^)\n]*)\)\s*$", re.MULTILINE)


def _root(conv: Conversation, paths: list[str]) -> str:
    """The project's root: the session's working directory (its metadata, or the one a
    SWE-agent shell prompt shows most), else what the absolute paths share."""
    cwd = conv.metadata.get("cwd")
    if isinstance(cwd, str) and cwd.startswith("/"):
        return cwd.rstrip("/")
    shown: Counter[str] = Counter(d.rstrip("/") for m in conv.messages[:200] for p in m.parts
                    if isinstance(p, ToolResult) for d in _CURRENT_DIR.findall(p.content))
    if shown:
        return shown.most_common(1)[0][0]
    absolute = [p for p in paths if p.startswith("/")]
    if len(absolute) < 2:
        return ""
    common = os.path.commonpath(absolute)
    return common if common.count("/") >= 2 else ""


def relative(path: str, root: str) -> str:
    """``path`` relative to ``root`` when it lies under it."""
    if root and path.startswith(root + "/"):
        return path[len(root) + 1:]
    return path


def extract_events(conv: Conversation, fragments: Sequence[Fragment] = ()) -> SessionEvents:
    """What happened in ``conv`` (see :mod:`precis.events`); ``fragments`` (from
    :func:`precis.segment`) give every record the ids to cite."""
    by_part: dict[tuple[int, int], list[str]] = defaultdict(list)
    for f in fragments:
        by_part[(f.provenance.message, f.provenance.part)].append(f.id)
    requests, injected, _ = read_requests(conv)
    requests = [_cite_request(r, conv, by_part) for r in requests]

    results: dict[str, tuple[int, int, ToolResult]] = {}
    for i, m in enumerate(conv.messages):
        for p, part in enumerate(m.parts):
            if isinstance(part, ToolResult):
                results.setdefault(part.call_id, (i, p, part))
    last_assistant = max((i for i, m in enumerate(conv.messages) if m.role == "assistant"),
                         default=-1)
    state: dict[str, object] = {}
    actions: list[Action] = []
    before: tuple[str, tuple[str, ...]] = ("", ())  # words of a message without calls: they
    for i, m in enumerate(conv.messages):            # explain the calls of the next one
        if m.role != "assistant":
            continue
        said: tuple[str, tuple[str, ...]] = ("", ())
        if not m.tool_calls:
            if m.text.strip():
                before = (m.text, tuple(f for p, part in enumerate(m.parts)
                                        if isinstance(part, Text)
                                        for f in by_part.get((i, p), ())))
            continue
        if not any(isinstance(p, Text) and p.text.strip() for p in m.parts):
            said = before
        before = ("", ())
        for p, part in enumerate(m.parts):
            if isinstance(part, Text) and part.text.strip():
                said = (part.text, tuple(by_part.get((i, p), ())))
                continue
            if not isinstance(part, ToolCall):
                continue
            found = results.get(part.id)
            output = found[2].content if found else None
            is_error = found[2].is_error if found else False
            call = Call(tool=part.name, args=parse_arguments(part.arguments), output=output,
                        is_error=is_error, state=state)
            draft = read_call(call)
            meta = conv.messages[found[0]].metadata if found else {}
            outcome = outcome_of(draft, output, is_error, meta, last_turn=i == last_assistant)
            actions.append(Action(
                index=len(actions), message=i, call_id=part.id, tool=part.name,
                kind=draft.kind, target=draft.target, paths=draft.paths, detail=draft.detail,
                names=draft.names, snippet=draft.snippet, tasks=draft.tasks,
                task_ops=draft.task_ops, reads_only=draft.reads_only, file_ops=draft.file_ops,
                added=draft.added,
                status=outcome.status, exit_code=outcome.exit_code, result=outcome.result,
                counts=outcome.counts, commit=outcome.commit,
                intent=_intent(said[0]) if said[0] else "",
                intent_fragments=said[1] if said[0] else (),
                result_message=found[0] if found else None,
                call_fragments=tuple(by_part.get((i, p), ())),
                result_fragments=tuple(by_part.get((found[0], found[1]), ())) if found else (),
            ))
            said = ("", ())  # the words before the first call explain it, not the next calls
    root = _root(conv, [p for a in actions for p in a.paths])
    if root:
        actions = [_relative(a, root) for a in actions]
    return SessionEvents(kind=_kind(actions), requests=requests, injected=injected,
                         actions=actions, root=root)


def _relative(action: Action, root: str) -> Action:
    paths = tuple(relative(p, root) for p in action.paths)
    # a file's path is shown from the project's root (a part of the path as written); a
    # command, query or id stays verbatim
    target = relative(action.target, root) if action.kind in (
        "read", "create", "edit", "delete", "move") else action.target
    ops = tuple((relative(p, root), k) for p, k in action.file_ops)
    return replace(action, paths=paths, target=target, file_ops=ops)


def _kind(actions: list[Action]) -> SessionKind:
    if not actions:
        return "chat"
    coding = sum(1 for a in actions if a.kind in _CODING)
    service = sum(1 for a in actions if a.kind in _SERVICE)
    return "coding" if coding >= service else "service"


def _cite_request(request: Request, conv: Conversation,
                  by_part: dict[tuple[int, int], list[str]]) -> Request:
    m = conv.messages[request.message]
    ids: list[str] = []
    for p, part in enumerate(m.parts):
        if isinstance(part, Text):
            ids.extend(by_part.get((request.message, p), ()))
    return replace(request, fragments=tuple(ids))
