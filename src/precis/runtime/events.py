"""What each compaction step did, for the event log."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["STRATEGIES", "CompressionEvent"]

# seed 004's progressive order, lightest first; "fit" is precis's last resort
STRATEGIES = (
    "tool_runs",            # 1: compress runs of historical tool calls
    "offload_protected",    # 2: offload large messages, recent ones protected
    "offload",              # 3: offload large messages, only the latest reply protected
    "summarize_rounds",     # 4: summarize the rounds before the latest reply
    "current_large",        # 5: summarize large messages of the current round
    "current_round",        # 6: compress the current round
    "fit",                  # precis: compress the whole working context to the budget
)


@dataclass(frozen=True)
class CompressionEvent:
    """One strategy applied: when, on what, and what it saved."""

    strategy: str
    at: str
    messages_before: int
    messages_after: int
    tokens_before: int
    tokens_after: int
    replaced: int  # working messages replaced or rewritten
    before_id: str | None  # id of the message just before the rewritten range
    after_id: str | None  # id of the message just after it
    offload_ids: tuple[str, ...] = ()
    used_llm: bool = False
    llm_tokens: int = 0
    llm_error: str | None = None
    elapsed_ms: float = 0.0
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    trigger: str = ""  # why the compaction ran: "messages 100 >= 100", "tokens ...",
    # or "request: <the user's words>" (seed 002's explicit trigger)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["offload_ids"] = list(self.offload_ids)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CompressionEvent:
        return cls(**{**data, "offload_ids": tuple(data.get("offload_ids", ()))})
