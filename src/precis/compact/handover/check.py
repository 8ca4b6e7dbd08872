"""The handover's own check of what matters (seed 000's quality validation, made about the
handover): every message the user wrote is in it (cited by a line, or kept verbatim), the
current work and the next step are there, and every exact value a line mentions (a path, a
number, an id, a command) is the conversation's own: it appears in the fragments the line
cites."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from precis.compact._facts import exact_facts
from precis.compact.summary import Summary

__all__ = ["HandoverCheck", "check_handover", "own_words_out"]

_SHOWN = 20
# the numbers precis writes itself: "msg 12", "消息 12", "(+3)", "edited 3x", "(2)" steps,
# test counts it adds up ("49 passed")
_OWN_WORDS = re.compile(r"\bmsg \d+(?:, \d+)*|消息 \d+(?:、\d+)*|\(\+\d+\)|\b\d+x\b|\(\d+\)|"
                        r"\b\d+ (?:tests|passed|failed|errors|skipped|lines|rows|times|results|"
                        r"files)\b|\b\d+ of \d+\b|\d+ 行|修改 \d+ 次|失败 \d+ 次")


def own_words_out(text: str) -> str:
    """``text`` without the numbers precis writes itself (message numbers, counts)."""
    return _OWN_WORDS.sub(" ", text)


@dataclass(frozen=True)
class HandoverCheck:
    """What :func:`check_handover` found (``missing_requests``: message indexes)."""

    requests_total: int
    requests_kept: int
    missing_requests: tuple[int, ...]
    current_work: bool
    next_step: bool
    values_total: int
    values_verbatim: int
    unverified: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return (not self.missing_requests and self.current_work and self.next_step
                and self.values_verbatim == self.values_total)

    def to_dict(self) -> dict[str, Any]:
        return {
            "requests_total": self.requests_total,
            "requests_kept": self.requests_kept,
            "missing_requests": list(self.missing_requests),
            "current_work": self.current_work,
            "next_step": self.next_step,
            "values_total": self.values_total,
            "values_verbatim": self.values_verbatim,
            "unverified": list(self.unverified),
            "passed": self.passed,
        }

    def describe(self) -> str:
        yes = {True: "yes", False: "no"}
        return (f"user messages {self.requests_kept}/{self.requests_total} in it, current work "
                f"{yes[self.current_work]}, next step {yes[self.next_step]}, exact values "
                f"{self.values_verbatim}/{self.values_total} verbatim")


def check_handover(summary: Summary | None, requests: dict[int, tuple[str, ...]],
                   kept_messages: Collection[int], fragment_text: dict[str, str],
                   expect_next: bool = True) -> HandoverCheck:
    """Check ``summary`` against the user's messages ``requests`` (message index -> the ids
    of its fragments) of which ``kept_messages`` are in the output verbatim;
    ``fragment_text`` gives each fragment's text. ``expect_next`` is False where there is
    nothing next to tell (a conversation summarized whole, ending in the user's words)."""
    cited: set[str] = summary.sources() if summary else set()
    missing = tuple(m for m, ids in sorted(requests.items())
                    if m not in kept_messages and not cited.intersection(ids))
    items = summary.items if summary else []
    kinds = {item.type for item in items}
    total = verbatim = 0
    unverified: list[str] = []
    for item in items:
        source = "\n".join(fragment_text.get(s, "") for s in item.sources)
        # each value once, in the order the line says them (the result is deterministic)
        for fact in dict.fromkeys(f.text for f in exact_facts(own_words_out(item.text))):
            fact = fact.rstrip("…")
            if not fact:
                continue
            total += 1
            if fact in source:
                verbatim += 1
            elif len(unverified) < _SHOWN:
                unverified.append(fact)
    return HandoverCheck(
        requests_total=len(requests), requests_kept=len(requests) - len(missing),
        missing_requests=missing, current_work=bool(kinds & {"current", "qa", "reply"}),
        next_step="next" in kinds or "open" in kinds or not expect_next,
        values_total=total, values_verbatim=verbatim, unverified=tuple(unverified))
