"""``ContextConfig``: when the runtime compacts and how hard (seed 004's parameters)."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from precis.errors import ConfigError

__all__ = ["ContextConfig"]


@dataclass(frozen=True)
class ContextConfig:
    """Seed 004's settings with its defaults, checked on construction.

    * ``msg_threshold``: compact when the working context holds this many messages.
    * ``max_tokens``: the model's context window; ``token_ratio`` of it is the budget the
      working context is kept under (compaction starts when it is reached).
    * ``last_keep``: recent messages the light strategies (1, 2) leave alone.
    * ``large_payload``: a message longer than this many characters is "large".
    * ``preview_chars``: characters of an offloaded message left in place as its preview.
    * ``min_consecutive_tool``: shortest run of tool messages strategy 1 compresses.
    * ``current_round_ratio``: the share of its size the current round is cut to (6).
    """

    msg_threshold: int = 100
    max_tokens: int = 128 * 1024
    token_ratio: float = 0.75
    last_keep: int = 50
    large_payload: int = 5 * 1024
    preview_chars: int = 200
    min_consecutive_tool: int = 6
    current_round_ratio: float = 0.3

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.type == "float":
                if isinstance(value, bool) or not isinstance(value, (int, float)) \
                        or not math.isfinite(value) or not 0.0 < value <= 1.0:
                    raise ConfigError(f"expected a number in (0, 1], got {value!r}",
                                      where=f"context.{f.name}")
            elif isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"expected a whole number >= 1, got {value!r}",
                                  where=f"context.{f.name}")
        if self.budget < 64:
            raise ConfigError(
                f"max_tokens x token_ratio is {self.budget} tokens; at least 64 are needed",
                where="context.max_tokens",
            )

    @property
    def budget(self) -> int:
        """The token budget of the working context: ``max_tokens * token_ratio``."""
        return int(self.max_tokens * self.token_ratio)
