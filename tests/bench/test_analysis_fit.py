"""The weight-table fit of bench/analysis_fit.py: optimiser, class weights, the trusted-cue
rule, the table it writes into cues.json, and that it reads DEV only."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import analysis_fit as fit_mod  # noqa: E402
from analysis_fit import (  # noqa: E402
    TYPES,
    Example,
    class_weights,
    diff,
    lbfgs,
    macro_f1,
    problem,
    replace_weights,
    row_values,
    trusted_cues,
    weight_table,
)
from precis.analysis.classify import Features  # noqa: E402
from precis.analysis.model import Classification  # noqa: E402

EVAL = Path(__file__).resolve().parents[1] / "data" / "analysis_eval"
_ANSWER = Classification("fact", 0.5)


def features(role: str, values: dict[str, float],
             cues: tuple[tuple[str, float, str], ...] = ()) -> Features:
    return Features(role, values, cues, _ANSWER)


# -- the optimiser and the model ----------------------------------------------------------


def test_lbfgs_finds_the_minimum_of_a_quadratic() -> None:
    target = np.array([[1.0, -2.0], [0.5, 3.0]])

    def fun(w: np.ndarray) -> tuple[float, np.ndarray]:
        d = w - target
        return float((d * d).sum() + (d[0, 0] * d[1, 1])), 2 * d + np.array(
            [[d[1, 1], 0.0], [0.0, d[0, 0]]])

    found = lbfgs(fun, np.zeros((2, 2)))
    assert np.allclose(found, target, atol=1e-5)


def test_class_weights_favour_rare_classes_and_average_one() -> None:
    y = np.array([0, 0, 0, 0, 1])  # 4 of class 0, 1 of class 1
    w = class_weights(y, 3)
    # 1/sqrt(4) = 0.5 and 1/sqrt(1) = 1, scaled so the mean is 1: 5 / (4 * 0.5 + 1) = 5/3
    assert w.tolist() == pytest.approx([5 / 6] * 4 + [5 / 3])
    assert w.mean() == pytest.approx(1.0)


def test_fit_learns_a_separable_problem_and_a_huge_penalty_keeps_the_prior() -> None:
    rows = [{"role.user": 1.0, "x.a": 1.0}] * 6 + [{"role.user": 1.0, "x.b": 1.0}] * 6
    labels = ["goal"] * 6 + ["todo"] * 6
    p = problem(rows, labels)
    w = fit_mod.fit(p, fit_mod.Penalty(0.001, 0.001), drop=0.0)
    x = fit_mod.matrix(rows, p.columns)
    assert fit_mod.predict_types(x, w) == labels
    stiff = fit_mod.fit(p, fit_mod.Penalty(1e6, 1e6), drop=0.0)
    assert np.allclose(stiff, p.prior, atol=1e-3)  # the data cannot move the weights


def test_the_words_have_their_own_penalty() -> None:
    # "x.a" and "word.a" say the same; a huge penalty on one kind holds it at its prior (0)
    rows = [{"role.user": 1.0, "x.a": 1.0, "word.a": 1.0}] * 6 + [{"role.user": 1.0}] * 6
    p = problem(rows, ["goal"] * 6 + ["todo"] * 6)
    x_col, word_col = p.columns.index("x.a"), p.columns.index("word.a")
    w = fit_mod.fit(p, fit_mod.Penalty(0.001, 1e6), drop=0.0)
    assert np.allclose(w[word_col], 0.0, atol=1e-3) and np.abs(w[x_col]).max() > 0.5
    w = fit_mod.fit(p, fit_mod.Penalty(1e6, 0.001), drop=0.0)
    assert np.allclose(w[x_col], p.prior[x_col], atol=1e-3)
    assert np.abs(w[word_col]).max() > 0.5


def test_dropped_weights_are_exactly_zero() -> None:
    rows = [{"role.user": 1.0, "x.a": 1.0}] * 5 + [{"role.user": 1.0}] * 5
    p = problem(rows, ["goal"] * 5 + ["fact"] * 5)
    w = fit_mod.fit(p, fit_mod.Penalty(0.01, 0.01), drop=0.3)
    assert (np.abs(w) > 0).any()
    small = (np.abs(w) > 0) & (np.abs(w) < 0.3)
    assert not small.any()


def test_prediction_ties_go_to_the_type_first_in_priority() -> None:
    # every score 0: the classifier picks the first type of PRIORITY; so does the fit
    x = np.zeros((1, 1))
    w = np.zeros((1, len(TYPES)))
    assert fit_mod.predict_types(x, w) == [TYPES[0]] == ["error"]


def test_macro_f1_by_hand() -> None:
    # goal: P 1/1, R 1/2 -> F1 2/3; fact: P 1/2, R 1/1 -> 2/3; the 9 other types 0
    value = macro_f1(["goal", "goal", "fact"], ["goal", "fact", "fact"])
    assert value == pytest.approx((2 / 3 + 2 / 3) / 11)


# -- the trusted-cue rule ------------------------------------------------------------------


def test_cues_seen_in_one_conversation_only_are_left_out_of_the_cue_sums() -> None:
    common = ("goal", 2.0, "i need")
    rare = ("goal", 1.5, "ship the widget")
    data = [
        Example("c1", "goal", features("user", {}, (common, rare))),
        Example("c2", "goal", features("user", {}, (common,))),
    ]
    trusted = trusted_cues(data, 2)
    assert trusted == {("goal", "i need")}
    f = features("user", {"role.user": 1.0, "cue_sum.goal": 3.5, "cue_sum.goal.user": 3.5},
                 (common, rare))
    values = row_values(f, trusted)
    assert values == {"role.user": 1.0, "cue_sum.goal": 2.0, "cue_sum.goal.user": 2.0}
    assert row_values(f, None) is f.values  # no rule: as the classifier saw it


def test_cue_sums_are_capped_as_in_the_classifier() -> None:
    cues = tuple(("constraint", 3.0, f"c{i}") for i in range(4))  # 12 > the cap of 8
    values = row_values(features("assistant", {}, cues), {("constraint", f"c{i}")
                                                         for i in range(4)})
    assert values == {"cue_sum.constraint": 8.0, "cue_sum.constraint.assistant": 8.0}


# -- the table and cues.json ---------------------------------------------------------------


def test_weight_table_rounds_drops_zeros_and_orders_types() -> None:
    columns = ["role.user", "b.feature", "a.empty"]
    w = np.zeros((3, len(TYPES)))
    w[0, TYPES.index("goal")] = 0.12345
    w[0, TYPES.index("error")] = -1.0
    w[1, TYPES.index("chitchat")] = 2.0
    table = weight_table(columns, w)
    assert list(table) == ["b.feature", "role.user"]  # sorted; the empty row is left out
    assert list(table["role.user"].items()) == [("goal", 0.123), ("error", -1.0)]


def test_diff_lists_every_changed_entry() -> None:
    old = {"a": {"goal": 1.0}, "b": {"fact": 2.0}}
    new = {"a": {"goal": 1.5}, "c": {"todo": 0.5}}
    assert diff(old, new) == ["a goal: 1 -> 1.5", "b fact: 2 -> 0", "c todo: 0 -> 0.5"]


CUES = """{
  "version": 1,
  "types": {"goal": {"en": {"i need": 2.0}}},
  "_weights_doc": ["old"],
  "weights": {
    "role.user": {"goal": 1.0}
  }
}
"""


def test_replace_weights_keeps_the_rest_of_the_file_byte_for_byte() -> None:
    text = replace_weights(CUES, ["new doc"], {"a.b": {"goal": 0.5}, "role.user": {"fact": 1}})
    head = CUES[:CUES.index('  "_weights_doc"')]
    assert text.startswith(head)
    data = json.loads(text)
    assert data["_weights_doc"] == ["new doc"]
    assert data["weights"] == {"a.b": {"goal": 0.5}, "role.user": {"fact": 1}}
    assert '    "a.b": {"goal": 0.5},\n' in text  # one row per line
    assert replace_weights(text, ["new doc"], data["weights"]) == text  # stable


def test_replace_weights_rewrites_a_file_whose_weights_are_not_last() -> None:
    moved = json.dumps({"weights": {"x.y": {"goal": 1.0}}, "version": 1,
                        "types": {"goal": {"en": {"i need": 2.0}}}}, indent=2)
    text = replace_weights(moved, ["doc"], {"x.y": {"todo": 2.0}})
    data = json.loads(text)
    assert data == {"version": 1, "types": {"goal": {"en": {"i need": 2.0}}},
                    "_weights_doc": ["doc"], "weights": {"x.y": {"todo": 2.0}}}


# -- the data ------------------------------------------------------------------------------


def test_only_the_dev_half_is_read() -> None:
    lines = fit_mod.dev_lines()
    ids = {line["id"] for line in lines}
    for lang in ("en", "zh"):
        raw = [json.loads(x) for x in (EVAL / f"conversations_{lang}.jsonl")
               .read_text("utf-8").splitlines() if x.strip()]
        assert {c["id"] for c in raw[0::2]} <= ids  # odd lines (1st, 3rd, ...): DEV
        assert not {c["id"] for c in raw[1::2]} & ids  # even lines: TEST, never read


def test_every_prior_names_known_types() -> None:
    for feature, row in fit_mod.PRIORS.items():
        assert set(row) <= set(TYPES), feature


# -- the importance fit --------------------------------------------------------------------


def test_level_figures_by_hand() -> None:
    y = np.array([2, 2, 2, 2, 1, 0])
    pred = np.array([2, 2, 1, 0, 1, 1])
    figures = fit_mod.level_figures(y, pred)
    assert figures == {"accuracy": pytest.approx(3 / 6), "HIGH_recall": 0.5,
                       "HIGH_judged_LOW": 0.25}


def test_level_thresholds_keep_the_high_examples_high() -> None:
    # one informative factor (density): LOW near 0, MEDIUM near 0.5, HIGH near 1, with
    # some HIGH examples down among the MEDIUM ones
    rng = np.random.default_rng(1)
    col = fit_mod.LEVEL_COLUMNS.index("density")
    levels = np.array([0] * 40 + [1] * 40 + [2] * 40)
    values = np.where(levels == 0, 0.0, np.where(levels == 1, 0.5, 1.0))
    values = values + rng.normal(0, 0.1, len(levels))
    values[-4:] = 0.45  # HIGH examples that look MEDIUM
    x = np.zeros((len(levels), len(fit_mod.LEVEL_COLUMNS)))
    x[:, col] = values
    params = fit_mod.fit_levels(x, levels, lam=0.01)
    figures = fit_mod.level_figures(levels, fit_mod.predict_levels(x, params))
    assert figures["HIGH_recall"] >= fit_mod.HIGH_RECALL
    assert figures["HIGH_judged_LOW"] <= fit_mod.HIGH_AS_LOW
    assert params[-2] <= params[-1]  # medium <= high


def test_the_training_set_is_apart_from_the_evaluation_set() -> None:
    train = fit_mod.train_lines()
    evaluation = set()
    for lang in ("en", "zh"):
        evaluation |= {json.loads(x)["id"] for x in (EVAL / f"conversations_{lang}.jsonl")
                       .read_text("utf-8").splitlines() if x.strip()}
    ids = [line["id"] for line in train]
    assert ids and len(ids) == len(set(ids))
    assert not set(ids) & evaluation
    texts = {f["text"] for line in train for m in line["messages"] for f in m["fragments"]}
    for lang in ("en", "zh"):  # no fragment of the evaluation set copied into it
        for x in (EVAL / f"conversations_{lang}.jsonl").read_text("utf-8").splitlines():
            if x.strip():
                for m in json.loads(x)["messages"]:
                    for f in m["fragments"]:
                        assert len(f["text"]) < 40 or f["text"] not in texts


def conversation(cid: str, *texts: str) -> dict[str, object]:
    return {"id": cid, "messages": [{"role": "user", "fragments": [
        {"id": f"{cid}-f{i}", "text": t} for i, t in enumerate(texts, 1)]}]}


def test_lexicon_candidates_need_enough_conversations_and_no_digits() -> None:
    lines = [conversation("a", "Keep Redis.", "```\nredis x\n```"),
             conversation("b", "keep redis 7", "方案一"),
             conversation("c", "We keep it.", "方案二")]
    # keep: a, b, c; redis: a, b (the fenced block is not running text); 7: digits;
    # 方案: b, c
    assert fit_mod.lexicon_candidates(lines, 3) == ["keep"]
    assert fit_mod.lexicon_candidates(lines, 2) == ["keep", "redis", "方案"]


def test_with_lexicon_adds_empty_rows_and_keeps_fitted_ones() -> None:
    rows = fit_mod.with_lexicon({"word.keep": {"decision": 1.5}, "role.user": {"goal": 1}},
                                ["keep", "redis"])
    assert rows == {"word.keep": {"decision": 1.5}, "word.redis": {},
                    "role.user": {"goal": 1}}


@pytest.mark.parametrize("option", ["--jobs", "--folds"])
@pytest.mark.parametrize("value", ["0", "-2", "two"])
def test_a_bad_count_is_a_usage_error(option: str, value: str,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        fit_mod.main([option, value])
    assert exit_info.value.code == 2
    assert "expected a whole number >= 1" in capsys.readouterr().err
