"""Benchmark charts: what each chart shows is the benchmark's own figures; PNGs are drawn."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from _plot import CHARTS, chart_for, draw, plot

BENCH = Path(__file__).resolve().parents[2] / "bench"

SPEED = {"benchmark": "compress_speed", "tokenizer": "o200k_base", "level": "normal",
         "repeat": 3, "sizes": [{"tokens": 200_000, "seconds": 0.6},
                                {"tokens": 10_000, "seconds": 0.03}]}
LOCOMO = {"benchmark": "compress_locomo", "questions": 761, "results": [
    {"share": 1.0, "method": "full", "retention": 0.786},
    {"share": 0.25, "method": "precis", "retention": 0.643},
    {"share": 0.1, "method": "precis", "retention": 0.403},
    {"share": 0.25, "method": "keep_recent", "retention": 0.26},
    {"share": 0.1, "method": "keep_recent", "retention": 0.133}]}
RECALL = {"benchmark": "memory_locomo", "ks": [5, 10], "questions": 760, "results": [
    {"system": "bm25", "recall@5": 0.482, "recall@10": 0.562},
    {"system": "precis", "recall@5": 0.673, "recall@10": 0.754}]}
LATENCY = {"benchmark": "memory_latency", "threads": 1, "results": [
    {"system": "precis", "cards": 100_000, "search_ms_p95": 3.1},
    {"system": "precis", "cards": 10_000, "search_ms_p95": 1.8},
    {"system": "mem0", "cards": 10_000, "search_ms_p95": 247.0}]}

HANDOVER = {"benchmark": "handover", "kinds": {"a": "chat-zh", "b": "chat-zh", "c": "tau"},
            "report": {
    "precis-1x": [{"run": "precis-1x-a", "sessions": {
        "a": {"passed": 3, "items": 4}, "b": {"passed": 1, "items": 6},
        "c": {"passed": 5, "items": 10}}},
                  {"run": "precis-1x-b", "sessions": {
        "a": {"passed": 4, "items": 4}, "b": {"passed": 2, "items": 6},
        "c": {"passed": 5, "items": 10}}}],
    "reference-1x": [{"run": "reference-1x-a", "sessions": {
        "c": {"passed": 8, "items": 10}}}],
    "reference-2x": [{"run": "reference-2x-a", "sessions": {
        "c": {"passed": 8, "items": 10}}}]}}


def test_speed_chart_is_ms_against_tokens_in_size_order() -> None:
    chart = chart_for(SPEED)
    assert [(s.label, s.x, s.y) for s in chart.series] == [
        ("precis", [10_000, 200_000], [30.0, 600.0])]
    assert chart.target == 200.0 and chart.logx and chart.logy


def test_locomo_chart_groups_methods_by_budget_with_the_ceiling() -> None:
    chart = chart_for(LOCOMO)
    assert chart.groups == ["25%", "10%"]
    assert {s.label: [round(v, 1) for v in s.y] for s in chart.series} == {
        "precis": [64.3, 40.3], "keep_recent": [26.0, 13.3]}
    assert chart.target == pytest.approx(78.6)


def test_recall_and_latency_charts() -> None:
    recall = chart_for(RECALL)
    assert recall.groups == ["recall@5", "recall@10"]
    assert [s.y for s in recall.series] == [pytest.approx([48.2, 56.2]),
                                            pytest.approx([67.3, 75.4])]
    latency = chart_for(LATENCY)
    assert [(s.label, s.x, s.y) for s in latency.series] == [
        ("precis p95", [10_000, 100_000], [1.8, 3.1]), ("mem0 p95", [10_000], [247.0])]


def test_handover_chart_pools_items_per_kind_and_averages_the_runs() -> None:
    chart = chart_for(HANDOVER)
    # session c is the one every system has (the reference covers only c)
    assert chart.groups == ["1 with\na reference", "chat-zh", "tau", "all"]
    # precis: c 50; chat-zh (4 of 10, then 6 of 10) -> 50; tau 50; all (9 of 20, 11 of 20)
    # -> 50; the reference: c and tau only
    assert {s.label: (s.x, [round(v, 1) for v in s.y]) for s in chart.series} == {
        "precis-1x": ([0.0, 1.0, 2.0, 3.0], [50.0, 50.0, 50.0, 50.0]),
        "reference (the same at every budget)": ([0.0, 2.0], [80.0, 80.0])}
    assert chart.target == 70.0


def test_every_chart_draws_a_png(tmp_path: Path) -> None:
    for payload in (SPEED, LOCOMO, RECALL, LATENCY, HANDOVER):
        path = tmp_path / f"{payload['benchmark']}.png"
        plot(payload, path)
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert set(CHARTS) == {"compress_speed", "compress_locomo", "memory_locomo",
                           "memory_latency", "handover"}
    # the same figures give the same bytes (no version or date in the file)
    again = tmp_path / "again.png"
    plot(SPEED, again)
    assert again.read_bytes() == (tmp_path / "compress_speed.png").read_bytes()


def test_unknown_benchmark_is_named() -> None:
    with pytest.raises(ValueError, match="no chart for benchmark 'tokens_bench'"):
        chart_for({"benchmark": "tokens_bench"})


def test_without_matplotlib_the_hint_says_what_to_install(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    with pytest.raises(SystemExit, match=r"pip install -e '\.\[bench\]'"):
        draw(chart_for(SPEED), tmp_path / "x.png")


def test_plot_script_draws_from_json_and_refuses_other_files(tmp_path: Path) -> None:
    good = tmp_path / "speed.json"
    good.write_text(json.dumps(SPEED))
    run = subprocess.run([sys.executable, str(BENCH / "plot.py"), str(good), "-o",
                          str(tmp_path / "img")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "img" / "compress_speed.png").is_file()
    bad = tmp_path / "other.json"
    bad.write_text(json.dumps({"benchmark": "tokens_bench"}))
    run = subprocess.run([sys.executable, str(BENCH / "plot.py"), str(bad)],
                         capture_output=True, text=True)
    assert run.returncode == 2 and "no chart for benchmark 'tokens_bench'" in run.stderr
