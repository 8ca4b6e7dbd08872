"""analyze(): the whole analysis stage on real conversations, and `inspect --explain`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import precis
from precis.analysis import AnalysisConfig, analyze
from precis.cli import main
from precis.errors import InputError
from precis.model import Message

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "coding_session.json"


def test_example_session_is_understood() -> None:
    result = analyze(precis.load(EXAMPLE))
    by_text = {item.fragment.text: item for item in result.items()}
    constraint = by_text["注意：不要改动 `app/db.py` 里的连接池配置，那个是运维统一管理的。"]
    assert constraint.type == "constraint"
    assert constraint.level == "HIGH"
    assert by_text["Thanks!"].type == "chitchat"
    assert by_text["Thanks!"].level == "LOW"
    todo = by_text["TODO: 更新 `docs/api/export.md` 里的参数说明。"]
    assert todo.type == "todo"
    assert todo.level != "LOW"
    # every fragment has a type, a level and an explanation naming its factors
    for item in result.items():
        why = result.explain(item.id)
        assert item.type in why and item.level in why and "type" in why


def test_requirement_change_links_versions() -> None:
    conv = precis.Conversation([
        Message.of("user", "The export limit must be 31 days."),
        Message.of("assistant", "OK, 31 days it is."),
        Message.of("user", "Change of plan: the export limit must be 92 days instead."),
    ])
    result = analyze(conv)
    chains = result.consolidation.chains
    assert chains, "the two limits should form a version chain"
    assert chains[0].current == "S3"
    assert result.item("S1").superseded_by == "S3"


def test_repeated_statement_counted() -> None:
    text = "Never push to the main branch."
    conv = precis.Conversation([Message.of("user", text), Message.of("assistant", "ok"),
                                Message.of("user", text), Message.of("assistant", "ok"),
                                Message.of("user", text)])
    result = analyze(conv)
    last = result.item("S5")
    assert last.duplicate_count == 3
    assert "said 3 times" in result.explain("S5")


def test_unknown_fragment_id() -> None:
    result = analyze(precis.Conversation([Message.of("user", "hi")]))
    with pytest.raises(InputError, match="no fragment 'S9'"):
        result.item("S9")


@pytest.mark.parametrize("text", [
    "", "   ", "x" * 1_000_000, "😀🎉" * 1000, "\x00\x01\x02 control \x1b[31m",
    "混合 scripts Ελληνικά русский 日本語 한국어 " * 50,
])
def test_odd_inputs_do_not_crash(text: str) -> None:
    conv = precis.Conversation([Message.of("user", text), Message.of("assistant", "ok")])
    result = analyze(conv)
    assert len(result.importance) == len(result.segmentation.fragments)


def test_pathological_repetition_stays_grouped() -> None:
    conv = precis.Conversation([Message.of("user", "Please retry the upload. " * 20_000)])
    result = analyze(conv)
    assert len(result) == 20_000
    groups = result.consolidation.duplicates
    assert len(groups) == 1 and groups[0].count == 20_000


def test_config_thresholds_apply() -> None:
    conv = precis.load(EXAMPLE)
    everything_low = analyze(conv, AnalysisConfig(high=99, medium=98))
    assert {i.level for i in everything_low.items()} == {"LOW"}


def test_cli_explain_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(EXAMPLE), "--explain", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    frag = report["fragments"][0]
    assert {"type", "level", "score", "factors", "why", "confidence"} <= set(frag)
    assert sum(report["counts"]["by_level"].values()) == len(report["fragments"])


def test_cli_explain_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(EXAMPLE), "--explain", "--limit", "0"]) == 0
    out = capsys.readouterr().out
    assert "HIGH" in out and "why" in out and "constraint" in out


@pytest.mark.parametrize("path", [
    ("transcripts", "claude-code", "python-to-rust-port.transcript.jsonl"),
    ("transcripts", "zh", "sharegpt-zh-first500.jsonl"),
])
def test_real_samples_explain(shared_data: Path, path: tuple[str, ...],
                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(shared_data.joinpath(*path)), "--pick", "0", "--explain",
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert len(report["counts"]["by_type"]) >= 3
    assert set(report["counts"]["by_level"]) <= {"HIGH", "MEDIUM", "LOW"}
