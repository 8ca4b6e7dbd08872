"""Importance scoring (seed 002 二.3): how much each fragment matters, and why.

``score = type weight + recency + references + density - redundancy``, each factor kept in
:attr:`Importance.factors` so ``precis inspect --explain`` can show it. The level is HIGH /
MEDIUM / LOW by the thresholds in :class:`~precis.analysis.config.AnalysisConfig`.
One pass over the fragments plus one over their identifiers: linear in the input.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from precis.analysis.config import AnalysisConfig
from precis.analysis.model import Classification, Consolidation, Level
from precis.segment.model import Fragment

__all__ = ["Importance", "identifiers", "score_importance"]

# Identifiers that tie a later fragment to an earlier one: inline code, URLs, paths,
# ticket ids, file names, snake_case and camelCase names. One pattern per kind, each run
# only when a character it needs is in the text (a cheap C-level test), which keeps long
# tool output fast.
_IDENT_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("`", re.compile(r"`([^`\n]{2,80})`")),
    ("://", re.compile(r"(https?://[^\s`'\"<>)\]]+)")),
    ("/", re.compile(r"(?<![\w.~@/-])((?:[\w.~@-]+)?(?:/[\w.@~-]+)+/?)")),
    ("-", re.compile(r"\b([A-Z][A-Z0-9]+-\d+)\b")),
    (".", re.compile(
        r"(?<![\w.-])([\w-]+\.(?:py|js|ts|tsx|jsx|json|md|sql|ya?ml|toml|go|rs|java|csv|txt|sh"
        r"|ini|cfg|lock|html|css))\b")),
    ("_", re.compile(r"\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b")),
    ("", re.compile(r"\b([a-z]+[A-Z][A-Za-z0-9]*)\b")),
)
# Specific information: numbers, versions, ids, paths, parameters, step markers.
_DENSE = re.compile(
    r"\d+(?:[.,:]\d+)*%?"
    r"|`[^`\n]+`"
    r"|--?[a-zA-Z][\w-]*"
    r"|[\w.-]*/[\w./-]+"
    r"|\b[A-Z]{2,}\b"
    r"|(?m:^\s*(?:\d+[.)]|[-*+])\s)"
)
# A later fragment pointing back at an earlier one.
_BACK_REFERENCE = re.compile(
    r"as (?:i |we )?(?:mentioned|said|discussed|agreed|noted)|as before|like before|"
    r"the same (?:query|sql|code|script|command|approach|file|config|one)|"
    r"(?:from|in) the (?:previous|earlier|last) (?:message|step|query|answer)|"
    r"(?:that|the) (?:query|sql|script|snippet|command) (?:above|earlier|before)|"
    r"刚才|前面(?:说|提|那)|之前(?:说|提|那|的)|上面(?:的|那)|还是按|按照?刚才|同样的|那个\s*(?:SQL|sql|脚本|方案|命令)",
    re.IGNORECASE,
)
_KIND_HINT = re.compile(r"(sql|query|查询)|(code|script|snippet|脚本|代码)|(error|报错|错误)", re.I)
_WORD = re.compile(r"[a-z][a-z0-9_]{3,}|[\u4e00-\u9fff]{2}")
_STOP = frozenset(
    [
        "this", "that", "with", "from", "have", "will", "would", "should", "could", "there",
        "their", "about", "which", "what", "when", "then", "than", "them", "they", "into", "your",
        "just", "like", "also", "been", "were", "does", "make", "more", "some", "only",
    ]
)
_BACK_WINDOW = 50
_NOT_SPOKEN = frozenset({"tool_call", "tool_result", "code", "sql", "json", "table"})
_DENSITY_SAMPLE = 600  # density is a ratio: the head of a long fragment estimates it


@dataclass(frozen=True)
class Importance:
    """A fragment's importance: total score, level and the value of every factor."""

    score: float
    level: Level
    factors: dict[str, float]


def identifiers(text: str) -> set[str]:
    """The identifiers in ``text`` (lower-cased): names, paths, ids, URLs, inline code."""
    found: set[str] = set()
    for needle, pattern in _IDENT_PATTERNS:
        if needle in text:
            found.update(v.lower() for v in pattern.findall(text) if len(v) >= 3)
    return found


def _terms(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def _reference_counts(
    fragments: Sequence[Fragment], classes: Sequence[Classification]
) -> list[int]:
    """How many later fragments point back at each fragment."""
    refs = [0] * len(fragments)
    last_seen: dict[str, int] = {}
    last_of_kind: dict[int, int] = {}
    terms: dict[int, set[str]] = {}
    for i, frag in enumerate(fragments):
        for ident in identifiers(frag.text):
            earlier = last_seen.get(ident)
            same_message = earlier is not None and (
                fragments[earlier].provenance.message == frag.provenance.message
            )
            if earlier is not None and not same_message:
                refs[earlier] += 1
            last_seen[ident] = i
        speaks = frag.role in ("user", "assistant") and frag.kind not in _NOT_SPOKEN
        if speaks and _BACK_REFERENCE.search(frag.text):
            target = _back_reference_target(i, fragments, last_of_kind, terms)
            if target is not None:
                refs[target] += 2
        kind_slot = _kind_slot(frag, classes[i])
        if kind_slot is not None:
            last_of_kind[kind_slot] = i
    return refs


def _kind_slot(frag: Fragment, cls: Classification) -> int | None:
    if frag.kind == "sql":
        return 0
    if cls.type == "code" or frag.kind == "code":
        return 1
    if cls.type == "error":
        return 2
    return None


def _back_reference_target(
    i: int,
    fragments: Sequence[Fragment],
    last_of_kind: dict[int, int],
    terms: dict[int, set[str]],
) -> int | None:
    """The earlier fragment a back-reference points at: the last one of the kind it names
    ("that SQL", "刚才那个脚本"), else the recent one sharing the most terms."""
    hint = _KIND_HINT.search(fragments[i].text)
    if hint:
        slot = next(n for n, g in enumerate(hint.groups()) if g)
        if slot == 0 and 0 not in last_of_kind and 1 in last_of_kind:
            slot = 1  # "that query" may point at a code block holding the SQL
        if slot in last_of_kind:
            return last_of_kind[slot]
    own = _terms(fragments[i].text)
    best, best_overlap = None, 0
    message = fragments[i].provenance.message
    for j in range(i - 1, max(-1, i - _BACK_WINDOW), -1):
        if fragments[j].provenance.message == message:
            continue
        if j not in terms:
            terms[j] = _terms(fragments[j].text)
        overlap = len(own & terms[j])
        if overlap > best_overlap:
            best, best_overlap = j, overlap
    return best


def _density(text: str) -> float:
    text = text[:_DENSITY_SAMPLE]
    hits = len(_DENSE.findall(text))
    return min(1.0, hits / (1.0 + len(text) / 60.0))


def _repetitive(text: str) -> bool:
    if len(text) < 400:
        return False
    words = text.split()
    if len(words) < 40:
        words = list(text)  # CJK: characters stand in for words
    return len(set(words)) / len(words) < 0.3


def score_importance(
    fragments: Sequence[Fragment],
    classes: Sequence[Classification],
    consolidation: Consolidation,
    config: AnalysisConfig | None = None,
) -> list[Importance]:
    """Score every fragment; ``classes[i]`` is the type of ``fragments[i]``."""
    cfg = config or AnalysisConfig()
    w = cfg.weights
    # User turns: how many user rounds have begun up to each fragment.
    turn_of: list[int] = []
    turn, last_round = 0, -1
    last_user_message = -1
    for frag in fragments:
        if frag.role == "user" and frag.provenance.round != last_round:
            turn += 1
        last_round = frag.provenance.round
        turn_of.append(turn)
        if frag.role == "user":
            last_user_message = frag.provenance.message
    last_turn = turn
    last_decision = max(
        (i for i, c in enumerate(classes) if c.type == "decision"), default=-1
    )
    refs = _reference_counts(fragments, classes)

    results: list[Importance] = []
    for i, frag in enumerate(fragments):
        cls = classes[i]
        factors: dict[str, float] = {"type": w.type_weights.get(cls.type, 0.0)}
        age = last_turn - turn_of[i]
        if w.recent_rounds and age < w.recent_rounds:
            factors["recency"] = w.recency * (1 - age / w.recent_rounds)
        if frag.provenance.message == last_user_message and cls.type != "chitchat":
            factors["latest_request"] = w.latest_request
        if i == last_decision:
            factors["last_decision"] = w.last_decision
        if refs[i]:
            factors["references"] = min(w.reference_cap, w.reference * refs[i])
        density = _density(frag.text)
        if density and cls.type != "chitchat":
            factors["density"] = w.density * density
        if frag.id in consolidation.folded:
            factors["confirmation"] = -w.confirmation
        if frag.id in consolidation.superseded_by:
            factors["superseded"] = -w.superseded
        if _repetitive(frag.text):
            factors["repetitive"] = -w.repetitive
        score = round(sum(factors.values()), 4)
        level: Level = "HIGH" if score >= cfg.high else "MEDIUM" if score >= cfg.medium else "LOW"
        results.append(Importance(score=score, level=level, factors=factors))
    return results
