"""What happened in a conversation, read from its structure rather than from cue words.

:func:`extract_events` turns a conversation into its events: the user's real requests (told
apart from content a harness injects into user turns), each tool call as an action of a
family (file read / create / edit / move / delete, shell command with its exit status, test
run with its counts, commit, push, search, todo and plan updates, issue trackers, web
fetches, sub-agents, the lookups and changes of service agents) with what came of it, and
the views built on them: the file ledger, failures paired with their fixes, the task list
as last seen.

Tool calls are read by vocabularies (one module per tool family in
``precis.events.tools``); a user adds their own tools with :func:`register_tools` and a
:class:`ToolVocabulary` or a :class:`ToolMap`, the way formats are registered.
"""

from __future__ import annotations

from precis.events._extract import extract_events
from precis.events._ledger import failures, file_ledger, task_list
from precis.events._registry import Call, ToolMap, ToolVocabulary, register_tools, vocabularies
from precis.events.model import (
    ACTION_KINDS,
    Action,
    ActionKind,
    Draft,
    Failure,
    FileRecord,
    Injected,
    Request,
    SessionEvents,
    TaskItem,
    TestCounts,
)

__all__ = [
    "ACTION_KINDS",
    "Action",
    "ActionKind",
    "Call",
    "Draft",
    "Failure",
    "FileRecord",
    "Injected",
    "Request",
    "SessionEvents",
    "TaskItem",
    "TestCounts",
    "ToolMap",
    "ToolVocabulary",
    "extract_events",
    "failures",
    "file_ledger",
    "register_tools",
    "task_list",
    "vocabularies",
]
