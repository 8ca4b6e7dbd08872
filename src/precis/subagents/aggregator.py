"""``ResultAggregator``: collect sub-task results from many threads, report them in order.

Seed 003's aggregator appended to a plain list from every thread, ordered results by
whichever thread finished first, counted only "completed" and "failed", ignored each
task's own text, cut its forms past their limit ("...(已截断)" after ``max_chars``), and
repeated a finding once per sub-agent that reported it. Here:

* ``add`` is guarded by a :class:`threading.Lock`; every view works on a copy taken under
  the lock, so readers never see a half-added result.
* Order never depends on thread timing: tasks declared with ``expected`` / :meth:`expect`
  come in that order, any others by task id (``task-2`` before ``task-10``).
* Failed, timed-out and still-missing tasks are counted in every form's first line and
  listed as HIGH lines, never dropped silently.
* The same finding from several tasks is merged (precis' duplicate detection).
* :meth:`normal` (2000 characters) and :meth:`compact` (500) never exceed their budget.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from precis.errors import InputError
from precis.subagents._checks import check_max_chars, check_text
from precis.subagents._forms import compact_form, normal_form
from precis.subagents._merge import Entry, MergedMark, merge_marks
from precis.subagents._text import natural_key
from precis.subagents.results import TaskResult

__all__ = ["COMPACT_CHARS", "NORMAL_CHARS", "MergedMark", "ResultAggregator"]

NORMAL_CHARS = 2000
"""Budget of the normal form (seed 003 常形态), in characters."""
COMPACT_CHARS = 500
"""Budget of the compact form (seed 003 缩形态), in characters."""


class ResultAggregator:
    """Thread-safe collection of :class:`~precis.subagents.results.TaskResult`.

    ``expected`` names the tasks in submission order (declare them before fanning out);
    a declared task without a result is reported as pending. ``merge_duplicates`` merges
    the same finding reported by several tasks.
    """

    def __init__(
        self,
        expected: Iterable[str] = (),
        *,
        normal_chars: int = NORMAL_CHARS,
        compact_chars: int = COMPACT_CHARS,
        merge_duplicates: bool = True,
    ) -> None:
        self._normal_chars = check_max_chars(normal_chars, "normal_chars")
        self._compact_chars = check_max_chars(compact_chars, "compact_chars")
        if not isinstance(merge_duplicates, bool):
            raise InputError(f"expected True or False, got {merge_duplicates!r}",
                             where="merge_duplicates")
        self._merge = merge_duplicates
        self._lock = threading.Lock()
        self._order: dict[str, int] = {}
        self._results: dict[str, TaskResult] = {}
        if isinstance(expected, str):
            raise InputError("expected a sequence of task ids, got one string",
                             where="expected")
        for task_id in expected:
            self.expect(task_id)

    def expect(self, task_id: str) -> None:
        """Declare a task (its place in the output is the order of declaration)."""
        check_text(task_id, "task_id", allow_empty=False)
        with self._lock:
            self._order.setdefault(task_id, len(self._order))

    def add(self, result: TaskResult) -> None:
        """Record one task's result; a task reports once (a second result is an error)."""
        if not isinstance(result, TaskResult):
            raise InputError(f"expected a TaskResult, got {type(result).__name__}",
                             where="result")
        with self._lock:
            if result.task_id in self._results:
                raise InputError(f"task {result.task_id!r} already reported a result",
                                 where="result.task_id")
            self._results[result.task_id] = result

    add_result = add  # seed 003's name

    def __len__(self) -> int:
        with self._lock:
            return len(self._results)

    def _state(self) -> tuple[tuple[str, TaskResult | None], ...]:
        """Every task in output order with its result (``None``: declared, not reported),
        all read under the lock at once."""
        with self._lock:
            order = dict(self._order)
            results = dict(self._results)
        declared = sorted(order, key=order.__getitem__)
        others = sorted((t for t in results if t not in order),
                        key=lambda t: (natural_key(t), t))
        return tuple((t, results.get(t)) for t in [*declared, *others])

    def results(self) -> tuple[TaskResult, ...]:
        """The results so far, in output order."""
        return tuple(r for _, r in self._state() if r is not None)

    def pending(self) -> tuple[str, ...]:
        """Declared tasks that have not reported yet, in declaration order."""
        return tuple(t for t, r in self._state() if r is None)

    @staticmethod
    def _findings(results: Iterable[TaskResult], merge: bool) -> list[MergedMark]:
        entries = [Entry(r.task_id, m.text, m.level, m.category, m.source)
                   for r in results for m in r.marks if m.text.strip()]
        return merge_marks(entries, merge=merge)

    def findings(self) -> tuple[MergedMark, ...]:
        """Every task's marks, duplicates merged, in output order."""
        return tuple(self._findings(self.results(), self._merge))

    def high_only(self) -> tuple[MergedMark, ...]:
        """The HIGH findings, after one HIGH entry per failed, timed-out or pending task
        (category ``failed`` / ``timeout`` / ``pending``) in task order."""
        slots = self._state()
        problems = [
            MergedMark(f"{t} pending: no result yet", "HIGH", "pending", (), (t,)) if r is None
            else MergedMark(_problem(r), "HIGH", r.status, (r.agent,) if r.agent else (), (t,))
            for t, r in slots if r is None or not r.ok
        ]
        done = [r for _, r in slots if r is not None]
        found = [f for f in self._findings(done, self._merge) if f.level == "HIGH"]
        return (*problems, *found)

    def normal(self, max_chars: int | None = None) -> str:
        """The normal form (seed 003 常形态): every task's status and all findings by
        level, within ``max_chars`` (default 2000)."""
        budget = self._normal_chars if max_chars is None else check_max_chars(max_chars)
        slots = self._state()
        done = [r for _, r in slots if r is not None]
        return normal_form(slots, self._findings(done, self._merge), budget)

    def compact(self, max_chars: int | None = None) -> str:
        """The compact form (seed 003 缩形态): counts, what did not succeed, and the HIGH
        findings only, within ``max_chars`` (default 500)."""
        budget = self._compact_chars if max_chars is None else check_max_chars(max_chars)
        slots = self._state()
        done = [r for _, r in slots if r is not None]
        return compact_form(slots, self._findings(done, self._merge), budget)

def _problem(result: TaskResult) -> str:
    said = " ".join((result.error or result.text).split())
    return f"{result.task_id} {result.status}" + (f": {said}" if said else "")
