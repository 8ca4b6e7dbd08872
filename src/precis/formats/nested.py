"""Conversations nested inside other JSON: eval reports, trajectory dumps, datasets.

The generic collection reader, for files no specific format claims: it walks the JSON tree
(iteratively, at most :data:`MAX_DEPTH` levels deep) and takes every list whose items look
like chat messages (objects with ``role`` and ``content``) as one conversation. Examples:
a tau-bench dump (a list of ``{"task_id", "traj": [OpenAI messages]}``) or an eval report
(``results[].trace.messages`` in Anthropic block shape).

Each list is read as OpenAI messages, or as Anthropic messages when it has Anthropic-only
markers (role ``tool_result``, ``tool_use`` / ``tool_result`` / ``thinking`` blocks). The id
comes from the nearest ``id`` / ``task_id`` / ``instance_id`` ... of the enclosing objects
(or their ``task`` / ``instance`` / ``info`` / ``metadata`` children), the title from a
nearby ``title`` / ``description`` / ``prompt`` / ``instruction``. Repeated ids get ``#2``,
``#3``, ... so each stays selectable. ``metadata["path"]`` says where the list was.

Its sniff score (0.2) is below every specific format, so it only wins when nothing else
matches.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from precis.errors import FormatError
from precis.formats._reader import Document
from precis.formats.base import ConversationFormat
from precis.formats.openai import OPENAI_ROLES, optional_id, parse_openai_messages, text_field
from precis.model import Conversation, Message, Text

__all__ = ["FORMATS", "MAX_DEPTH", "FoundMessages", "NestedFormat", "find_message_lists"]

MAX_DEPTH = 12
"""How deep (in JSON levels) the reader looks for message lists."""

SNIFF_SCORE = 0.2
_SNIFF_BUDGET = 5000  # JSON containers visited at most while sniffing
_SAMPLE = 5
_ROLES = frozenset({*OPENAI_ROLES, "tool_result"})
_ANTHROPIC_BLOCKS = frozenset(
    {"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use"}
)
_ID_KEYS = (
    "id",
    "task_id",
    "instance_id",
    "conversation_id",
    "session_id",
    "sample_id",
    "example_id",
    "question_id",
)
_TITLE_KEYS = (
    "title",
    "description",
    "prompt",
    "instruction",
    "problem_statement",
    "question",
)
_CONTEXT_CHILDREN = ("task", "instance", "info", "metadata", "sample")
_CONTEXT_LEVELS = 3
_TITLE_CHARS = 100

@dataclass(frozen=True)
class FoundMessages:
    """A message list found in the tree: the list, where it is, and its enclosing objects.

    ``path`` holds the keys / indexes from the root; ``ancestors`` the enclosing objects,
    nearest first (at most :data:`_CONTEXT_LEVELS` + 1).
    """

    items: list[Any]
    path: tuple[str | int, ...]
    ancestors: tuple[dict[str, Any], ...]


def _is_message(item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    role = item.get("role")
    if not isinstance(role, str) or role not in _ROLES:
        return False
    return "content" in item or "tool_calls" in item or "function_call" in item


def _looks_like_messages(node: list[Any]) -> bool:
    """The first item is a chat message and so are most of the first few.

    A list that starts like a conversation but holds a broken item is still taken, so the
    reader can name the bad message instead of silently skipping the conversation.
    """
    if not node or not _is_message(node[0]):
        return False
    sample = node[:_SAMPLE]
    return 2 * sum(1 for item in sample if _is_message(item)) >= len(sample)


def find_message_lists(
    root: Any, *, max_depth: int = MAX_DEPTH, budget: int | None = None, first: bool = False
) -> list[FoundMessages]:
    """Every message list in ``root`` (document order), looking ``max_depth`` levels deep.

    Iterative (no recursion). ``budget`` caps how many containers are visited; ``first``
    stops at the first list found (for sniffing).
    """
    found: list[FoundMessages] = []
    stack: list[tuple[Any, tuple[str | int, ...], tuple[dict[str, Any], ...]]] = [
        (root, (), ())
    ]
    visited = 0
    while stack:
        node, path, ancestors = stack.pop()
        visited += 1
        if budget is not None and visited > budget:
            break
        if isinstance(node, list):
            if _looks_like_messages(node):
                found.append(FoundMessages(node, path, ancestors))
                if first:
                    break
                continue
            if len(path) >= max_depth:
                continue
            for index in range(len(node) - 1, -1, -1):
                child = node[index]
                if isinstance(child, (list, dict)):
                    stack.append((child, (*path, index), ancestors))
        elif isinstance(node, dict):
            if len(path) >= max_depth:
                continue
            inner = (node, *ancestors)[: _CONTEXT_LEVELS + 1]
            for key in reversed(list(node)):
                child = node[key]
                if isinstance(child, (list, dict)):
                    stack.append((child, (*path, str(key)), inner))
    return found


def _format_path(path: tuple[str | int, ...]) -> str:
    text = ""
    for segment in path:
        text += f"[{segment}]" if isinstance(segment, int) else (f".{segment}" if text else segment)
    return text or "(root)"


def _context(found: FoundMessages) -> Iterator[dict[str, Any]]:
    """The enclosing objects, nearest first, each followed by its context children."""
    for ancestor in found.ancestors[:_CONTEXT_LEVELS]:
        yield ancestor
        for key in _CONTEXT_CHILDREN:
            child = ancestor.get(key)
            if not isinstance(child, dict):
                continue
            yield child
            for key2 in _CONTEXT_CHILDREN:
                grandchild = child.get(key2)
                if isinstance(grandchild, dict):
                    yield grandchild


def _first_line(text: str) -> str | None:
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= _TITLE_CHARS else line[: _TITLE_CHARS - 1] + "…"
    return None


def _identity(found: FoundMessages) -> tuple[str | None, str | None]:
    """(id, title) from the objects around the list."""
    conv_id = title = None
    for context in _context(found):
        if conv_id is None:
            for key in _ID_KEYS:
                conv_id = optional_id(context.get(key))
                if conv_id is not None:
                    break
        if title is None:
            for key in _TITLE_KEYS:
                value = context.get(key)
                if isinstance(value, str):
                    title = _first_line(value)
                    if title:
                        break
        if conv_id is not None and title is not None:
            break
    return conv_id, title


def _system(found: FoundMessages) -> Any:
    """A system prompt kept next to the list (``system``, or ``task.system`` one level up)."""
    for ancestor in found.ancestors[:2]:
        task = ancestor.get("task")
        for holder in (ancestor, task if isinstance(task, dict) else {}):
            value = holder.get("system")
            if isinstance(value, (str, list)) and value:
                return value
    return None


def _is_anthropic(items: list[Any]) -> bool:
    for item in items:
        if not isinstance(item, dict):
            continue
        if item.get("role") == "tool_result":
            return True
        content = item.get("content")
        if isinstance(content, list):
            for block in content:
                kind = text_field(block) if isinstance(block, dict) else None
                if kind in _ANTHROPIC_BLOCKS or (kind == "image" and "source" in block):
                    return True
    return False


def _where(doc: Document, path: tuple[str | int, ...]) -> str:
    if doc.kind == "jsonl" and path and isinstance(path[0], int):
        rest = _format_path(path[1:]) if len(path) > 1 else ""
        return f"{doc.where(path[0])}{f' at {rest}' if rest else ''}"
    return f"{doc.source} at {_format_path(path)}"


def _read(found: FoundMessages, where: str) -> tuple[list[Message], str]:
    """The list's messages and the shape they were read as (``openai`` / ``anthropic``)."""
    system = _system(found)
    if _is_anthropic(found.items):
        from precis.formats.anthropic import parse_anthropic_messages

        return parse_anthropic_messages(found.items, where, system=system), "anthropic"
    messages = parse_openai_messages(found.items, where)
    if isinstance(system, str) and not any(m.role == "system" for m in messages):
        messages.insert(0, Message("system", [Text(system)], metadata={"from_key": "system"}))
    return messages, "openai"


class NestedFormat(ConversationFormat):
    """Message lists nested anywhere in a JSON document (one conversation per list)."""

    name = "nested"
    description = "Chat message lists nested in other JSON (eval reports, trajectory dumps)"

    def sniff(self, doc: Document) -> float:
        if doc.kind == "text" or not isinstance(doc.value, (list, dict)):
            return 0.0
        found = find_message_lists(doc.value, budget=_SNIFF_BUDGET, first=True)
        # A top-level message list is a plain conversation: the specific formats take it.
        return SNIFF_SCORE if found and found[0].path else 0.0

    def parse(self, doc: Document) -> list[Conversation]:
        value = doc.value
        if doc.kind == "text" or not isinstance(value, (list, dict)):
            raise FormatError("expected JSON or JSON Lines", where=doc.source)
        found = find_message_lists(value)
        if not found:
            raise FormatError(
                f"no list of chat messages (objects with role and content) within "
                f"{MAX_DEPTH} levels",
                where=doc.source,
            )
        conversations: list[Conversation] = []
        seen: dict[str, int] = {}
        for item in found:
            messages, shape = _read(item, _where(doc, item.path))
            conv_id, title = _identity(item)
            if conv_id is not None:
                seen[conv_id] = seen.get(conv_id, 0) + 1
                if seen[conv_id] > 1:
                    conv_id = f"{conv_id}#{seen[conv_id]}"
            metadata: dict[str, Any] = {"path": _format_path(item.path), "message_format": shape}
            if item.ancestors:
                for key, val in item.ancestors[0].items():
                    if val is None or isinstance(val, (str, int, float, bool)):
                        metadata.setdefault(str(key), val)
            conversations.append(
                Conversation(
                    messages,
                    id=conv_id,
                    source_format=self.name,
                    title=title,
                    metadata=metadata,
                )
            )
        return conversations


FORMATS = (NestedFormat(),)
