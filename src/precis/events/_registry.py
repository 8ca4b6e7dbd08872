"""Tool vocabularies: how a tool call becomes an action, and the registry that holds them.

A vocabulary reads a call (the tool's name, its arguments, its output) and answers a
:class:`~precis.events.model.Draft` or ``None`` ("not one of mine"). The registry asks the
vocabularies in order; the first answer wins. precis's own vocabularies (one module per tool
family under ``precis.events.tools``) register through :func:`register_tools`, the call a
user makes for their own tools; a user's vocabulary goes before the built-in ones, so it can
take over a name. :class:`ToolMap` covers the common case without a class::

    register_tools(ToolMap("crm", {"lookup_customer": ("lookup", "customer_id"),
                                   "refund_order": ("change", "order_id"),
                                   "sh": ("command", "cmd")}))
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from precis.errors import ConfigError
from precis.events.model import ACTION_KINDS, ActionKind, Draft

__all__ = ["Call", "ToolMap", "ToolVocabulary", "parse_arguments", "read_call",
           "register_tools", "vocabularies"]


@dataclass
class Call:
    """One tool call as a vocabulary sees it. ``output`` is the text of its result (None
    when no result came); ``state`` is scratch space shared by the calls of one
    conversation (e.g. the file an editor has open)."""

    tool: str
    args: Mapping[str, Any]
    output: str | None = None
    is_error: bool = False
    state: dict[str, Any] = field(default_factory=dict)

    def arg(self, *names: str) -> str:
        """The first of ``names`` given as a non-empty string (or a number), else ""."""
        for name in names:
            value = self.args.get(name)
            if isinstance(value, str) and value.strip():
                return value
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return str(value)
        return ""


class ToolVocabulary(ABC):
    """Knows some tools (see the module docs). Set ``name``; implement :meth:`read`."""

    name: ClassVar[str] = ""

    @abstractmethod
    def read(self, call: Call) -> Draft | None:
        """The action ``call`` is, or None when the tool is not one of this vocabulary's."""


class ToolMap(ToolVocabulary):
    """A vocabulary from a mapping: tool name -> ``(kind, argument naming the target)``.
    A ``command`` kind reads its target as a shell command (a test run, a commit, ... are
    told apart as for any shell tool)."""

    def __init__(self, name: str, tools: Mapping[str, tuple[str, str]]) -> None:
        if not isinstance(name, str) or not name:
            raise ConfigError("a ToolMap needs a non-empty name")
        checked: dict[str, tuple[ActionKind, str]] = {}
        for tool, spec in tools.items():
            if (not isinstance(spec, tuple) or len(spec) != 2
                    or not all(isinstance(s, str) for s in spec)):
                raise ConfigError(f"tool {tool!r}: expected (kind, argument name), got {spec!r}",
                                  where=f"ToolMap {name!r}")
            if spec[0] not in ACTION_KINDS:
                raise ConfigError(f"tool {tool!r}: unknown kind {spec[0]!r} (expected one of "
                                  f"{', '.join(ACTION_KINDS)})", where=f"ToolMap {name!r}")
            checked[tool] = (spec[0], spec[1])  # type: ignore[assignment]
        self.name = name  # type: ignore[misc]
        self.tools = checked

    def read(self, call: Call) -> Draft | None:
        spec = self.tools.get(call.tool)
        if spec is None:
            return None
        kind, arg = spec
        target = call.arg(arg)
        if kind == "command":
            from precis.events.tools.shell import shell_draft

            return shell_draft(target, call)
        paths = (target,) if kind in ("read", "create", "edit", "delete", "move") and target else ()
        return Draft(kind=kind, target=target, paths=paths,
                     reads_only=kind in ("read", "search", "lookup", "fetch"))


_USER: list[ToolVocabulary] = []
_BUILTIN: list[ToolVocabulary] = []


def register_tools(vocabulary: ToolVocabulary, *, builtin: bool = False) -> ToolVocabulary:
    """Add ``vocabulary``; a user's goes before every built-in one (the latest first)."""
    if not isinstance(vocabulary, ToolVocabulary):
        raise ConfigError(f"expected a ToolVocabulary, got {type(vocabulary).__name__}")
    if builtin:
        _BUILTIN.append(vocabulary)
    else:
        _USER.insert(0, vocabulary)
    return vocabulary


def vocabularies() -> list[ToolVocabulary]:
    """Every registered vocabulary, in the order they are asked."""
    from precis.events import tools  # noqa: F401  (registers the built-in vocabularies)

    return [*_USER, *_BUILTIN]


def parse_arguments(arguments: str) -> dict[str, Any]:
    """A call's JSON arguments as a dict (``{"input": value}`` when they are not an object,
    ``{"input": text}`` when they are not JSON)."""
    text = arguments.strip()
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {"input": arguments}
    return value if isinstance(value, dict) else {"input": value}


def read_call(call: Call) -> Draft:
    """The first vocabulary's answer for ``call`` (``other`` when none knows the tool)."""
    for vocabulary in vocabularies():
        draft = vocabulary.read(call)
        if draft is not None:
            return draft
    return Draft(kind="other", target=call.tool)
