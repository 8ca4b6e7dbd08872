"""Importance scoring (seed 002 二.3): how much each fragment matters, and why.

``score = type weight + speaker + recency + references + density - redundancy``, each
factor kept in :attr:`Importance.factors` so ``precis inspect --explain`` can show it. The
level is HIGH / MEDIUM / LOW by the thresholds in
:class:`~precis.analysis.config.AnalysisConfig`.
One pass over the fragments plus one over their identifiers: linear in the input. Text
work is done once per distinct text (tool output is often repeated) and, where it is
exact, with one regex pass over many texts joined (the call overhead would dominate).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import methodcaller

from precis.analysis._phrases import EMAIL, matching
from precis.analysis.config import AnalysisConfig
from precis.analysis.model import Classification, Consolidation, Level
from precis.segment.model import Fragment

__all__ = ["Importance", "identifiers", "score_importance"]

# Identifiers that tie a later fragment to an earlier one: inline code, URLs, paths,
# ticket ids, file names, snake_case and camelCase names. Inline code may span spaces and
# is looked for in the whole text; the other kinds never hold white space, so they are
# looked for in each distinct white-space separated token once per conversation (a token
# starts and ends where white space does, which every pattern treats like the edge of the
# text, so the matches are the same). One pattern per kind, each run only when a character
# it needs is in the token (a cheap C-level test).
_INLINE_CODE = re.compile(r"`([^`\n]{2,80})`")
_TOKEN_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("://", re.compile(r"(https?://[^\s`'\"<>)\]]+)")),
    ("/", re.compile(r"(?<![\w.~@/-])((?:[\w.~@-]+)?(?:/[\w.@~-]+)+/?)")),
    ("-", re.compile(r"\b([A-Z][A-Z0-9]+-\d+)\b")),
    (".", re.compile(
        r"(?<![\w.-])([\w-]+\.(?:py|js|ts|tsx|jsx|json|md|sql|ya?ml|toml|go|rs|java|csv|txt|sh"
        r"|ini|cfg|lock|html|css))\b")),
    ("_", re.compile(r"\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b")),
    ("", re.compile(r"\b([a-z]+[A-Z][A-Za-z0-9]*)\b")),
)
# Something every token with an identifier holds (a superset of the patterns above, without
# their word boundaries): "`", "/", "_", "-" and a digit, a lower-case letter and a capital,
# "." and a file extension. One pass over the vocabulary leaves the other tokens out. Each
# is found at its one character from a small set (the capital of camelCase, with the letter
# before it looked back at), so the search skips every other character at C speed.
_IDENT_HINT = re.compile(
    r"[`/_\-.A-Z](?:(?<=[`/_])|(?<=-)\d|(?<=[a-z][A-Z])|(?<=\.)(?:py|js|ts|tsx|jsx|json|md|sql"
    r"|ya?ml|toml|go|rs|java|csv|txt|sh|ini|cfg|lock|html|css))"
)

# Specific information: numbers, versions, ids, paths, parameters, step markers. The path
# alternative scans every word to its end and back (quadratic in a run of Chinese
# characters); a sample without a slash cannot match it, so it uses the pattern without it
# (an alternative that cannot match anywhere changes no match).
_DENSE_PARTS = (
    r"\d+(?:[.,:]\d+)*%?",
    r"`[^`\n]+`",
    r"--?[a-zA-Z][\w-]*",
    r"[\w.-]*/[\w./-]+",
    r"\b[A-Z]{2,}\b",
    r"(?m:^\s*(?:\d+[.)]|[-*+])\s)",
)
_DENSE = re.compile("|".join(_DENSE_PARTS))
# Without the path, every match starts at a digit, "`", "-", a capital, white space (a list
# marker's indent) or "*" / "+": a lookahead on that character turns the other positions
# (most of a Chinese text) away before the alternatives are tried, and changes no match.
_DENSE_NO_PATH = re.compile(
    r"(?=[\d`\-A-Z*+\s])(?:" + "|".join(p for p in _DENSE_PARTS if "/" not in p) + ")"
)
# Density samples are counted together: joined by _SAMPLE_SEP, every match replaced by
# _MARK, split again. No alternative matches across "\x00\n" (none matches a line break
# or, but for inline code, "\x00"), and "^" / "\b" / "\s" see it as the end and start of
# a text: the counts are those of each sample on its own.
_SAMPLE_SEP = "\x00\n"
_MARK = "\x01"
# A later fragment pointing back at an earlier one.
_BACK_REFERENCE = re.compile(
    r"as (?:i |we )?(?:mentioned|said|discussed|agreed|noted)|as before|like before|"
    r"the same (?:query|sql|code|script|command|approach|file|config|one)|"
    r"(?:from|in) the (?:previous|earlier|last) (?:message|step|query|answer)|"
    r"(?:that|the) (?:query|sql|script|snippet|command) (?:above|earlier|before)|"
    r"刚才|前面(?:说|提|那)|之前(?:说|提|那|的)|上面(?:的|那)|还是按|按照?刚才|同样的|那个\s*(?:SQL|sql|脚本|方案|命令)",
    re.IGNORECASE,
)
# Words one of which every _BACK_REFERENCE match holds, lower case: looked for in the
# lower-cased texts all at once (a case-blind pattern has no fast path in the regex
# engine). Lower-casing keeps such a word for every character the case-blind match takes
# but three (dotted / dotless i, long s): texts holding those go to _BACK_REFERENCE directly.
_BACK_HINT = re.compile(
    r"as (?:i |we )?(?:mentioned|said|discussed|agreed|noted)|before|above|earlier|previous|"
    r"the last |the same |刚才|前面|之前|上面|还是按|同样的|那个"
)
_CASE_ODD = re.compile("[\u0130\u0131\u017f]")
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
_SPEAKERS = frozenset({"user", "assistant"})
_DENSITY_SAMPLE = 600  # density is a ratio: the head of a long fragment estimates it
# What a fragment's factors depend on: type, speaker (when speakers weigh anything), age in
# user turns (when recent), latest request?, last decision?, references, density,
# (folded?, superseded?, restated?) when any, long and repetitive?
_FactorKey = tuple[
    str, str | None, int | None, bool, bool, int, float, tuple[bool, bool, bool] | None, bool
]


@dataclass(frozen=True)
class Importance:
    """A fragment's importance: total score, level and the value of every factor.

    Read-only: fragments with the same factors share one instance.
    """

    score: float
    level: Level
    factors: dict[str, float]


def identifiers(text: str) -> set[str]:
    """The identifiers in ``text`` (lower-cased): names, paths, ids, URLs, inline code."""
    return _identifiers_of([text]).get(0, set())


def _token_identifiers(token: str) -> tuple[str, ...]:
    found: list[str] = []
    for needle, pattern in _TOKEN_PATTERNS:
        if needle in token if needle else token != token.lower() and token != token.upper():
            # (camelCase needs a lower-case and an upper-case letter)
            found.extend(v.lower() for v in pattern.findall(token) if len(v) >= 3)
    return tuple(found)


def _identifiers_of(texts: Sequence[str]) -> dict[int, set[str]]:
    """:func:`identifiers` of every text that has some, by position.

    Each distinct token of all the texts is looked at once: one regex pass over the
    vocabulary finds the few tokens that can hold an identifier, and each text is then
    only split and intersected with those (C-level calls).
    """
    token_lists = list(map(str.split, texts))
    vocabulary = list(set().union(*token_lists))
    holding: dict[str, tuple[str, ...]] = {}
    for k in matching(_IDENT_HINT, vocabulary):
        ids = _token_identifiers(vocabulary[k])
        if ids:
            holding[vocabulary[k]] = ids
    del vocabulary
    found_in: dict[int, set[str]] = {}
    held = holding.keys()
    for i, tokens in enumerate(token_lists):
        hits = held & tokens
        text = texts[i]
        if "`" in text:
            found = {v.lower() for v in _INLINE_CODE.findall(text) if len(v) >= 3}
        elif not hits:
            continue
        else:
            found = set()
        for token in hits:
            found.update(holding[token])
        if found:
            found_in[i] = found
    return found_in


def _terms(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def _back_references(fragments: Sequence[Fragment]) -> set[int]:
    """Indices of the spoken fragments that hold a :data:`_BACK_REFERENCE` phrase."""
    spoken = [i for i, f in enumerate(fragments)
              if f.role in _SPEAKERS and f.kind not in _NOT_SPOKEN]
    texts = list(dict.fromkeys(fragments[i].text for i in spoken))  # each distinct text once
    maybe = set(matching(_BACK_HINT, list(map(str.lower, texts))))
    maybe.update(matching(_CASE_ODD, texts))
    found = {texts[k] for k in maybe if _BACK_REFERENCE.search(texts[k])}
    return {i for i in spoken if fragments[i].text in found} if found else set()


def _reference_counts(fragments: Sequence[Fragment], types: Sequence[str]) -> list[int]:
    """How many later fragments point back at each fragment."""
    refs = [0] * len(fragments)
    texts = [f.text for f in fragments]
    distinct = list(dict.fromkeys(texts))  # each distinct text once
    of_text = {distinct[k]: found for k, found in _identifiers_of(distinct).items()}
    found_in = {i: of_text[text] for i, text in enumerate(texts) if text in of_text}
    backrefs = _back_references(fragments)
    slots = _kind_slots(fragments, types) if backrefs else ([], [], [])
    last_seen: dict[str, int] = {}
    terms: dict[int, set[str]] = {}
    for i in sorted(found_in.keys() | backrefs):
        found = found_in.get(i)
        if found:
            message = fragments[i].provenance.message
            for ident in found:
                earlier = last_seen.get(ident)
                # an earlier fragment of the same message does not count
                if earlier is not None and fragments[earlier].provenance.message != message:
                    refs[earlier] += 1
                last_seen[ident] = i
        if i in backrefs:
            last_of_kind = {}
            for slot, positions in enumerate(slots):
                k = bisect_left(positions, i)
                if k:
                    last_of_kind[slot] = positions[k - 1]
            target = _back_reference_target(i, fragments, last_of_kind, terms)
            if target is not None:
                refs[target] += 2
    return refs


def _kind_slots(
    fragments: Sequence[Fragment], types: Sequence[str]
) -> tuple[list[int], list[int], list[int]]:
    """Positions of the SQL blocks, the code and the errors (what "that query", "the
    script", "the error" point back at), each fragment in its first slot only."""
    sql = [i for i, f in enumerate(fragments) if f.kind == "sql"]
    code = [i for i, f in enumerate(fragments)
            if f.kind != "sql" and (types[i] == "code" or f.kind == "code")]
    error = [i for i, f in enumerate(fragments)
             if types[i] == "error" and f.kind not in ("sql", "code")]
    return sql, code, error


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


def _densities(texts: Sequence[str]) -> list[float]:
    """Specific information per character in the head of each text: numbers, versions,
    ids, e-mail addresses, paths, parameters and step markers (matches of :data:`_DENSE`
    and of ``EMAIL``) per 60 characters, at most 1. Each distinct head is counted once, all
    in two regex passes (with and without a slash) and one more over the heads with an
    "@"."""
    heads = [t[:_DENSITY_SAMPLE] for t in texts]
    density = dict.fromkeys(heads, 0.0)  # each distinct head: 0 unless something matches
    with_slash = [s for s in density if "/" in s]
    without = [s for s in density if "/" not in s]
    # an e-mail address is an identifier (counted apart: no cheap first character)
    emails = {s: n for s in density if "@" in s for n in [len(EMAIL.findall(s))] if n}
    for group, pattern in ((with_slash, _DENSE), (without, _DENSE_NO_PATH)):
        joined = _SAMPLE_SEP.join(group)
        counts: Iterable[int]
        if joined.count("\x00") == len(group) - 1 and _MARK not in joined:
            counts = map(methodcaller("count", _MARK),
                         pattern.sub(_MARK, joined).split(_SAMPLE_SEP))
        else:  # a sample holds the separator or the mark: one at a time
            counts = [len(pattern.findall(s)) for s in group]
        for sample, hits in zip(group, counts):
            hits += emails.get(sample, 0)
            if hits:
                density[sample] = min(1.0, hits / (1.0 + len(sample) / 60.0))
    return list(map(density.__getitem__, heads))


def _repetitive(text: str) -> bool:
    if len(text) < 400:
        return False
    words = text.split()
    if len(words) < 40:  # CJK: characters stand in for words
        return len(set(text)) / len(text) < 0.3
    return len(set(words)) / len(words) < 0.3


def _redundant(consolidation: Consolidation) -> tuple[set[str], set[str]]:
    """The later copies of repeated statements, and the fragments a newer version of a
    requirement replaces (not merely a later copy of the same words)."""
    restated: set[str] = set()
    copy_of: dict[str, str] = {}
    for group in consolidation.duplicates:
        restated.update(group.members[1:])
        for member in group.members[:-1]:
            copy_of[member] = group.kept
    superseded = {old for old, new in consolidation.superseded_by.items()
                  if copy_of.get(old) != new}
    return restated, superseded


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
    messages: list[int] = []
    turn, last_round = 0, -1
    last_user_message = -1
    for frag in fragments:
        prov = frag.provenance
        if frag.role == "user":
            last_user_message = prov.message
            if prov.round != last_round:
                turn += 1
        last_round = prov.round
        turn_of.append(turn)
        messages.append(prov.message)
    last_turn = turn
    types = [c.type for c in classes]
    last_decision = max((i for i, t in enumerate(types) if t == "decision"), default=-1)
    # (a factor weighted 0 is left out of the explanation, and its text work skipped)
    refs = (_reference_counts(fragments, types) if w.reference and w.reference_cap
            else [0] * len(fragments))
    texts = [f.text for f in fragments]
    densities = _densities(texts) if w.density else [0.0] * len(fragments)

    repeats = ({t for t in {t for t in texts if len(t) >= 400} if _repetitive(t)}
               if w.repetitive else set())
    long_repetitive = {i for i, t in enumerate(texts) if t in repeats} if repeats else set()
    type_weights = w.type_weights
    speaker_weights = {r: v for r, v in w.speaker_weights.items() if v}
    recent_rounds = w.recent_rounds
    recency = ({age: w.recency * (1 - age / recent_rounds) for age in range(recent_rounds)}
               if w.recency else {})
    latest_request, last_decision_weight = w.latest_request, w.last_decision
    reference, reference_cap, density_weight = w.reference, w.reference_cap, w.density
    confirmation, superseded_weight = -w.confirmation, -w.superseded
    repetitive = -w.repetitive
    folded = consolidation.folded if w.confirmation else set()
    restated, superseded = _redundant(consolidation)
    if not w.restatement:
        restated = set()
    if not w.superseded:
        superseded = set()
    restatement = -w.restatement
    marked = folded | superseded | restated  # the few fragments a redundancy factor hits
    high, medium = cfg.high, cfg.medium

    def build(ctype: str, role: str | None, age: int | None, latest: bool, last: bool,
              refs: int, density: float, redundant: tuple[bool, bool, bool] | None,
              long_repeat: bool) -> Importance:
        factors: dict[str, float] = {"type": type_weights.get(ctype, 0.0)}
        if role is not None and role in speaker_weights:
            factors["speaker"] = speaker_weights[role]
        if age is not None:
            factors["recency"] = recency[age]
        if latest:
            factors["latest_request"] = latest_request
        if last and last_decision_weight:
            factors["last_decision"] = last_decision_weight
        if refs:
            factors["references"] = min(reference_cap, reference * refs)
        if density:
            factors["density"] = density_weight * density
        if redundant is not None:
            is_folded, is_superseded, is_restated = redundant
            if is_folded:
                factors["confirmation"] = confirmation
            if is_superseded:
                factors["superseded"] = superseded_weight
            if is_restated:
                factors["restatement"] = restatement
        if long_repeat:
            factors["repetitive"] = repetitive
        score = round(sum(factors.values()), 4)
        level: Level = "HIGH" if score >= high else "MEDIUM" if score >= medium else "LOW"
        return Importance(score, level, factors)

    # The factors depend on a few exact values only (the type, the speaker, the age, flags,
    # the reference count, the density): fragments that agree on them get equal factors,
    # so their Importance (immutable) is built once and shared, like a Classification.
    shared: dict[_FactorKey, Importance] = {}
    results: list[Importance] = []
    for i, (frag, ctype, turn_i, message, ref, density) in enumerate(
        zip(fragments, types, turn_of, messages, refs, densities)
    ):
        age = last_turn - turn_i
        fid = frag.id
        key: _FactorKey = (
            ctype,
            frag.role if speaker_weights else None,
            age if age in recency else None,
            bool(latest_request) and ctype != "chitchat" and message == last_user_message,
            i == last_decision,
            ref,
            density if ctype != "chitchat" else 0.0,
            (fid in folded, fid in superseded, fid in restated) if fid in marked else None,
            i in long_repetitive,
        )
        found = shared.get(key)
        if found is None:
            found = shared[key] = build(*key)
        results.append(found)
    return results
