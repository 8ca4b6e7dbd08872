"""Fit the type classifier's weight table (``weights`` in precis/analysis/cues.json).

Reads the DEV half of the labelled set (odd lines of tests/data/analysis_eval/
conversations_*.jsonl; the TEST half is never read) and the training set
(tests/data/analysis_train, written apart from it; ``--dev-only`` leaves it out), takes for
every labelled fragment the features the classifier itself computes
(``precis.analysis.classify.features_in_context``, on the predicted fragment that overlaps
it most, as ``analysis_quality.py`` matches them), and fits ``feature -> {type: weight}`` by
class-balanced multinomial logistic regression with an L2 penalty pulling every weight
towards a hand-set prior (:data:`PRIORS`; 0 for words):

* classes are weighted by 1/sqrt(frequency), so rare types count;
* words: every unit of running text (``precis.analysis.cues.lexical_units``: a word, or a
  pair of Chinese characters) found in at least ``--min-word-conversations`` and at most
  ``--max-word-share`` of the conversations, without digits, is a candidate ``word.<unit>``
  feature with its own penalty (``--no-words``: none);
* cues that fire in fewer than ``--min-conversations`` conversations are left out of the
  training cue sums (phrases written while reading one conversation must not be trusted
  because of it; at use every cue counts);
* weights under ``--drop`` in size are then removed and the rest refitted (a small table);
* the two penalties (features, words) are chosen by cross-validation over ``--folds``
  groups of conversations (macro-F1 of the held-out predictions; the rules above are
  applied inside each training fold, and a held-out group sees only the cues that also
  fire in another conversation, as a new conversation has no cues written for it): the
  largest within one standard error (bootstrap over conversations) of the best;
  ``--lam`` / ``--word-lam`` fix them instead;
* context features depend on the answers for earlier fragments, so features are taken with
  the prior weights, the table fitted, features taken again with it and the table refitted.

The result depends only on the data, the cue phrases and the priors (not on the weights in
cues.json now): the script is deterministic. It prints the cross-validation, the figures and
how the table would change; ``--write`` stores the weights (and the ``_weights_doc`` saying
how they were made) in cues.json. ``--importance`` also fits the importance settings of
precis/analysis/config.py (see "importance" below) and prints them with their held-out
figures.

    python bench/analysis_fit.py [--lam L] [--word-lam L] [--no-words] [--dev-only]
                                 [--jobs N] [--report] [--importance] [--write]

Needs numpy (the ``bench`` extra).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import textwrap
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import precis
from analysis_quality import EVAL, TRAIN, Gold, build, load_jsonl, predict, prf
from precis.analysis import (
    AnalysisConfig,
    CueTable,
    ImportanceWeights,
    consolidate,
    score_importance,
)
from precis.analysis.classify import (
    PRIORITY,
    SCAN_CHARS,
    Features,
    cue_sum_features,
    features_in_context,
)
from precis.analysis.cues import LEXICAL_PREFIX, lexical_units, words
from precis.analysis.model import FRAGMENT_TYPES

CUES_JSON = Path(precis.__file__).resolve().parent / "analysis" / "cues.json"
ROLES = ("system", "user", "assistant", "tool", "other")
# Columns of the weight matrix in tie order: argmax picks the first of equal scores, as the
# classifier does (PRIORITY), so DEV predictions here equal the classifier's.
TYPES: tuple[str, ...] = PRIORITY
LAMBDAS = (0.001, 0.003, 0.01, 0.03)  # on the structure, cue and context features
WORD_LAMBDAS = (0.0003, 0.001)  # on the words
FIRST_LAMBDA = 0.01  # the penalty of round 1 (see main), words included
BOOTSTRAP = 200  # resamples for the standard error of a held-out macro-F1
DROP = 0.15
MIN_CONVERSATIONS = 2
MIN_WORD_CONVERSATIONS = 3
MAX_WORD_SHARE = 0.25
FOLDS = 10
DECIMALS = 3

# -- hand-set priors ------------------------------------------------------------------------
# What each feature says before any data: the votes of the first-match rules the classifier
# began with. A feature absent from DEV keeps its prior.

_ERROR_PRIORS = {
    "traceback": 6.0, "exception": 5.0, "error_line": 5.0, "stack_frame": 4.0,
    "failures": 4.5, "error_payload": 5.0, "error_code": 4.0, "log_error": 4.5,
    "build_failed": 4.5, "exit_code": 4.0, "os_error": 4.5, "cluster_error": 4.5,
    "sql_error": 4.5, "error_status": 4.5,
}
PRIORS: dict[str, dict[str, float]] = {
    # the speaker: every score starts from its row
    "role.user": {"goal": 0.5, "background": 0.5, "constraint": 0.3},
    "role.assistant": {"fact": 0.5, "reasoning": 0.5, "plan": 0.3},
    "role.system": {"constraint": 1.0, "background": 0.5},
    "role.tool": {"fact": 0.5},
    "role.other": {"fact": 0.5},
    # blocks: code, SQL, JSON, tables, tool calls and results
    "block.code": {"code": 4.0},
    "block.code_fence": {"code": 5.0},
    "block.json": {"code": 4.0},
    "block.sql": {"code": 5.0},
    "block.source_listing": {"code": 5.0},
    "block.tool_call": {"code": 5.0},
    # tool output in a code fence (a file read back): every tool output also has
    # block.tool_output and role.tool (fact 3.5), which this must outvote
    "block.tool_code": {"code": 5.0},
    "block.tool_sql": {"code": 5.0},
    "block.output": {"fact": 3.0},
    "block.table": {"fact": 3.0},
    "block.tool_output": {"fact": 3.0},
    # running text
    "prose.command": {"code": 4.5},
    "prose.sql": {"code": 4.5},
    "prose.no_words": {"chitchat": 3.0},
    "length.tiny": {"chitchat": 1.0},
    "length.short": {"chitchat": 0.5},
    # a reply that is a value, or a yes followed by an instruction: no small talk
    "prose.short_data": {"fact": 1.0, "chitchat": -1.0},
    "prose.answer.user": {"decision": 2.0, "chitchat": -1.0},
    "kind.heading": {"fact": 2.0},
    "kind.image": {"fact": 3.0},
    "kind.thinking": {"reasoning": 1.5},
    "kind.list_item": {"plan": 0.5},
    "question.user": {"goal": 1.0, "background": 1.0},
    "question.assistant": {"background": 2.0},
    "question.system": {"background": 2.0},
    "imperative.user": {"goal": 1.5},
    "imperative.assistant": {"plan": 1.0},
    "imperative.system": {"constraint": 1.5},
    "numbered.user": {"plan": 1.0},
    "numbered.assistant": {"plan": 2.0},
    "numbered.system": {"plan": 1.5},
    "prose.lead_in.assistant": {"plan": 0.5},
    "prose.clauses.assistant": {"reasoning": 0.3},
    "prose.data.user": {"fact": 0.5},
    "prose.data.assistant": {"fact": 0.5},
    "prose.data.system": {"fact": 0.4},
    # context
    "context.after_error": {"reasoning": 1.0},
    "context.after_tool": {"fact": 1.0},
    # a reply to the assistant's question that makes a choice is a decision (GUIDELINES)
    "context.answers_choice": {"decision": 2.5},
    **{f"error.{name}": {"error": w} for name, w in _ERROR_PRIORS.items()},
    **{f"context.lead_in.{t}": {t: 1.2} for t in FRAGMENT_TYPES},
    **{f"cue_sum.{t}": {t: 1.0} for t in FRAGMENT_TYPES if t != "code"},
}


def prior_row(feature: str) -> dict[str, float]:
    """The hand-set prior of a feature (no votes for a feature not in :data:`PRIORS`)."""
    return dict(PRIORS.get(feature, {}))


# -- data ------------------------------------------------------------------------------------


@dataclass
class Example:
    """One labelled DEV fragment: its conversation, gold type and the classifier's view."""

    conv: str
    gold: str
    features: Features
    index: int = -1  # the fragment's position in its conversation's segmentation
    level: str = ""  # gold importance


def dev_lines() -> list[dict[str, Any]]:
    """The DEV conversations: odd lines (1st, 3rd, ...) of each conversations file."""
    out: list[dict[str, Any]] = []
    for lang in ("en", "zh"):
        lines = load_jsonl(EVAL / f"conversations_{lang}.jsonl")
        out += lines[0::2]
    return out


def train_lines() -> list[dict[str, Any]]:
    """Every conversation of the training set (tests/data/analysis_train), which was
    written apart from the evaluation set and is used only for fitting."""
    out: list[dict[str, Any]] = []
    for path in sorted(TRAIN.glob("conversations_*.jsonl")):
        out += load_jsonl(path)
    return out


def lexicon_candidates(lines: Sequence[dict[str, Any]], min_conversations: int,
                       max_share: float = 1.0) -> list[str]:
    """The units (:func:`precis.analysis.cues.lexical_units`) of the running text of
    ``lines`` that occur in at least ``min_conversations`` conversations and in at most
    ``max_share`` of them (a word found everywhere, "the", says more about a sentence's
    length than its kind), without those holding a digit (numbers are structure, not
    vocabulary)."""
    seen: Counter[str] = Counter()
    for line in lines:
        units: set[str] = set()
        for message in line["messages"]:
            for fragment in message["fragments"]:
                low = fragment["text"].strip()[:SCAN_CHARS].lower().replace("\u2019", "'")
                if low.startswith(("```", "~~~")):
                    continue
                units.update(lexical_units(low, words(low)))
        seen.update(units)
    most = max_share * len(lines)
    return sorted(u for u, k in seen.items()
                  if min_conversations <= k <= most and not any(c.isdigit() for c in u))


def with_lexicon(weights: Mapping[str, Mapping[str, float]],
                 lexicon: Iterable[str]) -> dict[str, dict[str, float]]:
    """``weights`` plus an empty row for every unit of ``lexicon`` that has none: the
    classifier then reports those units as features, so a fit can weigh them."""
    out = {LEXICAL_PREFIX + unit: {} for unit in lexicon}
    out.update({f: dict(r) for f, r in weights.items()})
    return out


def examples(lines: Sequence[dict[str, Any]], table: CueTable) -> list[Example]:
    """Every labelled fragment of ``lines`` with the features of the predicted fragment that
    overlaps it most (the match ``analysis_quality.py`` scores)."""
    out: list[Example] = []
    for line in lines:
        golds, preds = predict(line, "DEV")
        fragments = precis.segment(precis.load(build(line)[0])).fragments
        feats = features_in_context(fragments, table)
        index = {f.id: i for i, f in enumerate(fragments)}
        for gold in golds:
            frag = preds[gold.id]["frag"]
            if frag is None or not feats[index[frag]].values:
                continue  # nothing to learn from (empty: always chitchat)
            out.append(Example(line["id"], gold.type, feats[index[frag]], index[frag],
                               gold.level))
    return out


def cue_key(cue: tuple[str, float, str]) -> tuple[str, str]:
    return cue[0], cue[2]


def trusted_cues(data: Sequence[Example], min_conversations: int) -> set[tuple[str, str]]:
    """Cues ``(type, label)`` that fire in at least ``min_conversations`` conversations."""
    seen: dict[tuple[str, str], set[str]] = {}
    for ex in data:
        for cue in ex.features.cues:
            seen.setdefault(cue_key(cue), set()).add(ex.conv)
    return {k for k, convs in seen.items() if len(convs) >= min_conversations}


def row_values(features: Features, trusted: set[tuple[str, str]] | None) -> dict[str, float]:
    """A fragment's feature values, with the cue sums of the ``trusted`` cues only (all
    cues when ``None``)."""
    if trusted is None:
        return features.values
    values = {k: v for k, v in features.values.items() if not k.startswith("cue_sum.")}
    kept = [c for c in features.cues if cue_key(c) in trusted]
    values.update(cue_sum_features(kept, features.role))
    return values


# -- the model -------------------------------------------------------------------------------


@dataclass
class Problem:
    """A design matrix over named columns (features) and the prior weights."""

    columns: list[str]
    x: np.ndarray  # (examples, columns)
    y: np.ndarray  # (examples,) index into TYPES
    prior: np.ndarray  # (columns, types)


def matrix(rows: Sequence[Mapping[str, float]], columns: Sequence[str]) -> np.ndarray:
    where = {c: j for j, c in enumerate(columns)}
    x = np.zeros((len(rows), len(columns)))
    for i, row in enumerate(rows):
        for key, value in row.items():
            j = where.get(key)
            if j is not None:
                x[i, j] = value
    return x


def problem(rows: Sequence[Mapping[str, float]], labels: Sequence[str]) -> Problem:
    columns = sorted({k for row in rows for k in row} | set(PRIORS))
    prior = np.zeros((len(columns), len(TYPES)))
    for j, c in enumerate(columns):
        for t, w in prior_row(c).items():
            prior[j, TYPES.index(t)] = w
    y = np.array([TYPES.index(t) for t in labels], dtype=np.int64)
    return Problem(columns, matrix(rows, columns), y, prior)


def class_weights(y: np.ndarray, n_types: int) -> np.ndarray:
    """Per-example weights 1/sqrt(class frequency), scaled to a mean of 1."""
    counts = np.bincount(y, minlength=n_types).astype(float)
    per_class = np.where(counts > 0, 1.0 / np.sqrt(np.maximum(counts, 1.0)), 0.0)
    w = per_class[y]
    return w * (len(y) / w.sum())


def objective(w: np.ndarray, x: np.ndarray, y: np.ndarray, sample: np.ndarray,
              prior: np.ndarray, mask: np.ndarray, lam: float | np.ndarray
              ) -> tuple[float, np.ndarray]:
    """Weighted mean cross-entropy + lam * ||mask * (w - prior)||^2 and its gradient (over
    the entries of ``mask``; the others are fixed at 0). ``lam`` is one number or one per
    column (shape ``(columns, 1)``)."""
    n = len(y)
    scores = x @ w
    scores -= scores.max(axis=1, keepdims=True)
    expd = np.exp(scores)
    prob = expd / expd.sum(axis=1, keepdims=True)
    rows = np.arange(n)
    loss = -(sample * np.log(prob[rows, y] + 1e-300)).sum() / n
    diff = (w - prior) * mask
    loss += float((lam * diff * diff).sum())
    resid = prob
    resid[rows, y] -= 1.0
    grad = x.T @ (resid * sample[:, None]) / n + 2.0 * lam * diff
    return float(loss), grad * mask


def lbfgs(fun: Callable[[np.ndarray], tuple[float, np.ndarray]], x0: np.ndarray,
          max_iter: int = 1000, memory: int = 10, tol: float = 1e-7) -> np.ndarray:
    """Minimise a smooth convex ``fun`` (value, gradient) by L-BFGS with a backtracking
    (Armijo) line search. Deterministic."""
    x = x0.copy()
    f, g = fun(x)
    s_hist: list[np.ndarray] = []
    y_hist: list[np.ndarray] = []
    for _ in range(max_iter):
        if float(np.abs(g).max()) < tol:
            break
        q = g.copy()
        alphas = []
        for s, yv in zip(reversed(s_hist), reversed(y_hist)):
            rho = 1.0 / float((yv * s).sum())
            a = rho * float((s * q).sum())
            alphas.append((rho, a))
            q -= a * yv
        if s_hist:
            q *= float((s_hist[-1] * y_hist[-1]).sum()) / float((y_hist[-1] ** 2).sum())
        else:
            q /= max(1.0, float(np.abs(g).sum()))
        for (s, yv), (rho, a) in zip(zip(s_hist, y_hist), reversed(alphas)):
            b = rho * float((yv * q).sum())
            q += (a - b) * s
        direction = -q
        slope = float((g * direction).sum())
        if slope >= 0:  # not a descent direction: restart from the gradient
            s_hist.clear()
            y_hist.clear()
            direction, slope = -g, -float((g * g).sum())
        step = 1.0
        while True:
            x_new = x + step * direction
            f_new, g_new = fun(x_new)
            if f_new <= f + 1e-4 * step * slope or step < 1e-12:
                break
            step *= 0.5
        s, yv = x_new - x, g_new - g
        if float((s * yv).sum()) > 1e-12:
            s_hist.append(s)
            y_hist.append(yv)
            if len(s_hist) > memory:
                s_hist.pop(0)
                y_hist.pop(0)
        converged = abs(f - f_new) <= 1e-12 * max(1.0, abs(f))
        x, f, g = x_new, f_new, g_new
        if converged:
            break
    return x


@dataclass(frozen=True, order=True)
class Penalty:
    """The L2 penalties: on the structure, cue and context features, and on the words."""

    structure: float
    words: float

    def __str__(self) -> str:
        return f"{self.structure:g} / {self.words:g}"

    def per_column(self, columns: Sequence[str]) -> np.ndarray:
        return np.array([[self.words if c.startswith(LEXICAL_PREFIX) else self.structure]
                         for c in columns])


def fit(p: Problem, penalty: Penalty, drop: float = DROP) -> np.ndarray:
    """Weights (columns x types): fit every entry, remove those under ``drop`` in size,
    refit the rest."""
    lam = penalty.per_column(p.columns)
    sample = class_weights(p.y, len(TYPES))
    mask = np.ones_like(p.prior)
    w = lbfgs(lambda v: objective(v, p.x, p.y, sample, p.prior, mask, lam), p.prior.copy())
    if drop > 0:
        mask = (np.abs(w) >= drop).astype(float)
        start = np.where(mask > 0, w, 0.0)
        w = lbfgs(lambda v: objective(v, p.x, p.y, sample, p.prior, mask, lam), start)
        w *= mask
    return w


def predict_types(x: np.ndarray, w: np.ndarray) -> list[str]:
    """The winning type of each row (ties: the first in PRIORITY, as the classifier)."""
    return [TYPES[int(k)] for k in np.argmax(x @ w, axis=1)]


def macro_f1(gold: Sequence[str], pred: Sequence[str]) -> float:
    """Macro-F1 over the eleven types, as ``analysis_quality.py`` computes it."""
    golds = [Gold(str(i), "", "DEV", g, "", 0, 0, 0) for i, g in enumerate(gold)]
    preds = {str(i): {"type": p} for i, p in enumerate(pred)}
    return prf(golds, preds)[1]


def fit_examples(data: Sequence[Example], lam: Penalty, drop: float,
                 min_conversations: int) -> tuple[list[str], np.ndarray]:
    """Columns and weights fitted on ``data`` (the trusted-cue rule applied to it)."""
    trusted = trusted_cues(data, min_conversations)
    rows = [row_values(ex.features, trusted) for ex in data]
    p = problem(rows, [ex.gold for ex in data])
    return p.columns, fit(p, lam, drop)


def cross_validate(data: Sequence[Example], lam: Penalty, drop: float,
                   min_conversations: int, folds: int = FOLDS) -> list[str]:
    """Held-out predictions for every example (in order): the conversations are dealt
    into ``folds`` groups in turn (one conversation per group when there are no more
    than ``folds``: leave one conversation out).

    Each group is predicted by weights fitted on the others. It sees only the cues that
    also fire in another conversation: a cue that fires in no other was most likely
    written while reading this one, and a new conversation (TEST, real use) would not
    have its own tailor-made cues."""
    pred: list[str] = [""] * len(data)
    convs = list(dict.fromkeys(ex.conv for ex in data))
    group = {c: i % folds for i, c in enumerate(convs)}
    for held in sorted(set(group.values())):
        train = [ex for ex in data if group[ex.conv] != held]
        test = [i for i, ex in enumerate(data) if group[ex.conv] == held]
        columns, w = fit_examples(train, lam, drop, min_conversations)
        seen = trusted_cues(train, 1)
        x = matrix([row_values(data[i].features, seen) for i in test], columns)
        for i, t in zip(test, predict_types(x, w)):
            pred[i] = t
    return pred


# -- the weight table ------------------------------------------------------------------------


def weight_table(columns: Sequence[str], w: np.ndarray) -> dict[str, dict[str, float]]:
    """``feature -> {type: weight}`` without zeros, types in FRAGMENT_TYPES order."""
    out: dict[str, dict[str, float]] = {}
    for j, c in enumerate(columns):
        row = {t: round(float(w[j, TYPES.index(t)]), DECIMALS) for t in FRAGMENT_TYPES}
        row = {t: v for t, v in row.items() if v != 0.0}
        if row:
            out[c] = row
    return dict(sorted(out.items()))


def table_with(weights: Mapping[str, Mapping[str, float]]) -> CueTable:
    """The built-in cue table with exactly these weights."""
    data = CueTable.default().to_dict()
    data["weights"] = {f: dict(row) for f, row in weights.items()}
    return CueTable.from_dict(data)


def diff(old: Mapping[str, Mapping[str, float]],
         new: Mapping[str, Mapping[str, float]]) -> list[str]:
    """Lines ``feature type: old -> new`` for every entry that changes."""
    lines = []
    for feature in sorted(old.keys() | new.keys()):
        a, b = old.get(feature, {}), new.get(feature, {})
        for t in FRAGMENT_TYPES:
            if a.get(t, 0.0) != b.get(t, 0.0):
                lines.append(f"{feature} {t}: {a.get(t, 0.0):g} -> {b.get(t, 0.0):g}")
    return lines


def render(data: Mapping[str, Any], doc: Sequence[str],
           weights: Mapping[str, Mapping[str, float]]) -> str:
    """cues.json text with ``_weights_doc`` and ``weights`` replaced: every other key keeps
    its text; the two come last, one weight row per line."""
    dump = json.dumps
    head = {k: v for k, v in data.items() if k not in ("_weights_doc", "weights")}
    body = dump(head, ensure_ascii=False, indent=2)
    return body[:-2] + _tail(doc, weights)


def _tail(doc: Sequence[str], weights: Mapping[str, Mapping[str, float]]) -> str:
    dump = json.dumps
    lines = [",", '  "_weights_doc": [']
    lines += [f"    {dump(x, ensure_ascii=False)}," for x in doc]
    lines[-1] = lines[-1].rstrip(",")
    lines.append("  ],")
    lines.append('  "weights": {')
    rows = [f"    {dump(f)}: {dump(dict(r))}," for f, r in weights.items()]
    if rows:
        rows[-1] = rows[-1].rstrip(",")
    lines += rows
    lines += ["  }", "}"]
    return lines[0] + "\n" + "\n".join(lines[1:]) + "\n"


def replace_weights(text: str, doc: Sequence[str],
                    weights: Mapping[str, Mapping[str, float]]) -> str:
    """``text`` (cues.json) with new ``_weights_doc`` and ``weights``. When they are its
    last keys, the text before them is kept byte for byte; else the file is written anew."""
    data = json.loads(text)
    expected = {k: v for k, v in data.items() if k not in ("_weights_doc", "weights")}
    expected["_weights_doc"] = list(doc)
    expected["weights"] = {f: dict(r) for f, r in weights.items()}
    cut = text.find('\n  "_weights_doc":')
    if cut < 0:
        cut = text.find('\n  "weights":')
    if cut >= 0:
        new = text[:cut].rstrip().removesuffix(",") + _tail(doc, weights)
        try:
            if json.loads(new) == expected:
                return new
        except json.JSONDecodeError:
            pass
    return render(data, doc, weights)


def weights_doc(lam: Penalty, drop: float, min_conversations: int, cv: float, n: int,
                n_dev: int, n_train: int, min_word_conversations: int, groups: int
                ) -> list[str]:
    """``_weights_doc`` of cues.json: how the table was made, wrapped to short lines."""
    source = (f"the DEV half (odd lines) of tests/data/analysis_eval ({n_dev} conversations)"
              + (f" and the training set tests/data/analysis_train ({n_train} "
                 "conversations)" if n_train else "")
              + f", {n} fragments, never TEST")
    words = (f"; lexical features (word.<unit>: a word, or a pair of Chinese characters, "
             f"found in at least {min_word_conversations} of these conversations)"
             if min_word_conversations else "")
    text = (
        f"Made by bench/analysis_fit.py from {source}: multinomial logistic regression "
        f"over the features of precis.analysis.classify{words}, classes weighted by "
        f"1/sqrt(frequency), an L2 penalty pulling every weight towards the hand-set prior "
        f"of analysis_fit.PRIORS (0 for words); cues that fire in fewer than "
        f"{min_conversations} conversations left out of the training cue sums; weights "
        f"under {drop:g} dropped and the rest refitted. Penalties {lam.structure:g} "
        f"(features) and {lam.words:g} (words): the largest within one standard error of "
        f"the best in cross-validation over {groups} groups "
        f"of conversations (macro-F1 of the held-out predictions under the same rules, "
        f"each held-out group seeing only the cues that also fire in another "
        f"conversation: {cv:.3f})."
    )
    return textwrap.wrap(text, 88)


# -- importance ------------------------------------------------------------------------------
# The importance defaults (precis.analysis.config) are fitted the same way: an ordinal
# logistic model of the gold level over the factors score_importance computes, on DEV, with
# the *held-out* types of the classifier (so the fit sees the type errors it will meet).

LEVELS = ("LOW", "MEDIUM", "HIGH")
SPEAKERS = ("system", "user", "assistant", "tool")
FACTORS = {"recency": 1, "latest_request": 1, "last_decision": 1, "references": 1,
           "density": 1, "superseded": -1, "restatement": -1, "repetitive": -1,
           "confirmation": -1}
"""The factors of score_importance and their sign: a boost (+1) or a penalty (-1)."""
REFERENCE_CAP = 3  # later fragments pointing back count up to this many
HIGH_RECALL = 0.97
"""The HIGH threshold keeps at least this share of the training fragments labelled HIGH
HIGH (the target is 0.95 on unseen conversations, hence the margin)."""
HIGH_AS_LOW = 0.005
"""The MEDIUM threshold judges at most this share of them LOW (target: almost never)."""
LEVEL_LAMBDAS = (0.01, 0.03, 0.1, 0.3)
LEVEL_SCALE = 0.1  # the width of the ordinal model's steps (scores are on a 0-1 scale)
IMPORTANCE_PRIORS: dict[str, float] = {
    # the hand-set starting values (seed 002 二.3): what matters most is what constrains or
    # decides the work; the speakers start equal
    **{f"type.{t}": w for t, w in {
        "goal": 0.55, "constraint": 0.65, "decision": 0.55, "todo": 0.5, "code": 0.5,
        "error": 0.35, "fact": 0.38, "plan": 0.3, "reasoning": 0.27, "background": 0.23,
        "chitchat": 0.0}.items()},
    **{f"speaker.{r}": 0.0 for r in SPEAKERS},
    "recency": 0.15, "latest_request": 0.3, "last_decision": 0.15, "references": 0.08,
    "density": 0.25, "superseded": -0.1, "restatement": -0.15, "repetitive": -0.15,
    "confirmation": -0.5,
    "medium": 0.22, "high": 0.54,
}
LEVEL_COLUMNS = tuple(k for k in IMPORTANCE_PRIORS if k not in ("medium", "high"))


def _unit_config() -> AnalysisConfig:
    """Every factor weighted 1 (type and speaker 0): score_importance then reports each
    factor's raw value."""
    weights = ImportanceWeights(
        type_weights=dict.fromkeys(FRAGMENT_TYPES, 0.0), recency=1.0, latest_request=1.0,
        last_decision=1.0, reference=1.0, reference_cap=float(REFERENCE_CAP), density=1.0,
        superseded=1.0, restatement=1.0, repetitive=1.0, confirmation=1.0)
    return AnalysisConfig(weights=weights)


def level_rows(lines: Sequence[dict[str, Any]], data: Sequence[Example],
               types: Sequence[str], table: CueTable) -> np.ndarray:
    """The importance factors of every example (rows in the order of ``data``; columns
    :data:`LEVEL_COLUMNS`), each conversation scored with the classifier's answers and the
    examples' types replaced by ``types``."""
    cfg = _unit_config()
    x = np.zeros((len(data), len(LEVEL_COLUMNS)))
    col = {c: j for j, c in enumerate(LEVEL_COLUMNS)}
    for line in lines:
        fragments = precis.segment(precis.load(build(line)[0])).fragments
        answers = [f.answer for f in features_in_context(fragments, table)]
        # (two labelled fragments may share one predicted fragment: same features, so the
        # same held-out type)
        mine = [(ex.index, k) for k, ex in enumerate(data) if ex.conv == line["id"]]
        for i, k in mine:
            answers[i] = replace(answers[i], type=types[k])  # type: ignore[arg-type]
        kinds = [a.type for a in answers]
        scores = score_importance(fragments, answers, consolidate(fragments, kinds), cfg)
        for i, k in mine:
            x[k, col["type." + kinds[i]]] = 1.0
            role = fragments[i].role
            if "speaker." + role in col:
                x[k, col["speaker." + role]] = 1.0
            for name, value in scores[i].factors.items():
                if name in FACTORS:
                    x[k, col[name]] = abs(value)
    return x


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def level_objective(params: np.ndarray, x: np.ndarray, y: np.ndarray, prior: np.ndarray,
                    mask: np.ndarray, lam: float) -> tuple[float, np.ndarray]:
    """Ordinal logistic loss (``P(level >= MEDIUM) = sigmoid((score - medium) / scale)``,
    the same for HIGH; HIGH examples weigh twice) + lam * ||params - prior||^2 over the
    weights, and its gradient over the entries of ``mask``."""
    d = x.shape[1]
    w, medium, high = params[:d], params[d], params[d + 1]
    s = x @ w
    p1 = _sigmoid((s - medium) / LEVEL_SCALE)
    p2 = _sigmoid((s - high) / LEVEL_SCALE)
    lik = np.where(y == 0, 1 - p1, np.where(y == 1, p1 - p2, p2))
    lik = np.maximum(lik, 1e-12)
    sample = np.where(y == 2, 2.0, 1.0)
    n = len(y)
    diff_w = (w - prior[:d]) * mask[:d]
    loss = -(sample * np.log(lik)).sum() / n + lam * float((diff_w * diff_w).sum())
    d1 = p1 * (1 - p1) / LEVEL_SCALE
    d2 = p2 * (1 - p2) / LEVEL_SCALE
    ds = np.where(y == 0, -d1, np.where(y == 1, d1 - d2, d2)) / lik
    g_s = -sample * ds / n
    grad_w = x.T @ g_s + 2 * lam * diff_w
    g_medium = -(sample * np.where(y == 0, d1, np.where(y == 1, -d1, 0.0)) / lik).sum() / n
    g_high = -(sample * np.where(y == 1, d2, np.where(y == 2, -d2, 0.0)) / lik).sum() / n
    return float(loss), np.concatenate([grad_w, [g_medium, g_high]]) * mask


def fit_levels(x: np.ndarray, y: np.ndarray, lam: float) -> np.ndarray:
    """Weights and thresholds (``LEVEL_COLUMNS``, medium, high): fitted, a factor whose
    weight has the wrong sign removed and the rest refitted, then the HIGH threshold
    lowered until :data:`HIGH_RECALL` of the HIGH examples are HIGH and the MEDIUM one
    until at most :data:`HIGH_AS_LOW` of them are LOW."""
    prior = np.array([IMPORTANCE_PRIORS[c] for c in (*LEVEL_COLUMNS, "medium", "high")])
    mask = np.ones_like(prior)
    params = lbfgs(lambda v: level_objective(v, x, y, prior, mask, lam), prior.copy())
    for j, c in enumerate(LEVEL_COLUMNS):
        if c in FACTORS and params[j] * FACTORS[c] < 0:
            mask[j] = 0.0
    if mask.min() == 0:
        start = np.where(mask > 0, params, 0.0)
        params = lbfgs(lambda v: level_objective(v, x, y, prior, mask, lam), start)
        params = np.where(mask > 0, params, 0.0)
    d = x.shape[1]
    high = np.sort((x @ params[:d])[y == 2])
    if len(high):
        k = math.floor((1 - HIGH_RECALL) * len(high))
        params[d + 1] = min(params[d + 1], high[k] - 1e-9)
        k = math.floor(HIGH_AS_LOW * len(high))
        params[d] = min(params[d], high[k] - 1e-9)
    params[d] = min(params[d], params[d + 1])
    return params


def predict_levels(x: np.ndarray, params: np.ndarray) -> np.ndarray:
    d = x.shape[1]
    s = x @ params[:d]
    return np.where(s >= params[d + 1], 2, np.where(s >= params[d], 1, 0))


def level_figures(y: np.ndarray, pred: np.ndarray) -> dict[str, float]:
    high = y == 2
    return {"accuracy": float((pred == y).mean()),
            "HIGH_recall": float((pred[high] == 2).mean()) if high.any() else 0.0,
            "HIGH_judged_LOW": float((pred[high] == 0).mean()) if high.any() else 0.0}


def cross_validate_levels(x: np.ndarray, y: np.ndarray, convs: Sequence[str],
                          lam: float) -> np.ndarray:
    pred = np.zeros_like(y)
    names = np.array(convs)
    for held in dict.fromkeys(convs):
        train, test = names != held, names == held
        pred[test] = predict_levels(x[test], fit_levels(x[train], y[train], lam))
    return pred


def current_levels(x: np.ndarray, cfg: AnalysisConfig) -> np.ndarray:
    """The levels the given config gives (same factors, its weights)."""
    w = cfg.weights
    values = {**{f"type.{t}": w.type_weights.get(t, 0.0) for t in FRAGMENT_TYPES},
              **{f"speaker.{r}": w.speaker_weights.get(r, 0.0) for r in SPEAKERS},
              "recency": w.recency, "latest_request": w.latest_request,
              "last_decision": w.last_decision, "references": w.reference,
              "density": w.density, "superseded": -w.superseded,
              "restatement": -w.restatement, "repetitive": -w.repetitive,
              "confirmation": -w.confirmation}
    params = np.array([values[c] for c in LEVEL_COLUMNS] + [cfg.medium, cfg.high])
    return predict_levels(x, params)


def importance_fit(lines: Sequence[dict[str, Any]], data: Sequence[Example],
                   types: Sequence[str], table: CueTable) -> None:
    """Print the importance defaults fitted on DEV and their held-out figures."""
    x = level_rows(lines, data, types, table)
    y = np.array([LEVELS.index(ex.level) for ex in data])
    convs = [ex.conv for ex in data]
    results = {lam: level_figures(y, cross_validate_levels(x, y, convs, lam))
               for lam in LEVEL_LAMBDAS}

    def rank(lam: float) -> tuple[bool, float, float]:
        r = results[lam]
        return (r["HIGH_recall"] >= 0.95 and r["HIGH_judged_LOW"] <= 0.01, r["accuracy"],
                lam)

    lam = max(LEVEL_LAMBDAS, key=rank)
    print("importance, held out (held-out types, leave one conversation out): "
          + "; ".join(f"{k:g}: accuracy {v['accuracy']:.3f}, HIGH {v['HIGH_recall']:.3f}, "
                      f"HIGH->LOW {v['HIGH_judged_LOW']:.3f}" for k, v in results.items())
          + f" -> {lam:g}")
    now = level_figures(y, current_levels(x, AnalysisConfig()))
    print(f"  the defaults in config.py on the same types: accuracy {now['accuracy']:.3f}, "
          f"HIGH {now['HIGH_recall']:.3f}, HIGH->LOW {now['HIGH_judged_LOW']:.3f}")
    params = fit_levels(x, y, lam)
    fitted = dict(zip((*LEVEL_COLUMNS, "medium", "high"),
                      (round(float(v), 2) for v in params)))
    print("  fitted defaults (precis/analysis/config.py):")
    print("    type_weights " + json.dumps(
        {t: fitted[f"type.{t}"] for t in FRAGMENT_TYPES}))
    print("    speaker_weights " + json.dumps({r: fitted[f"speaker.{r}"] for r in SPEAKERS}))
    print("    " + ", ".join(f"{c}={abs(fitted[c]):g}" for c in FACTORS)
          + f", reference_cap={abs(fitted['references']) * REFERENCE_CAP:g}")
    print(f"    high={fitted['high']:g}, medium={fitted['medium']:g}")


# -- main ------------------------------------------------------------------------------------


def report(gold: Sequence[str], pred: Sequence[str], title: str) -> None:
    print(title)
    golds = [Gold(str(i), "", "DEV", g, "", 0, 0, 0) for i, g in enumerate(gold)]
    rows, macro = prf(golds, {str(i): {"type": p} for i, p in enumerate(pred)})
    for name, n, p, r, f1 in rows:
        print(f"  {name:<11} n={n:<4} P={p:.3f} R={r:.3f} F1={f1:.3f}")
    print(f"  macro-F1 {macro:.3f}")
    confusion = Counter((g, p) for g, p in zip(gold, pred) if g != p)
    print("  most frequent confusions (gold -> predicted):")
    for (g, p), k in confusion.most_common(12):
        print(f"    {g} -> {p}: {k}")


def bootstrap_se(data: Sequence[Example], pred: Sequence[str], rounds: int = BOOTSTRAP,
                 seed: int = 0) -> float:
    """The standard error of the held-out macro-F1: conversations resampled with
    replacement ``rounds`` times (a fixed seed: deterministic)."""
    convs = list(dict.fromkeys(ex.conv for ex in data))
    members: dict[str, list[int]] = {c: [] for c in convs}
    for i, ex in enumerate(data):
        members[ex.conv].append(i)
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(rounds):
        picked = [i for k in rng.integers(0, len(convs), len(convs))
                  for i in members[convs[int(k)]]]
        values.append(macro_f1([data[i].gold for i in picked], [pred[i] for i in picked]))
    return float(np.std(values, ddof=1))


def select_lambda(data: Sequence[Example], lambdas: Iterable[Penalty], drop: float,
                  min_conversations: int, folds: int = FOLDS, jobs: int = 1
                  ) -> tuple[Penalty, dict[Penalty, float], float]:
    """The largest penalty whose cross-validated macro-F1 is within one standard error of
    the best (the one-standard-error rule: among settings the data cannot tell apart, the
    one that moves the weights least from the priors; the structure's penalty first, then
    the words'). Returns it, the scores and the standard error of the best."""
    gold = [ex.gold for ex in data]
    if jobs <= 1:
        preds = {lam: cross_validate(data, lam, drop, min_conversations, folds)
                 for lam in lambdas}
    else:
        with ProcessPoolExecutor(jobs) as pool:  # (the results do not depend on jobs)
            runs = {lam: pool.submit(cross_validate, data, lam, drop, min_conversations,
                                     folds) for lam in lambdas}
            preds = {lam: run.result() for lam, run in runs.items()}
    scores = {lam: macro_f1(gold, pred) for lam, pred in preds.items()}
    best = max(scores, key=lambda lam: (round(scores[lam], 6), lam))
    se = bootstrap_se(data, preds[best])
    chosen = max(lam for lam in scores if scores[lam] >= scores[best] - se)
    return chosen, scores, se


def positive(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--lam", type=float, default=None,
                    help="the L2 penalty on the structure, cue and context features "
                         "(default: chosen by cross-validation among "
                         f"{', '.join(map(str, LAMBDAS))})")
    ap.add_argument("--word-lam", type=float, default=None,
                    help="the L2 penalty on the words (default: chosen by "
                         f"cross-validation among {', '.join(map(str, WORD_LAMBDAS))})")
    ap.add_argument("--drop", type=float, default=DROP,
                    help=f"remove weights smaller than this and refit (default {DROP})")
    ap.add_argument("--min-conversations", type=int, default=MIN_CONVERSATIONS,
                    help="train on the cues that fire in at least this many "
                         f"conversations (default {MIN_CONVERSATIONS})")
    ap.add_argument("--dev-only", action="store_true",
                    help="fit on the DEV half alone, without tests/data/analysis_train")
    ap.add_argument("--no-words", action="store_true",
                    help="no lexical features (word.<unit> rows)")
    ap.add_argument("--min-word-conversations", type=int, default=MIN_WORD_CONVERSATIONS,
                    help="a word (or Chinese character pair) is a candidate feature when "
                         "it occurs in at least this many conversations (default "
                         f"{MIN_WORD_CONVERSATIONS})")
    ap.add_argument("--max-word-share", type=float, default=MAX_WORD_SHARE,
                    help="leave out words found in more than this share of the "
                         f"conversations (default {MAX_WORD_SHARE:g})")
    ap.add_argument("--folds", type=positive, default=FOLDS,
                    help=f"cross-validation groups of conversations (default {FOLDS})")
    ap.add_argument("--jobs", type=positive, default=1,
                    help="cross-validate this many penalties at once (processes)")
    ap.add_argument("--report", action="store_true",
                    help="per-type figures and confusions (in sample and held out)")
    ap.add_argument("--importance", action="store_true",
                    help="also fit the importance defaults (printed, for config.py)")
    ap.add_argument("--write", action="store_true", help="store the weights in cues.json")
    args = ap.parse_args(argv)

    dev = dev_lines()
    train = [] if args.dev_only else train_lines()
    lines = dev + train
    lexicon = ([] if args.no_words
               else lexicon_candidates(lines, args.min_word_conversations,
                                       args.max_word_share))
    # round 1: features with the prior weights; round 2: with the weights of round 1 (the
    # context of a fragment depends on the answers for the earlier ones)
    data = examples(lines, table_with(with_lexicon(PRIORS, lexicon)))
    first = Penalty(args.lam or FIRST_LAMBDA, args.word_lam or FIRST_LAMBDA)
    columns, w = fit_examples(data, first, args.drop, args.min_conversations)
    data = examples(lines, table_with(with_lexicon(weight_table(columns, w), lexicon)))
    grid = [Penalty(a, b) for a in ([args.lam] if args.lam else LAMBDAS)
            for b in ([args.word_lam] if args.word_lam or not lexicon else WORD_LAMBDAS)]
    if len(grid) > 1:
        lam, scores, se = select_lambda(data, grid, args.drop, args.min_conversations,
                                        args.folds, args.jobs)
        print("held-out macro-F1 by penalty (structure / words): "
              + ", ".join(f"{k}: {v:.3f}" for k, v in scores.items())
              + f" (standard error {se:.3f}) -> {lam}")
    else:
        lam = grid[0]
    columns, w = fit_examples(data, lam, args.drop, args.min_conversations)
    new = weight_table(columns, w)
    gold = [ex.gold for ex in data]
    held_out = cross_validate(data, lam, args.drop, args.min_conversations, args.folds)
    cv = macro_f1(gold, held_out)
    final = examples(lines, table_with(new))  # the classifier's own answers with the table
    in_sample = [ex.features.answer.type for ex in final]
    n_words = sum(1 for f in new if f.startswith(LEXICAL_PREFIX))
    print(f"fitted on {len(data)} fragments, {len(lines)} conversations ({len(dev)} DEV, "
          f"{len(train)} training); {len(lexicon)} candidate words, {n_words} kept; "
          f"penalty {lam}; macro-F1 in sample "
          f"{macro_f1([ex.gold for ex in final], in_sample):.3f}, held out "
          f"({min(args.folds, len(lines))} groups of conversations) {cv:.3f}; "
          f"{sum(map(len, new.values()))} weights")
    dev_ids = {line["id"] for line in dev}
    on_dev = [k for k, ex in enumerate(data) if ex.conv in dev_ids]
    dev_cv = macro_f1([gold[k] for k in on_dev], [held_out[k] for k in on_dev])
    print(f"  the DEV conversations alone, held out: {dev_cv:.3f}")
    if args.report:
        report([ex.gold for ex in final], in_sample, "in sample:")
        report(gold, held_out, "held out:")
    if args.importance:
        importance_fit(lines, final, held_out, table_with(new))
    text = CUES_JSON.read_text("utf-8")
    old = json.loads(text).get("weights", {})
    changes = diff(old, new)
    print(f"{len(changes)} weight(s) differ from cues.json" + (":" if changes and
                                                              len(changes) <= 200 else ""))
    if len(changes) <= 200:
        for change in changes:
            print("  " + change)
    if args.write:
        doc = weights_doc(lam, args.drop, args.min_conversations, cv, len(data), len(dev),
                          len(train), args.min_word_conversations if lexicon else 0,
                          min(args.folds, len(lines)))
        CUES_JSON.write_text(replace_weights(text, doc, new), "utf-8")
        print(f"wrote {CUES_JSON}")


if __name__ == "__main__":
    main()
