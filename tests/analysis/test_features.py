"""``features_in_context``: the classifier's features, as the weight-table fit reads them."""

from __future__ import annotations

from pathlib import Path

import precis
from precis.analysis.classify import (
    PRIORITY,
    classify_all,
    cue_sum_features,
    features_in_context,
)
from precis.analysis.cues import CueTable
from precis.segment import Fragment, Provenance


def frag(i: int, text: str, role: str, message: int, kind: str = "sentence") -> Fragment:
    return Fragment(f"S{i}", kind, text, role, "en",  # type: ignore[arg-type]
                    Provenance(message, message, 0, 0, len(text)))


FRAGMENTS = [
    frag(1, "I need a CLI that dedupes orders.", "user", 0),
    frag(2, "必须用 Python 3.10，不能用第三方库。", "user", 0),
    frag(3, "Plan:", "assistant", 1),
    frag(4, "- read the CSV", "assistant", 1, "list_item"),
    frag(5, "- drop repeated order ids", "assistant", 1, "list_item"),
    frag(6, "Should it keep the first or the last copy?", "assistant", 1),
    frag(7, "The last one.", "user", 2),
    frag(8, "   ", "assistant", 3),
]


def linear_answer(values: dict[str, float], table: CueTable) -> str:
    score = dict.fromkeys(PRIORITY, 0.0)
    for row, value in values.items():
        for kind, weight in table.weights.get(row, ()):
            score[kind] += value * weight
    return max(PRIORITY, key=lambda kind: (score[kind], -PRIORITY.index(kind)))


def test_the_features_score_to_the_classifiers_answer() -> None:
    table = CueTable.default()
    found = features_in_context(FRAGMENTS, table)
    answers = classify_all(FRAGMENTS, table)
    assert len(found) == len(FRAGMENTS)
    for f, answer in zip(found, answers):
        assert f.answer == answer
        if f.values:
            assert linear_answer(f.values, table) == answer.type


def test_context_and_speaker_features_are_named_as_in_the_weight_table() -> None:
    found = features_in_context(FRAGMENTS)
    assert found[0].role == "user" and found[0].values["role.user"] == 1.0
    assert "context.opening" in found[0].values  # the first user message
    assert "context.lead_in.plan" in found[3].values  # a list item after "Plan:"
    assert "context.answers" in found[6].values  # a reply to the assistant's question
    assert "context.reply" in found[6].values
    assert found[7].values == {} and found[7].answer.type == "chitchat"  # empty


def test_cue_sums_come_as_a_general_and_a_speaker_row_with_the_cues_listed() -> None:
    constraint = features_in_context(FRAGMENTS)[1]
    labels = {label for kind, _, label in constraint.cues if kind == "constraint"}
    assert "cue:必须" in labels
    total = sum(w for kind, w, _ in constraint.cues if kind == "constraint")
    assert constraint.values["cue_sum.constraint"] == min(8.0, total)
    assert constraint.values["cue_sum.constraint.user"] == min(8.0, total)


def test_cue_sum_features_add_per_type_and_cap() -> None:
    hits = [("goal", 2.0, "a"), ("goal", 1.5, "b"), ("todo", -9.0, "c")]
    assert cue_sum_features(hits, "user") == {
        "cue_sum.goal": 3.5, "cue_sum.goal.user": 3.5,
        "cue_sum.todo": -8.0, "cue_sum.todo.user": -8.0,
    }
    assert cue_sum_features([], "tool") == {}


def _fixture_fragments() -> list[list[Fragment]]:
    out = []
    for path in sorted((Path(__file__).resolve().parents[1] / "fixtures").glob("*/*.json*")):
        try:
            convs = precis.load_all(path).conversations
        except precis.InputError:
            continue  # the fixtures of bad input
        out.extend(list(precis.segment(c).fragments) for c in convs)
    return out


def test_answers_given_once_per_evidence_are_the_answers_of_each_fragment() -> None:
    # classify_all answers fragments with the same evidence once; features_in_context
    # scores every fragment on its own
    texts_of: dict[int, set[str]] = {}
    kept = []  # (answers stay alive, so their ids stay theirs)
    for fragments in _fixture_fragments():
        answers = classify_all(fragments)
        kept.append(answers)
        assert [f.answer for f in features_in_context(fragments)] == answers
        for fragment, answer in zip(fragments, answers):
            texts_of.setdefault(id(answer), set()).add(fragment.text)
    assert any(len(texts) > 1 for texts in texts_of.values())  # shared by different texts
