"""What happened in a conversation, read from its structure: the records the events layer
produces (see :mod:`precis.events`).

Every record points back to the conversation: ``message`` is an index into
``Conversation.messages`` and ``fragments`` lists the ids of the fragments (``S12``) it came
from, so a summary line built from it can cite them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "ACTION_KINDS",
    "Action",
    "ActionKind",
    "Draft",
    "Failure",
    "FileRecord",
    "Injected",
    "Request",
    "RequestKind",
    "SessionEvents",
    "SessionKind",
    "Status",
    "TaskItem",
    "TestCounts",
]

ActionKind = Literal[
    "read",  # a file read or viewed
    "create",  # a file written from nothing (or overwritten whole)
    "edit",  # a file changed in place
    "move",  # a file renamed / moved
    "delete",  # a file removed
    "command",  # a shell command (none of the kinds below)
    "test",  # a test run
    "build",  # a compile / build
    "lint",  # a linter, formatter or type checker
    "install",  # a package install
    "commit",  # a version-control commit
    "push",  # a push to a remote
    "vcs",  # another version-control command (status, diff, checkout, merge, ...)
    "search",  # a search of files or of the web
    "tracker",  # an issue tracker (bd, gh issue, ...)
    "todo",  # a todo list update (Claude Code TodoWrite, Codex update_plan, ...)
    "plan",  # a plan presented or approved
    "fetch",  # a web page fetched
    "subagent",  # a task handed to a sub-agent
    "lookup",  # a domain tool that reads (get_reservation_details, ...)
    "change",  # a domain tool that changes something (book_reservation, ...)
    "think",  # a tool that only records reasoning
    "calc",  # a calculator
    "submit",  # the agent hands in its work (SWE-agent submit, OpenHands finish)
    "other",
]
ACTION_KINDS: tuple[str, ...] = ActionKind.__args__  # type: ignore[attr-defined]

Status = Literal["ok", "failed", "unknown", "pending", "rejected"]
RequestKind = Literal["request", "reply", "interrupt"]
SessionKind = Literal["coding", "service", "chat"]


@dataclass(frozen=True)
class TestCounts:
    """Counts a test run printed (those it did not print are None), and the runner's own
    summary line (``14 doctests, 410 tests, 0 failures``) when there is one."""

    __test__ = False  # not a pytest class

    passed: int | None = None
    failed: int | None = None
    errors: int | None = None
    skipped: int | None = None
    total: int | None = None
    said: str | None = None

    @property
    def failing(self) -> int:
        return (self.failed or 0) + (self.errors or 0)

    def describe(self) -> str:
        """The runner's own words when it printed a summary line, else the counts."""
        if self.said:
            return self.said
        parts = []
        if self.total is not None:
            parts.append(f"{self.total} tests")
        if self.passed is not None:
            parts.append(f"{self.passed} passed")
        parts.append(f"{self.failed or 0} failed")
        if self.errors:
            parts.append(f"{self.errors} errors")
        if self.skipped:
            parts.append(f"{self.skipped} skipped")
        return ", ".join(parts)


@dataclass(frozen=True)
class TaskItem:
    """One entry of a todo list, a plan or an issue tracker, as last seen."""

    text: str
    status: str  # "pending", "in_progress", "completed", "open", "closed", ...
    id: str | None = None

    @property
    def done(self) -> bool:
        return self.status in ("completed", "done", "closed")


@dataclass(frozen=True)
class Draft:
    """What a tool vocabulary reads from one call (see :class:`precis.events.ToolVocabulary`):
    the kind of action, what it acted on, and what it did to it."""

    kind: ActionKind
    target: str = ""  # the path, command, query, url or entity it acted on
    paths: tuple[str, ...] = ()  # files it touched (a move: source, destination)
    detail: str = ""  # what it did, in a few words ("+12/-3 lines", a commit message, ...)
    names: tuple[str, ...] = ()  # functions / classes an edit or a write defines
    snippet: str = ""  # a short excerpt of what was written (a signature, a line)
    tasks: tuple[TaskItem, ...] = ()  # a todo / plan update's list, or a tracker's items
    task_ops: tuple[tuple[str, str], ...] = ()  # tracker changes: (item id, new status)
    reads_only: bool = False  # looks at something and changes nothing
    file_ops: tuple[tuple[str, str], ...] = ()  # (path, kind) when files differ in kind
    added: tuple[str, ...] = ()  # the telling lines a file change added (see key_lines)


@dataclass(frozen=True)
class Action:
    """One tool call and what came of it."""

    index: int  # order among the conversation's actions
    message: int  # the message holding the call
    call_id: str
    tool: str
    kind: ActionKind
    target: str = ""
    paths: tuple[str, ...] = ()
    detail: str = ""
    names: tuple[str, ...] = ()
    snippet: str = ""
    tasks: tuple[TaskItem, ...] = ()
    task_ops: tuple[tuple[str, str], ...] = ()
    reads_only: bool = False
    file_ops: tuple[tuple[str, str], ...] = ()
    added: tuple[str, ...] = ()
    status: Status = "unknown"
    exit_code: int | None = None
    result: str = ""  # the line of the output that says what came of it
    counts: TestCounts | None = None
    commit: str | None = None  # a commit's id
    intent: str = ""  # the assistant's words just before the call (why it was made)
    intent_fragments: tuple[str, ...] = ()  # the fragments those words are in
    result_message: int | None = None
    call_fragments: tuple[str, ...] = ()
    result_fragments: tuple[str, ...] = ()

    @property
    def fragments(self) -> tuple[str, ...]:
        return self.call_fragments + self.result_fragments

    @property
    def changes_files(self) -> bool:
        return self.kind in ("create", "edit", "move", "delete")


@dataclass(frozen=True)
class Request:
    """A message the user wrote (not one a tool or the harness put in the user's turn).

    ``kind`` is ``request`` (asks for something or tells something), ``reply`` (a short
    answer to what the assistant offered or asked: ``answers`` quotes that offer) or
    ``interrupt`` (the user stopped the agent). ``queued`` marks a message the user typed
    while the agent worked (Claude Code delivers it between tool calls).
    """

    index: int  # order among the requests
    message: int
    text: str
    kind: RequestKind = "request"
    answers: str = ""
    answers_message: int | None = None
    queued: bool = False
    fragments: tuple[str, ...] = ()


@dataclass(frozen=True)
class Injected:
    """Content in a user turn that the user did not write: a task notification, a slash
    command and its output, a system reminder, a continuation preamble, a hook's message."""

    message: int
    kind: str
    text: str


@dataclass(frozen=True)
class Failure:
    """An action that failed, why (``cause``) and what fixed it, paired by structure: the
    same command (or the same file's change) succeeding later, with the file changes made
    in between as the fix."""

    action: Action
    cause: str
    fixed_by: Action | None = None  # the later run that succeeded
    fix: tuple[Action, ...] = ()  # the file changes between the failure and that run
    explanation: str = ""  # the assistant's words right after the failure

    @property
    def fixed(self) -> bool:
        return self.fixed_by is not None


@dataclass(frozen=True)
class FileRecord:
    """One file's history in the session: what was done to it, in order."""

    path: str  # as shown (relative to the project root when there is one)
    actions: tuple[Action, ...]
    moved_to: str | None = None

    @property
    def changed(self) -> bool:
        return any(a.changes_files for a in self.actions)

    @property
    def created(self) -> bool:
        return any(a.kind == "create" for a in self.actions) and not self._existed()

    @property
    def deleted(self) -> bool:
        last = [a for a in self.actions if a.changes_files]
        return bool(last) and last[-1].kind == "delete"

    def _existed(self) -> bool:
        for a in self.actions:
            if a.kind == "create":
                return False
            if a.kind in ("read", "edit"):
                return True
        return False


@dataclass
class SessionEvents:
    """Everything the events layer found, in conversation order."""

    kind: SessionKind
    requests: list[Request] = field(default_factory=list)
    injected: list[Injected] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    root: str = ""  # the project directory paths are shown relative to ("" when none)

    @property
    def has_tools(self) -> bool:
        return bool(self.actions)
