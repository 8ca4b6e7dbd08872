"""Sub-agent tools: Claude Code ``Task`` / ``Agent``, and ``dispatch_agent`` /
``spawn_agent``-like tools; the target is the task given, the detail its agent type."""

from __future__ import annotations

from precis.events._registry import Call, ToolVocabulary
from precis.events.model import Draft

__all__ = ["AgentTools"]

_TOOLS = frozenset({"Task", "Agent", "dispatch_agent", "spawn_agent", "delegate_task",
                    "run_subagent", "call_agent", "subagent"})


class AgentTools(ToolVocabulary):
    name = "agents"

    def read(self, call: Call) -> Draft | None:
        if call.tool not in _TOOLS:
            return None
        task = call.arg("description", "task", "title") or call.arg("prompt")[:160]
        return Draft(kind="subagent", target=task, detail=call.arg("subagent_type", "agent"))
