"""``TaskResult``: what one sub-task reported back (status, text, marks, timing)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from precis.errors import InputError
from precis.subagents._checks import check_text
from precis.subagents.marks import Mark

__all__ = ["STATUSES", "Status", "TaskResult"]

Status = Literal["ok", "failed", "timeout"]
STATUSES: tuple[Status, ...] = ("ok", "failed", "timeout")


@dataclass(frozen=True)
class TaskResult:
    """One sub-task's outcome.

    ``status`` is ``ok``, ``failed`` or ``timeout``; ``text`` is the sub-agent's answer
    (or what it had when it stopped); ``error`` says why it failed; ``marks`` are its
    marked findings; ``elapsed`` is its run time in seconds; ``agent`` names the sub-agent.
    """

    task_id: str
    status: Status = "ok"
    text: str = ""
    marks: tuple[Mark, ...] = ()
    elapsed: float | None = None
    error: str | None = None
    agent: str = ""

    def __post_init__(self) -> None:
        check_text(self.task_id, "task_id", allow_empty=False)
        if self.status not in STATUSES:
            raise InputError(
                f"unknown status {self.status!r} (expected {', '.join(STATUSES)})",
                where=f"task {self.task_id}.status",
            )
        check_text(self.text, f"task {self.task_id}.text")
        marks = self.marks
        if isinstance(marks, (str, bytes)) or not isinstance(marks, Iterable):
            raise InputError(f"expected a sequence of Mark, got {marks!r}",
                             where=f"task {self.task_id}.marks")
        marks = tuple(marks)
        for i, m in enumerate(marks):
            if not isinstance(m, Mark):
                raise InputError(f"expected a Mark, got {type(m).__name__}",
                                 where=f"task {self.task_id}.marks[{i}]")
        object.__setattr__(self, "marks", marks)
        e = self.elapsed
        if e is not None and (isinstance(e, bool) or not isinstance(e, (int, float))
                              or not math.isfinite(e) or e < 0):
            raise InputError(f"elapsed must be a number of seconds >= 0, got {e!r}",
                             where=f"task {self.task_id}.elapsed")
        if self.error is not None:
            check_text(self.error, f"task {self.task_id}.error")
        check_text(self.agent, f"task {self.task_id}.agent")

    @property
    def ok(self) -> bool:
        return self.status == "ok"
