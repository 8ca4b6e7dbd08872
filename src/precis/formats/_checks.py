"""Checks that apply to every parsed conversation, whatever its format."""

from __future__ import annotations

from precis.model import Conversation

__all__ = ["check_tool_pairs"]


def check_tool_pairs(conv: Conversation) -> list[str]:
    """Warnings for tool results without their call and calls without a result.

    Histories cut from the middle of a session have both; they load (later stages repair
    them), and these warnings say where.
    """
    calls: dict[str, int] = {}
    answered: set[str] = set()
    warnings: list[str] = []
    for index, message in enumerate(conv.messages):
        for part in message.parts:
            if part.kind == "tool_call":
                calls[part.id] = index
            elif part.kind == "tool_result":
                if part.call_id not in calls:
                    warnings.append(
                        f"message {index}: tool result for call {part.call_id!r} whose call "
                        "is not in the conversation"
                    )
                answered.add(part.call_id)
    for call_id, index in calls.items():
        if call_id not in answered:
            warnings.append(
                f"message {index}: tool call {call_id!r} has no result in the conversation"
            )
    return warnings
