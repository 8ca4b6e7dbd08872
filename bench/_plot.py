"""Benchmark figures as PNG charts (matplotlib, from the ``bench`` extra).

Each benchmark's JSON payload (what ``--json`` writes) names itself in ``"benchmark"``; a
chart maker registered for that name turns the payload into a :class:`Chart` (plain data:
titles, axes, series), and :func:`draw` renders any chart with matplotlib. So a script's
``--plot OUT.png`` and ``bench/plot.py RESULT.json`` draw the same picture from the same
figures, and the data a chart shows can be tested without looking at pixels.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

INSTALL_HINT = "pip install -e '.[bench]'"


@dataclass
class Series:
    label: str
    x: list[float]
    y: list[float]


@dataclass
class Chart:
    """A line chart (numeric x) or grouped bars (``groups`` name the x positions)."""

    title: str
    xlabel: str
    ylabel: str
    series: list[Series]
    groups: list[str] = field(default_factory=list)  # bars: one label per x position
    logx: bool = False
    logy: bool = False
    target: float | None = None  # a horizontal dashed line
    target_label: str = ""
    note: str = ""  # a line under the title

    @property
    def bars(self) -> bool:
        return bool(self.groups)


ChartMaker = Callable[[dict[str, Any]], Chart]
CHARTS: dict[str, ChartMaker] = {}


def chart(name: str) -> Callable[[ChartMaker], ChartMaker]:
    """Register the chart maker of the benchmark called ``name``."""

    def register(fn: ChartMaker) -> ChartMaker:
        CHARTS[name] = fn
        return fn

    return register


def chart_for(payload: dict[str, Any]) -> Chart:
    name = payload.get("benchmark")
    if name not in CHARTS:
        known = ", ".join(sorted(CHARTS))
        raise ValueError(f"no chart for benchmark {name!r} (charts: {known})")
    return CHARTS[name](payload)


def plot(payload: dict[str, Any], path: Path | None) -> None:
    """Draw the chart of ``payload`` to ``path`` (nothing when ``path`` is None)."""
    if path is None:
        return
    draw(chart_for(payload), path)
    print(f"wrote {path}")


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise SystemExit(f"charts need matplotlib: {INSTALL_HINT}") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def draw(c: Chart, path: Path) -> None:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8.5, 4.2), dpi=110)
    if c.bars:
        n = max(len(c.series), 1)
        width = 0.8 / n
        for i, s in enumerate(c.series):
            xs = [x + (i - (n - 1) / 2) * width for x in s.x]
            bars = ax.bar(xs, s.y, width, label=s.label)
            ax.bar_label(bars, labels=[_short(v) for v in s.y], fontsize=7, padding=1)
        ax.set_xticks(range(len(c.groups)), c.groups)
    else:
        for s in c.series:
            ax.plot(s.x, s.y, marker="o", label=s.label)
        if c.logx:
            ax.set_xscale("log")
    if c.logy:
        ax.set_yscale("log")
    if c.target is not None:
        ax.axhline(c.target, color="0.35", linestyle="--", linewidth=1,
                   label=c.target_label or f"target {_short(c.target)}")
    ax.set_title(c.title + (f"\n{c.note}" if c.note else ""), fontsize=10)
    ax.set_xlabel(c.xlabel)
    ax.set_ylabel(c.ylabel)
    ax.grid(True, alpha=0.3, which="both" if c.logx or c.logy else "major")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the plot
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    # no "Software" (matplotlib version) in the file: the same figures give the same bytes
    fig.savefig(path, format="png", metadata={"Software": None})
    plt.close(fig)


def _short(v: float) -> str:
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.1f}" if abs(v) >= 1 else f"{v:.3g}"


def _by(rows: Sequence[dict[str, Any]], key: str) -> dict[Any, list[dict[str, Any]]]:
    out: dict[Any, list[dict[str, Any]]] = {}
    for row in rows:
        out.setdefault(row[key], []).append(row)
    return out


# ------------------------------------------------------------------- the charts


@chart("compress_speed")
def _compress_speed(p: dict[str, Any]) -> Chart:
    sizes = sorted(p["sizes"], key=lambda f: f["tokens"])
    return Chart(
        title="Compaction speed: load + compress + JSON",
        note=f"level {p.get('level')}, {p.get('tokenizer')}, best of {p.get('repeat')}, one core",
        xlabel="session tokens", ylabel="ms", logx=True, logy=True,
        series=[Series("precis", [f["tokens"] for f in sizes],
                       [f["seconds"] * 1000 for f in sizes])],
        target=200.0, target_label="target at 200k tokens: 200 ms")


@chart("compress_locomo")
def _compress_locomo(p: dict[str, Any]) -> Chart:
    rows = [r for r in p["results"] if r["method"] != "full"]
    shares = sorted({r["share"] for r in rows}, reverse=True)
    full = [r["retention"] for r in p["results"] if r["method"] == "full"]
    series = []
    for method, runs in _by(rows, "method").items():
        at = {r["share"]: r["retention"] for r in runs}
        series.append(Series(method, [float(i) for i, s in enumerate(shares) if s in at],
                             [100 * at[s] for s in shares if s in at]))
    return Chart(
        title="LoCoMo answer retention after compaction",
        note=f"{p.get('questions')} questions; answer words present in the output",
        xlabel="budget (share of the conversation's tokens)", ylabel="questions retained %",
        groups=[f"{s:.0%}" for s in shares], series=series,
        target=100 * full[0] if full else None, target_label="uncompressed (ceiling)")


@chart("memory_locomo")
def _memory_locomo(p: dict[str, Any]) -> Chart:
    ks = p.get("ks") or [5, 10, 25]
    return Chart(
        title="LoCoMo evidence recall of memory search",
        note=f"{p.get('questions')} questions of categories 1-4",
        xlabel="", ylabel="evidence recall %", groups=[f"recall@{k}" for k in ks],
        series=[Series(r["system"], [float(i) for i in range(len(ks))],
                       [100 * r[f"recall@{k}"] for k in ks]) for r in p["results"]],
        target=75.0, target_label="target recall@10: 75")


@chart("memory_latency")
def _memory_latency(p: dict[str, Any]) -> Chart:
    series = []
    for system, runs in _by(p["results"], "system").items():
        runs = sorted(runs, key=lambda r: r["cards"])
        series.append(Series(f"{system} p95", [r["cards"] for r in runs],
                             [r["search_ms_p95"] for r in runs]))
    return Chart(
        title="Memory search latency vs store size",
        note=f"p95 of single queries, top 10, {p.get('threads', 1)} thread(s)",
        xlabel="cards in the store", ylabel="search p95 ms", logx=True, logy=True,
        series=series, target=50.0, target_label="target at 1M cards: 50 ms")


@chart("handover")
def _handover(p: dict[str, Any]) -> Chart:
    """Share of checklist items a blind reader answered, per kind of session and in all,
    for each system and budget (the mean of its reader runs, items pooled per run)."""
    kinds: dict[str, str] = p.get("kinds") or {}
    report: dict[str, list[dict[str, Any]]] = p["report"]
    sessions = sorted({s for runs in report.values() for r in runs for s in r["sessions"]})
    groups = sorted({kinds.get(s, "?") for s in sessions})
    names = {g: [s for s in sessions if kinds.get(s, "?") == g] for g in groups}
    # the sessions every system has (those with a reference summary), as a group of its own
    common = sorted(set.intersection(*({s for r in runs for s in r["sessions"]}
                                       for runs in report.values())))
    if common and len(common) < len(sessions):
        groups.insert(0, f"{len(common)} with\na reference")
        names[groups[0]] = common
    names["all"] = sessions
    series = []
    for key in sorted(report):
        xs, ys = [], []
        for i, g in enumerate([*groups, "all"]):
            shares = []
            for run in report[key]:
                got = [run["sessions"][n] for n in names[g] if n in run["sessions"]]
                if got and len(got) == len(names[g]):
                    shares.append(100 * sum(x["passed"] for x in got)
                                  / max(1, sum(x["items"] for x in got)))
            if shares:
                xs.append(float(i))
                ys.append(sum(shares) / len(shares))
        same = next((x for x in series if x.label.split("-")[0] == key.split("-")[0]
                     and (x.x, [round(v, 1) for v in x.y]) == (xs, [round(v, 1) for v in ys])),
                    None)
        if same is not None:  # one context at every budget (a reference summary): one bar
            same.label = f"{key.split('-')[0]} (the same at every budget)"
        elif xs:
            series.append(Series(key, xs, ys))
    return Chart(
        title="Handover: what a new agent can answer from the compacted context",
        note="share of checklist items a blind reader answered; mean of the reader runs",
        xlabel="", ylabel="items answered %", groups=[*groups, "all"], series=series,
        target=70.0, target_label="target at 1x: 70%")
