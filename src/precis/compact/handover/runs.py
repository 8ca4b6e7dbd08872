"""Commands run and what they printed: the commands of the work (not reads, searches,
version-control queries, tracker commands or test runs, whose counts are in what is done),
each kind of run once or twice (its first and last), with the line its output opens with.
A failure is in the errors section instead."""

from __future__ import annotations

import re

from precis.compact.handover._fit import Entry
from precis.compact.handover._story import Story, clip, output_of
from precis.compact.handover.errors import describe_action
from precis.events import Action
from precis.events._ledger import signature

__all__ = ["build_runs", "printed"]

_KINDS = frozenset({"command", "build", "lint", "install"})  # test runs: in what is done
_MAX = 10
_DONE = re.compile(r"\b(?:added|installed|removed|updated|created|generated|compiled|wrote|"
                   r"written|built|copied|deleted|migrated|applied|passed|succeeded|"
                   r"successfully)\b", re.IGNORECASE)


def printed(story: Story, a: Action) -> str:
    """What a run printed: its counts, or its output's first line that is not the shell's."""
    if a.counts is not None:
        return a.counts.describe()
    lines = [ln.strip() for ln in output_of(story.conv, a).splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith(
        ("Exit code", "(Open file", "(Current directory", "bash-$"))]
    # the line that says what was done ("added 1 package"), else the first line
    done = next((ln for ln in lines if _DONE.search(ln)), lines[0] if lines else "")
    return clip(done, 120)


def build_runs(story: Story, key: str) -> list[Entry]:
    runs = [a for a in story.actions if a.kind in _KINDS and a.status == "ok"]
    by_sig: dict[tuple[str, ...], list[Action]] = {}
    for a in runs:
        by_sig.setdefault(signature(a), []).append(a)
    picked = sorted({a.index: a for acts in by_sig.values()
                     for a in (acts[0], acts[-1])}.values(), key=lambda a: a.index)
    total = max(1, len(story.actions))
    out: list[Entry] = []
    for a in picked[-_MAX:]:
        shown = printed(story, a)
        what = describe_action(a, 100)
        variants = tuple(dict.fromkeys((f"{what} → {shown}" if shown else what,
                                        describe_action(a, 50))))
        sources = a.fragments
        if sources:
            out.append(Entry(key, a.index, 3.5 + 1.5 * a.index / total, variants, sources,
                             kind="run", why="a command the agent ran and what it printed"))
    return out
