"""Progress of long work on standard error: a rich bar on a terminal, and on a pipe or a
log file a plain line now and then (at most one every ``interval`` seconds, and the last
one), so a job run by a script still says how far it is."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import click

__all__ = ["PipeProgress", "progress_printer"]


class PipeProgress:
    """``report(done, total)`` prints ``precis: <label> <done>/<total>`` to stderr at a low
    rate: once ``interval`` seconds have passed since it was made, then at most once per
    ``interval``, and the last call (``done == total``) when it printed before. Work that
    ends within ``interval`` prints nothing."""

    def __init__(self, label: str, interval: float = 5.0) -> None:
        self.label = label
        self.interval = interval
        self._last = time.monotonic()
        self._printed = False

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done >= total:
            if not self._printed:
                return
        elif now - self._last < self.interval:
            return
        self._last = now
        self._printed = True
        click.echo(f"precis: {self.label} {done:,}/{total:,}", err=True)


def progress_printer(label: str, *, quiet: bool = False) -> Callable[[int, int], None] | None:
    """A :class:`PipeProgress` when stderr is not a terminal (there a rich bar shows it),
    ``None`` when ``quiet`` or on a terminal."""
    if quiet or sys.stderr.isatty():
        return None
    return PipeProgress(label)
