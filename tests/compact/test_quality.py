"""The quality check: which exact facts a text holds, what an output kept of them, the re-fit
when too much was lost, and the retention figures a result reports."""

from __future__ import annotations

from pathlib import Path

import pytest

import precis
from precis import Conversation
from precis.analysis import analyze
from precis.compact import Retention, compress
from precis.compact._facts import facts
from precis.compact.quality import Presence, measure_retention
from precis.tokens import get_counter

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "compact"


def load(name: str) -> Conversation:
    return precis.load(FIXTURES / f"{name}.json")


def found(text: str) -> list[tuple[str, str]]:
    return [(f.kind, f.text) for f in facts(text)]


# -- exact facts -----------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("See https://example.com/docs, run `make test` on port 8080.",
     [("url", "https://example.com/docs"), ("command", "make test"), ("number", "8080")]),
    ("Edit src/precis/cli.py and /etc/nginx/nginx.conf today",
     [("path", "src/precis/cli.py"), ("path", "/etc/nginx/nginx.conf")]),
    ("It raised ValueError, then KeyError.", [("error", "ValueError"), ("error", "KeyError")]),
    ("commit 3eb6f2c fixed PAY-1287", [("identifier", "3eb6f2c"), ("identifier", "PAY-1287")]),
    ("set max_retries or retryCount, then pass --dry-run",
     [("identifier", "max_retries"), ("identifier", "retryCount"), ("identifier", "--dry-run")]),
    ("deploy to k8s-prod-eu in us-east-1, a well-known region",
     [("identifier", "k8s-prod-eu"), ("identifier", "us-east-1")]),
    ("version 3.10.2 is 25% faster, 5 times", [("number", "3.10.2"), ("number", "25%")]),
    ("端口改成 8443，地址是 https://a.example.cn/x。然后重启。",
     [("number", "8443"), ("url", "https://a.example.cn/x")]),
    ("Nothing exact here at all.", []),
])
def test_facts(text: str, expected: list[tuple[str, str]]) -> None:
    assert found(text) == expected


def test_fact_offsets_point_into_the_text() -> None:
    text = "Read (see https://example.com/a). Then `pytest -q` in app/tests/test_x.py"
    for fact in facts(text):
        assert text[fact.start:fact.end] == fact.text
    assert next(f.text for f in facts(text)) == "https://example.com/a"  # no ")" or "."


# -- measuring -------------------------------------------------------------------------------


def test_measure_retention_counts_by_kind_and_high_fragments() -> None:
    high_facts = [("8080", "number", "S2"), ("app/db.py", "path", "S3"),
                  ("https://x.io/a", "url", "S3")]
    retention = measure_retention(high_facts, ["S2", "S3", "S5"],
                                  "port 8080 and https://x.io/a", {"S3", "S9"})
    assert retention.by_kind == {"number": (1, 1), "path": (0, 1), "url": (1, 1)}
    assert (retention.facts_kept, retention.facts_total) == (2, 3)
    assert (retention.high_kept, retention.high_total) == (1, 3)
    assert retention.missing == ("app/db.py",)
    assert retention.lost_in == {"S3": 1}
    assert retention.to_dict() == {
        "facts": 0.6667, "facts_kept": 2, "facts_total": 3,
        "by_kind": {"number": {"kept": 1, "total": 1, "share": 1.0},
                    "path": {"kept": 0, "total": 1, "share": 0.0},
                    "url": {"kept": 1, "total": 1, "share": 1.0}},
        "high_fragments": 0.3333, "high_kept": 1, "high_total": 3,
        "missing": ["app/db.py"],
    }


def test_nothing_to_keep_is_full_retention() -> None:
    retention = measure_retention([], [], "", set())
    assert retention.facts == 1.0 and retention.high == 1.0
    assert retention.to_dict()["by_kind"] == {}


def test_missing_list_is_capped_but_totals_are_not() -> None:
    lost = [(f"ID-{i}", "identifier", f"S{i}") for i in range(1, 26)]
    retention = measure_retention(lost, [], "nothing here", set())
    assert retention.facts_total == 25 and retention.facts_kept == 0
    assert len(retention.missing) == 20
    assert retention.missing[0] == "ID-1"
    assert len(retention.lost_in) == 25


def test_retention_equality_ignores_the_refit_record() -> None:
    a = Retention({"url": (1, 1)}, 1, 1, (), {"S1": 1})
    b = Retention({"url": (1, 1)}, 1, 1, (), {})
    assert a == b


# -- in a compression result -----------------------------------------------------------------


@pytest.mark.parametrize(("name", "level"), [
    (name, level) for name in ("coding_en", "coding_zh", "sql_en", "sql_zh")
    for level in ("light", "normal", "heavy", "emergency")])
def test_reported_figures_match_the_output(name: str, level: str) -> None:
    conv = load(name)
    result = compress(conv, level=level, keep_last=3)
    text = result.text()
    report = result.to_dict()["retention"]
    assert report["facts_total"] > 0
    assert report["facts_kept"] == report["facts_total"] - len(report["missing"]) or len(
        report["missing"]) == 20
    assert all(fact not in text for fact in report["missing"])
    # HIGH fragments: those of the summarized messages, kept when an item cites them
    analysis = analyze(conv)
    start = len(conv) - 3
    high = [item.id for item in analysis.items()
            if item.level == "HIGH" and item.fragment.role != "system"
            and item.fragment.provenance.message < start]
    assert report["high_total"] == len(high)
    assert result.summary is not None
    assert report["high_kept"] == len(set(high) & result.summary.sources())


def test_refit_recovers_lost_facts() -> None:
    conv = load("coding_en")  # (the timeline re-fits; a handover does not)
    without = compress(conv, level="emergency", template="log", quality_floor=0.0)
    assert without.retention is not None and without.retention.facts < 0.95
    refit = compress(conv, level="emergency", template="log")  # floor 0.95
    assert refit.retention is not None
    assert refit.retention.facts > without.retention.facts
    assert refit.retention.facts >= 0.95
    lost = set(without.retention.missing) - set(refit.retention.missing)
    assert lost and all(fact in refit.text() for fact in lost)


def test_refit_stays_within_the_budget() -> None:
    conv = load("coding_zh")
    full = get_counter("estimate").count_messages(conv.messages)
    for share in (0.3, 0.45, 0.6):
        budget = int(full * share)
        loose = compress(conv, budget=budget, quality_floor=0.0)
        strict = compress(conv, budget=budget, quality_floor=1.0)
        assert strict.compressed_tokens <= budget
        assert loose.retention is not None and strict.retention is not None
        assert strict.retention.facts >= loose.retention.facts


def test_unchanged_conversation_has_no_retention_figures() -> None:
    conv = load("multiday_en")
    result = compress(conv, budget=10_000)
    assert result.retention is None
    assert result.to_dict()["retention"] is None
    assert "retention" not in result.to_markdown()


def test_markdown_report_shows_retention() -> None:
    result = compress(load("sql_en"), keep_last=4)
    r = result.retention
    assert r is not None
    line = next(x for x in result.to_markdown().splitlines() if x.startswith("- retention"))
    assert line == (f"- retention: exact facts {r.facts_kept}/{r.facts_total} ({r.facts:.0%}), "
                    f"HIGH fragments cited {r.high_kept}/{r.high_total} ({r.high:.0%})")


def test_the_number_of_a_flag_is_shown_by_the_flag() -> None:
    shown = Presence("ran `comm -23 a.txt b.txt` and `head -n -15 log`")
    assert "23" in shown and "15" in shown
    assert "2" not in shown and "a.txt" in shown


def test_a_number_with_its_unit_shows_the_number() -> None:
    # the facts pass finds "0.42" in a runner's "in 0.42s": an output showing "0.42s" holds it
    assert [f.text for f in facts("1 failed, 1 passed in 0.42s")] == ["0.42"]
    shown = Presence("`pytest -q` (1 failed, 1 passed in 0.42s); took 120ms")
    assert "0.42" in shown and "120" in shown
    assert "0.4" not in shown and "42" not in shown
    retention = measure_retention([("0.42", "number", "S1")], [], "passed in 0.42s", set())
    assert retention.missing == () and retention.facts == 1.0
