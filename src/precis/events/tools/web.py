"""Web tools: Claude Code ``WebFetch``, browsers and plain ``fetch`` tools."""

from __future__ import annotations

from precis.events._registry import Call, ToolVocabulary
from precis.events.model import Draft

__all__ = ["WebTools"]

_TOOLS = frozenset({"WebFetch", "fetch", "web_fetch", "fetch_url", "open_url", "browse",
                    "browser", "visit_page", "http_get", "curl_url"})


class WebTools(ToolVocabulary):
    name = "web"

    def read(self, call: Call) -> Draft | None:
        if call.tool not in _TOOLS:
            return None
        return Draft(kind="fetch", target=call.arg("url", "uri", "href", "address"),
                     detail=call.arg("prompt", "goal"), reads_only=True)
