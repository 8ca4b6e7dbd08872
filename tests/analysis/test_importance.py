"""Importance scoring and its config, on hand-built fragments and classifications."""

from __future__ import annotations

import pytest

import precis
from precis.analysis.config import AnalysisConfig
from precis.analysis.importance import identifiers, score_importance
from precis.analysis.model import Classification, Consolidation
from precis.errors import ConfigError
from precis.model import Message
from precis.segment import segment


def _scored(texts: list[tuple[str, str]], types: list[str], **cons):
    conv = precis.Conversation([Message.of(role, text) for role, text in texts])  # type: ignore[arg-type]
    frags = segment(conv).fragments
    assert len(frags) == len(types), [f.text for f in frags]
    classes = [Classification(type=t, confidence=0.9) for t in types]  # type: ignore[arg-type]
    return frags, score_importance(frags, classes, Consolidation(**cons))


def test_type_weight_orders_levels() -> None:
    # Same position, same density: a constraint outranks reasoning, which outranks chitchat.
    _, scores = _scored(
        [("user", "Never touch the production database."), ("assistant", "That seems wise."),
         ("user", "hello there"), ("assistant", "Because the schema is shared.")]
        + [("user", "filler"), ("assistant", "filler")] * 4,
        ["constraint", "reasoning", "chitchat", "reasoning"] + ["chitchat"] * 8,
    )
    assert scores[0].level != "LOW"
    assert scores[0].score > scores[3].score > scores[2].score
    assert scores[2].level == "LOW"


def test_latest_user_request_is_boosted() -> None:
    _, scores = _scored(
        [("user", "Please add a CSV export."), ("assistant", "Done."),
         ("user", "Please add a CSV export.")],
        ["goal", "fact", "goal"],
    )
    assert "latest_request" in scores[2].factors
    assert "latest_request" not in scores[0].factors
    assert scores[2].score > scores[0].score


def test_later_reference_raises_earlier_fragment() -> None:
    texts = [("user", "The config lives in `deploy/prod.yaml`."), ("assistant", "Noted."),
             ("user", "Something unrelated was said here."), ("assistant", "Noted again."),
             ("user", "Open `deploy/prod.yaml` and bump the replicas.")]
    _, scores = _scored(texts, ["fact", "chitchat", "background", "chitchat", "goal"])
    assert scores[0].factors.get("references", 0) > 0
    assert "references" not in scores[2].factors


def test_back_reference_phrase_points_at_last_sql() -> None:
    texts = [("user", "```sql\nSELECT id FROM orders WHERE paid;\n```"),
             ("assistant", "It returns 12 rows."),
             ("user", "还是按刚才那个 SQL 再跑一次。")]
    _, scores = _scored(texts, ["code", "fact", "goal"])
    # an explicit back-reference counts two points
    assert scores[0].factors.get("references", 0) >= 0.16


def test_superseded_and_folded_are_penalised() -> None:
    _, scores = _scored(
        [("user", "Use MySQL for storage."), ("assistant", "ok"),
         ("user", "Actually, use Postgres 16 for storage.")],
        ["goal", "chitchat", "goal"],
        superseded_by={"S1": "S3"}, folded={"S2"},
    )
    assert scores[0].factors["superseded"] < 0
    assert scores[1].factors["confirmation"] < 0
    assert scores[1].level == "LOW"
    assert scores[2].score > scores[0].score


def test_density_counts_exact_facts() -> None:
    _, scores = _scored(
        [("user", "The job failed with exit code 137 on node ip-10-0-3-17 at 02:14."),
         ("user", "The job failed for some reason on one of the machines.")],
        ["fact", "fact"],
    )
    assert scores[0].factors["density"] > scores[1].factors.get("density", 0)


def test_an_email_address_is_dense_information() -> None:
    _, scores = _scored(
        [("user", "My account email is priya.n@example.com and nothing else."),
         ("user", "My account email is the one I gave you and nothing else.")],
        ["fact", "fact"],
    )
    assert scores[0].factors["density"] > 0
    assert scores[1].factors.get("density", 0) == 0


def test_identifiers() -> None:
    found = identifiers("Edit `app/db.py`, see https://x.io/a?b=1 and PAY-1287 in user_id.")
    assert {"app/db.py", "https://x.io/a?b=1", "pay-1287", "user_id"} <= found


def test_config_from_dict_and_validation() -> None:
    cfg = AnalysisConfig.from_dict({"high": 0.6, "weights": {"recency": 0.3,
                                    "type_weights": {"fact": 0.5}}})
    assert cfg.high == 0.6
    assert cfg.weights.recency == 0.3
    assert cfg.weights.type_weights["fact"] == 0.5
    assert cfg.weights.type_weights["goal"] == 0.55  # defaults kept
    with pytest.raises(ConfigError, match=r"unknown setting.*'hgih'"):
        AnalysisConfig.from_dict({"hgih": 0.6})
    with pytest.raises(ConfigError, match="recency"):
        AnalysisConfig.from_dict({"weights": {"recency": "high"}})
    with pytest.raises(ConfigError, match="unknown fragment type"):
        AnalysisConfig.from_dict({"weights": {"type_weights": {"gaol": 1}}})
    nested = AnalysisConfig.from_dict({"consolidation": {"threshold": 0.7}})
    assert nested.consolidation.threshold == 0.7
    with pytest.raises(ConfigError) as info:
        AnalysisConfig.from_dict({"consolidation": {"treshold": 0.7}})
    assert info.value.where == "consolidation"
    with pytest.raises(ConfigError, match="medium <= high"):
        AnalysisConfig(high=0.2, medium=0.5)


def test_thresholds_change_levels() -> None:
    conv = precis.Conversation([Message.of("user", "We use Python 3.11.")])
    frags = segment(conv).fragments
    classes = [Classification(type="fact", confidence=0.9)]
    strict = score_importance(frags, classes, Consolidation(), AnalysisConfig(high=5, medium=4))
    assert strict[0].level == "LOW"


@pytest.mark.parametrize(
    ("build", "where"),
    [
        (lambda: AnalysisConfig(high="x"), "analysis.high"),  # type: ignore[arg-type]
        (lambda: AnalysisConfig.from_dict({"weights": {"recency": float("nan")}}),
         "analysis.weights.recency"),
        (lambda: AnalysisConfig.from_dict({"weights": {"type_weights": {"fact": float("inf")}}}),
         "analysis.weights.type_weights.fact"),
        (lambda: AnalysisConfig.from_dict({"weights": {"recent_rounds": 1.5}}),
         "analysis.weights.recent_rounds"),
        (lambda: AnalysisConfig.from_dict({"consolidation": {"chain_threshold": float("nan")}}),
         "consolidation.chain_threshold"),
    ],
)
def test_invalid_values_are_config_errors(build, where: str) -> None:
    with pytest.raises(ConfigError) as info:
        build()
    assert info.value.where == where


def test_bad_cue_additions_fail_when_the_config_is_built() -> None:
    with pytest.raises(ConfigError) as info:
        AnalysisConfig.from_dict({"cues": {"types": 5}})
    assert info.value.where is not None and info.value.where.startswith("analysis.cues")
    cfg = AnalysisConfig.from_dict({"cues": {}})
    assert cfg.cue_table is cfg.cue_table  # built once per config
