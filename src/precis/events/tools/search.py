"""Search tools: Claude Code ``Grep`` / ``Glob`` / ``WebSearch``, SWE-agent ``find_file`` /
``search_dir`` / ``search_file``, and plain ``grep`` / ``file_search`` / ``web_search``."""

from __future__ import annotations

from precis.events._registry import Call, ToolVocabulary
from precis.events.model import Draft

__all__ = ["SearchTools"]

_TOOLS = frozenset({"Grep", "Glob", "WebSearch", "find_file", "search_dir", "search_file",
                    "grep", "glob", "file_search", "codebase_search", "grep_search",
                    "web_search", "search_files", "find_files", "ripgrep", "search"})
_QUERY = ("pattern", "query", "search_term", "file_name", "regex", "q", "keyword",
          "search_query")
_WHERE = ("path", "dir", "directory", "file", "glob", "include")


class SearchTools(ToolVocabulary):
    name = "search"

    def read(self, call: Call) -> Draft | None:
        if call.tool not in _TOOLS:
            return None
        query = call.arg(*_QUERY)
        where = call.arg(*_WHERE)
        detail = f"in {where}" if where else ""
        return Draft(kind="search", target=query, detail=detail, reads_only=True)
