"""Cue tables of the fragment type classifier: bilingual phrases and regexes with weights.

The cues are data (``cues.json`` next to this module), not code; a user extends them in
config (``[analysis.cues]``) with the same shape::

    {"types": {"goal": {"en": {"ship it": 2.0},
                        "zh": {"我要上线": {"weight": 2.5, "roles": ["user"]}},
                        "start": {"kindly": 1.0},
                        "regex": {"\\\\bJIRA-\\\\d+\\\\b": 0.5}}},
     "tags": {"documentation": {"en": {"wiki": 1}}},
     "imperative": ["ship"],
     "weights": {"question.user": {"goal": 1.2, "background": 0.6}}}

* ``types.<type>``: one of the eleven fragment types. Sections: ``en`` / ``zh`` (phrases
  found anywhere), ``start`` (phrases that count only where the fragment starts, after a
  list marker or heading mark), ``regex`` (searched in the lower-cased text). A type name
  may also be given at the top level as a shorthand for ``types.<type>``.
* A value is a weight (a number; negative weights count against the type, 0 switches a
  built-in cue off) or ``{"weight": w, "roles": ["user", ...], "label": "..."}``: ``roles``
  limits the cue to fragments from those speakers, ``label`` names it in the evidence.
  A list of phrases gives each weight 1.
* ``tags.<tag>``: the same shape, for the secondary tags (seed 000 content classes,
  ``tech:*``, ``actionable`` / ``informational``).
* ``imperative``: verbs that make a sentence an instruction when they open it: an
  English word is the first word ("add", "fix"); any other (Chinese "使用", "列出") is a
  prefix of the text, since Chinese has no spaces.
* ``weights``: how each feature of a fragment votes for types, ``feature -> {type:
  weight}``. Features are the cue sums (``cue_sum.goal``: the summed weights of the goal
  phrases that occur; ``cue_sum.goal.assistant``: the same, from the assistant), structure
  (``question.user``, ``imperative.assistant``, ``block.code_fence``, ``error.traceback``,
  ``prose.data.user``, ``length.tiny``, ...), the speaker (``role.user``) and context
  (``context.lead_in.plan``, ``context.answers_choice``, ...) and words: a row
  ``word.<unit>`` (lower case) makes a word of running text (or, in Chinese, a pair of
  adjacent characters: :func:`lexical_units`) a feature worth 1 where it occurs (the
  built-in table has none). A fragment's score for a type is the sum of ``value * weight``
  over its features. The built-in weights were fitted on the DEV half of the labelled set
  (``tests/data/analysis_eval``) by regularised logistic regression around hand-set
  starting values (``bench/analysis_fit.py``); a user entry replaces the weights it names
  (0 removes one).

Matching is case-insensitive. An ASCII phrase matches whole words and ignores the
punctuation between them (``"let's go with"`` matches "Let's go with"; ``"ok"`` does not
match "token"); any other phrase (Chinese, emoji) matches as a substring. Every cue that
occurs counts once.

Speed: Python's ``re`` tries an alternation branch by branch at every position, so one
alternation of hundreds of phrases (even one per type) costs 20-100 µs per sentence.
Instead the phrases are indexed: an ASCII phrase by its longest word (the text's words come
from one ``bytes.translate`` + ``split``; a C-level set intersection finds the candidate
phrases, a substring test over the joined words confirms a multi-word one); any other
phrase by its rarest character (a set intersection with the text's characters, then a
substring test). Each regex cue is searched on its own, so one that opens with a
literal is scanned at C speed; one that opens with a Chinese literal only when the text
holds that character.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from precis.analysis.model import FRAGMENT_TYPES
from precis.errors import ConfigError

__all__ = [
    "LEXICAL_HAN_CHARS",
    "LEXICAL_PREFIX",
    "ROLES",
    "SECTIONS",
    "Cue",
    "CueTable",
    "lexical_units",
    "words",
]

SECTIONS = ("en", "zh", "start", "regex")
"""The sections of one type's (or tag's) cue table."""
ROLES = ("system", "user", "assistant", "tool")
_TOP_KEYS = ("version", "types", "tags", "imperative", "weights")
_MAX_WEIGHT = 100.0

# Words: runs of ASCII letters, digits, "_", "'" and "-" ("don't", "follow-up",
# "pk_live_7f3c"); everything else (punctuation, Chinese, emoji) separates them. Computed
# with bytes.translate + split, ~10x faster than a regex findall.
_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789_'-")
_TOKEN_TABLE = bytes(i if i in _WORD_BYTES else 0x20 for i in range(256))
_WORD_CHAR = re.compile(r"[a-z0-9_]")
_PLAIN_WORD = re.compile(r"[a-z0-9_]+(?:['-][a-z0-9_]+)*")


def words(lowered: str) -> list[str]:
    """The words of an already lower-cased text, as the phrase index sees them.

    Quote marks at the edges of a word are dropped (``'ok'`` is ``ok``); apostrophes and
    hyphens inside a word are kept (``don't``, ``follow-up``).
    """
    if "'" in lowered:
        lowered = lowered.replace(" '", " ").replace("' ", " ")
        if lowered.startswith("'"):
            lowered = lowered[1:]
        if lowered.endswith("'"):
            lowered = lowered[:-1]
    return (
        lowered.encode("utf-8", "surrogatepass").translate(_TOKEN_TABLE).decode("ascii").split()
    )


LEXICAL_PREFIX = "word."
"""Weight rows named ``word.<unit>`` make a word (or a pair of Chinese characters) a
feature of every running-text fragment that holds it; see :func:`lexical_units`."""
LEXICAL_HAN_CHARS = 100
"""Pairs of Chinese characters are taken from the first this many of them (the pairs of a
long paragraph cost time and its opening says what it is)."""
_HAN_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{2,}")
# A run of printable ASCII that holds "://", "/", "\", "`", "@" or a dot before a letter or
# digit: a URL, path, code span, address, file or host name; data, not vocabulary.
_DATA_RUN = re.compile(r"[!-~]*(?:://|[/\\`@]|\.[a-z0-9_])[!-~]*")


def _is_unit(unit: str) -> bool:
    """Whether :func:`lexical_units` can yield ``unit``: one lower-case word, or a pair of
    Chinese characters."""
    if unit.isascii():  # a run of word characters (the bytes words() keeps)
        raw = unit.encode("ascii")
        return bool(raw) and b" " not in raw and raw.translate(_TOKEN_TABLE) == raw
    return len(unit) == 2 and _HAN_RUN.fullmatch(unit) is not None


def lexical_units(low: str, tokens: list[str]) -> list[str]:
    """The units a lexical weight row can name in a lower-cased text: its :func:`words`
    (``tokens``) and every pair of adjacent Chinese characters among the first
    :data:`LEXICAL_HAN_CHARS` (Chinese has no spaces, and a pair is the most common length
    of a Chinese word). Words inside URLs, paths, code spans, addresses and file or host
    names are left out ("example" of ``wiki.example.com`` says nothing of the sentence)."""
    cleaned = _DATA_RUN.sub(" ", low)
    if cleaned != low:
        low, tokens = cleaned, words(cleaned)
    if low.isascii():
        return tokens
    units = list(tokens)
    room = LEXICAL_HAN_CHARS
    for run in _HAN_RUN.findall(low):
        if len(run) > room:
            run = run[:room]
        units += [run[i : i + 2] for i in range(len(run) - 1)]
        room -= len(run)
        if room < 2:
            break
    return units


class Cue(NamedTuple):
    """One cue: its ``target`` (a fragment type, or a tag when ``tag``), weight and label.

    ``roles`` limits the cue to fragments from those speakers (``None``: any speaker);
    ``evidence`` is how it is reported (``cue:<label>``). A tuple, so the classifier can
    unpack it in its inner loop.
    """

    target: str
    weight: float
    label: str
    roles: frozenset[str] | None = None
    tag: bool = False
    evidence: str = ""

    def applies(self, role: str) -> bool:
        return self.roles is None or role in self.roles


# ---------------------------------------------------------------------------------------
# Validation: a cue table as plain, normalised data
# ---------------------------------------------------------------------------------------

# target kind ("types" / "tags") -> name -> section -> phrase -> (weight, roles, label)
_Entry = tuple[float, "tuple[str, ...] | None", "str | None"]
_Data = dict[str, dict[str, dict[str, dict[str, _Entry]]]]


def _empty_data() -> _Data:
    return {"types": {}, "tags": {}}


def _weight(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"a cue weight must be a number, got {value!r}", where=where)
    weight = float(value)
    if not math.isfinite(weight) or abs(weight) > _MAX_WEIGHT:
        raise ConfigError(
            f"a cue weight must be finite and between -{_MAX_WEIGHT:g} and {_MAX_WEIGHT:g}, "
            f"got {value!r}",
            where=where,
        )
    return weight


def _entry(value: Any, where: str) -> _Entry:
    if not isinstance(value, Mapping):
        return (_weight(value, where), None, None)
    unknown = sorted(set(value) - {"weight", "roles", "label"})
    if unknown:
        raise ConfigError(
            f"unknown cue field(s) {', '.join(map(repr, unknown))}; known: weight, roles, label",
            where=where,
        )
    if "weight" not in value:
        raise ConfigError("a cue needs a 'weight'", where=where)
    weight = _weight(value["weight"], f"{where}.weight")
    roles = value.get("roles")
    if roles is not None:
        if isinstance(roles, str):
            roles = [roles]
        if not isinstance(roles, (list, tuple)) or not roles:
            raise ConfigError(
                f"'roles' must be a list of speakers, got {roles!r}", where=f"{where}.roles"
            )
        bad = [r for r in roles if r not in ROLES]
        if bad:
            raise ConfigError(
                f"unknown role(s) {', '.join(map(repr, bad))}; known: {', '.join(ROLES)}",
                where=f"{where}.roles",
            )
        roles = tuple(dict.fromkeys(roles))
    label = value.get("label")
    if label is not None and (not isinstance(label, str) or not label.strip()):
        raise ConfigError(f"'label' must be a non-empty string, got {label!r}", where=where)
    return (weight, roles, label)


def _check_regex(pattern: str, where: str) -> None:
    try:
        compiled = re.compile(pattern)
    except (re.error, RecursionError, OverflowError, ValueError) as err:
        raise ConfigError(f"bad regular expression {pattern!r}: {err}", where=where) from None
    for probe in ("", "x", "a b", "中文"):
        match = compiled.search(probe)
        if match is not None and match.start() == match.end():
            raise ConfigError(f"cue regex {pattern!r} matches the empty string", where=where)


def _section(value: Any, section: str, where: str) -> dict[str, _Entry]:
    if isinstance(value, (list, tuple)):
        value = dict.fromkeys(value, 1.0)
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"expected a table of cue -> weight, got {type(value).__name__}", where=where
        )
    out: dict[str, _Entry] = {}
    for key, raw in value.items():
        if not isinstance(key, str) or not key.strip():
            raise ConfigError(f"a cue must be a non-empty string, got {key!r}", where=where)
        entry_where = f"{where}[{key!r}]"
        if section == "regex":
            _check_regex(key, entry_where)
            phrase = key
        else:
            phrase = " ".join(key.lower().replace("\u2019", "'").split())
        out[phrase] = _entry(raw, entry_where)
    return out


def _target(value: Any, where: str) -> dict[str, dict[str, _Entry]]:
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"expected a table with sections {', '.join(SECTIONS)}, got {type(value).__name__}",
            where=where,
        )
    out: dict[str, dict[str, _Entry]] = {}
    for section, body in value.items():
        if section not in SECTIONS:
            raise ConfigError(
                f"unknown cue section {section!r}; known: {', '.join(SECTIONS)}", where=where
            )
        out[section] = _section(body, section, f"{where}.{section}")
    return out


_Weights = dict[str, dict[str, float]]


def _weights(value: Any, where: str) -> _Weights:
    """A validated ``feature -> {type: weight}`` table."""
    if not isinstance(value, Mapping):
        raise ConfigError("expected a table feature -> {type: weight}", where=where)
    out: _Weights = {}
    for feature, row in value.items():
        if not isinstance(feature, str) or not feature.strip():
            raise ConfigError(f"a feature must be a non-empty string, got {feature!r}",
                              where=where)
        if not isinstance(row, Mapping):
            raise ConfigError(f"expected a table type -> weight, got {type(row).__name__}",
                              where=f"{where}[{feature!r}]")
        if feature.startswith(LEXICAL_PREFIX) and not _is_unit(feature[len(LEXICAL_PREFIX):]):
            raise ConfigError(
                f"{feature!r} names no unit the classifier can find: a word row needs one "
                "lower-case word (letters, digits, _ ' -) or two Chinese characters",
                where=f"{where}[{feature!r}]")
        parsed: dict[str, float] = {}
        for name, weight in row.items():
            if name not in FRAGMENT_TYPES:
                raise ConfigError(
                    f"unknown fragment type {name!r}; known: {', '.join(FRAGMENT_TYPES)}",
                    where=f"{where}[{feature!r}]",
                )
            parsed[name] = _weight(weight, f"{where}[{feature!r}].{name}")
        out[feature] = parsed
    return out


def _validate(data: Any, where: str) -> tuple[_Data, list[str], _Weights]:
    """Normalised ``(types/tags data, imperative verbs, weights)`` of a user or built-in
    table."""
    if not isinstance(data, Mapping):
        raise ConfigError(
            f"a cue table must be a table (mapping), got {type(data).__name__}", where=where
        )
    out = _empty_data()
    imperative: list[str] = []
    weights: _Weights = {}
    for key, value in data.items():
        if not isinstance(key, str):
            raise ConfigError(f"unknown key {key!r}", where=where)
        if key.startswith("_") or key == "version":
            continue  # comments and the format version
        if key == "types":
            if not isinstance(value, Mapping):
                raise ConfigError("expected a table type -> cues", where=f"{where}.types")
            items: Iterable[tuple[Any, Any]] = value.items()
            for name, body in items:
                if name not in FRAGMENT_TYPES:
                    raise ConfigError(
                        f"unknown fragment type {name!r}; known: {', '.join(FRAGMENT_TYPES)}",
                        where=f"{where}.types",
                    )
                out["types"][name] = _target(body, f"{where}.types.{name}")
        elif key == "tags":
            if not isinstance(value, Mapping):
                raise ConfigError("expected a table tag -> cues", where=f"{where}.tags")
            for name, body in value.items():
                if not isinstance(name, str) or not name.strip():
                    raise ConfigError(f"a tag must be a non-empty string, got {name!r}",
                                      where=f"{where}.tags")
                out["tags"][name] = _target(body, f"{where}.tags.{name}")
        elif key == "imperative":
            if isinstance(value, str) or not isinstance(value, (list, tuple)):
                raise ConfigError("expected a list of verbs", where=f"{where}.imperative")
            for verb in value:
                if not isinstance(verb, str) or not (
                    _PLAIN_WORD.fullmatch(verb.lower())
                    or (not verb.isascii() and verb.strip() and not any(c.isspace() for c in verb))
                ):
                    raise ConfigError(
                        f"an imperative verb must be one plain word, got {verb!r}",
                        where=f"{where}.imperative",
                    )
                imperative.append(verb.lower())
        elif key == "weights":
            weights = _weights(value, f"{where}.weights")
        elif key in FRAGMENT_TYPES:
            out["types"][key] = _target(value, f"{where}.{key}")
        else:
            raise ConfigError(
                f"unknown key {key!r}; expected {', '.join(_TOP_KEYS)} or a fragment type "
                f"({', '.join(FRAGMENT_TYPES)})",
                where=where,
            )
    return out, imperative, weights


def _merge(base: _Data, extra: _Data) -> _Data:
    merged: _Data = {kind: {n: {s: dict(p) for s, p in t.items()} for n, t in base[kind].items()}
                     for kind in ("types", "tags")}
    for kind in ("types", "tags"):
        for name, target in extra[kind].items():
            dest = merged[kind].setdefault(name, {})
            for section, phrases in target.items():
                dest.setdefault(section, {}).update(phrases)
    return merged


# ---------------------------------------------------------------------------------------
# The compiled index
# ---------------------------------------------------------------------------------------


# The most frequent Han characters in ordinary text, most frequent first (the head of the
# usual character-frequency lists). A Chinese phrase is indexed by its rarest character:
# one not in this list, else the one latest in it (不超过 by 超), so a text rarely holds a
# phrase's key without the phrase and few phrases are tested per text.
_FREQUENT_HAN = (
    "的一是不了在人有我他这个们中来上大为和国地到以说时要就出会可也你对生能而子那得于着下自"
    "之年过发后作里用道行所然家种事成方多经么去法学如都同现当没动面起看定天分还进好小部其些"
    "主样理心她本前开但因只从想实日军者意无力它与长把机十民第公此已工使情明性知全三又关点正"
    "业外将两高间由问很最重并物手应战向头文体政美相见被利什二等产或新己制身果加西斯月话合回"
    "特代内信表化老给世位次度门任常先海通教儿原东声提立及比员解水名真论处走义各入几口认条平"
    "系气题活尔更别打女变四神总何电数安少报才结反受目太量再感建务做接必场件计管期市直德资命"
    "山金指克许统区保至队形社便空决治展马科司五基眼书非则听白却界达光放强即像难且权思王象完"
    "设式色路记南品住告类求据程北边死张该交规万取拉格望觉术领共确传师观清今切院让识候带导争"
    "运笑飞风步改收根干造言联持组每济车亲极林服快办议往元英士证近失转夫令准布始怎呢存未远叫"
    "台单影具罗字爱击流备兵连调深商算质团集百需价花党华城石级整府离况亚请技际约示复病息究线"
)
_HAN_RANK = {ch: i for i, ch in enumerate(_FREQUENT_HAN)}
_NOT_RANKED = len(_FREQUENT_HAN)


def _key_char(phrase: str) -> str:
    """The character a non-ASCII phrase is indexed by: its rarest letter (Han characters
    by :data:`_FREQUENT_HAN`, any other non-ASCII letter before them), else its first
    character."""
    best, rank = phrase[0], -1
    for ch in phrase:
        if ch.isascii() or not ch.isalnum():
            continue  # ASCII letters, punctuation, spaces are poor keys
        r = _HAN_RANK.get(ch, _NOT_RANKED)
        if r > rank:
            best, rank = ch, r
    return best


class _Index:
    """The phrase / start / regex indexes of a table (see the module docstring).

    ASCII phrases are indexed by one of their words (the longest, so the rarest): a
    phrase is tested only when that word occurs in the text. Other phrases are indexed by
    their rarest character (:func:`_key_char`).
    """

    def __init__(self, data: _Data) -> None:
        phrases: dict[str, list[Cue]] = {}
        starts: dict[str, list[Cue]] = {}
        patterns: dict[str, list[Cue]] = {}
        for kind in ("types", "tags"):
            for name, target in data[kind].items():
                for section, entries in target.items():
                    dest = {"regex": patterns, "start": starts}.get(section, phrases)
                    for phrase, (weight, roles, label) in entries.items():
                        if weight == 0:
                            continue
                        shown = label or phrase
                        dest.setdefault(phrase, []).append(
                            Cue(name, weight, shown, frozenset(roles) if roles else None,
                                kind == "tags", "cue:" + shown)
                        )
        by_word: dict[str, list[tuple[str | None, tuple[Cue, ...]]]] = {}
        by_char: dict[str, list[tuple[str, tuple[Cue, ...]]]] = {}
        for phrase, cues in phrases.items():
            parts = words(phrase)
            if phrase.isascii() and parts:
                key = max(reversed(parts), key=len)
                padded = None if len(parts) == 1 else " " + " ".join(parts) + " "
                by_word.setdefault(key, []).append((padded, tuple(cues)))
            else:
                by_char.setdefault(_key_char(phrase), []).append((phrase, tuple(cues)))
        start_by_char: dict[str, list[tuple[str, bool, tuple[Cue, ...]]]] = {}
        for phrase, cues in starts.items():
            boundary = _WORD_CHAR.match(phrase[-1]) is not None
            start_by_char.setdefault(phrase[0], []).append((phrase, boundary, tuple(cues)))
        self.by_word = {w: tuple(v) for w, v in by_word.items()}
        self.key_words = frozenset(self.by_word)
        self.by_char = {c: tuple(v) for c, v in by_char.items()}
        self.key_chars = frozenset(c for c in self.by_char if not c.isascii())
        # the key characters a text holds, found by one regex pass: a character class is
        # tested at C speed and only its matches become strings (iterating a text makes a
        # string of every character)
        self.key_char_pattern = (
            re.compile("[" + "".join(sorted(map(re.escape, self.key_chars))) + "]")
            if self.key_chars else None
        )
        self.ascii_first = tuple(sorted(c for c in self.by_char if c.isascii()))
        self.start_by_char = {c: tuple(v) for c, v in start_by_char.items()}
        # One search per regex: a regex that opens with a literal or a small set of
        # characters is scanned at C speed, which one big alternation would not be.
        # A regex that opens with a non-ASCII literal (Chinese) is searched only when the
        # text holds that character; the others always.
        self.regexes = tuple((re.compile(p, re.MULTILINE), tuple(c)) for p, c in patterns.items())
        self.plain_regexes = tuple((rx, c) for rx, c in self.regexes if rx.pattern[0].isascii())
        self.lead_regexes = tuple(
            (rx.pattern[0], rx, c) for rx, c in self.regexes if not rx.pattern[0].isascii()
        )

    def scan(self, low: str, tokens: list[str], lead: int) -> list[Cue]:
        """Every cue that occurs in ``low`` (lower-cased text; ``tokens`` its words)."""
        found: list[Cue] = []
        cand = self.key_words.intersection(tokens)
        if cand:
            norm = ""
            for word in sorted(cand):
                for padded, cues in self.by_word[word]:
                    if padded is not None:
                        if not norm:
                            norm = " " + " ".join(tokens) + " "
                        if padded not in norm:
                            continue
                    found.extend(cues)
        ascii_text = low.isascii()
        if not ascii_text:
            if self.key_char_pattern is not None:
                by_char = self.by_char
                for ch in sorted(set(self.key_char_pattern.findall(low))):
                    for phrase, cues in by_char[ch]:
                        if phrase in low:
                            found += cues
            for ch, pattern, cues in self.lead_regexes:
                if ch in low and pattern.search(low) is not None:
                    found.extend(cues)
        for ch in self.ascii_first:
            for phrase, cues in self.by_char[ch]:
                if phrase in low:
                    found.extend(cues)
        if lead < len(low):
            for phrase, boundary, cues in self.start_by_char.get(low[lead], ()):
                if low.startswith(phrase, lead):
                    end = lead + len(phrase)
                    if boundary and end < len(low) and _WORD_CHAR.match(low, end):
                        continue
                    found.extend(cues)
        # (no pre-check: a search skips to the regex's first literal or class at C speed,
        # faster than testing for it from Python)
        for pattern, cues in self.plain_regexes:
            if pattern.search(low) is not None:
                found.extend(cues)
        return found


# ---------------------------------------------------------------------------------------
# CueTable
# ---------------------------------------------------------------------------------------


class CueTable:
    """A validated, compiled set of cues. Build with :meth:`default`, :meth:`from_dict`,
    :meth:`load`; add user cues with :meth:`extended` (a new table; tables are immutable).
    """

    __slots__ = ("_compiled", "_data", "_imperative", "_index", "_lexicon", "_prefix_index",
                 "_prefixes", "_weights")

    def __init__(self, data: _Data, imperative: Iterable[str] = (),
                 weights: _Weights | None = None) -> None:
        self._data = data
        self._imperative = frozenset(imperative)
        self._prefixes = tuple(sorted(v for v in self._imperative if not v.isascii()))
        by_first: dict[str, list[str]] = {}
        for verb in self._prefixes:
            by_first.setdefault(verb[0], []).append(verb)
        self._prefix_index = {c: tuple(v) for c, v in by_first.items()}
        self._weights = weights
        self._index: _Index | None = None
        self._compiled: dict[str, tuple[tuple[str, float], ...]] | None = None
        self._lexicon: frozenset[str] | None = None

    # -- construction ------------------------------------------------------------------

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = "cues") -> CueTable:
        """A table holding exactly the cues of ``data`` (see the module docstring)."""
        parsed, imperative, weights = _validate(data, where)
        return cls(parsed, imperative, weights if "weights" in data else None)

    @classmethod
    def default(cls) -> CueTable:
        """The built-in bilingual table (``cues.json``), loaded once."""
        return _default_table()

    @classmethod
    def load(cls, path: str | Path) -> CueTable:
        """A table from a JSON or TOML file (by suffix; ``.toml`` needs Python >= 3.11 or
        the ``tomli`` package)."""
        return cls.from_dict(_read_file(Path(path)), where=str(path))

    def extended(self, additions: Mapping[str, Any], *, where: str = "cues") -> CueTable:
        """A new table: this one plus ``additions`` (same shape as ``cues.json``).

        A phrase already in the table takes the new weight (0 switches it off); unknown
        type names, bad weights or bad regexes raise :class:`~precis.errors.ConfigError`
        naming the entry.
        """
        extra, imperative, weights = _validate(additions, where)
        if not extra["types"] and not extra["tags"] and not imperative and not weights:
            return self
        merged = None
        if weights:
            merged = {f: dict(row) for f, row in self._weight_data().items()}
            for feature, row in weights.items():
                merged.setdefault(feature, {}).update(row)
        elif self._weights is not None:
            merged = self._weights
        return CueTable(_merge(self._data, extra), self._imperative | set(imperative), merged)

    # -- use ---------------------------------------------------------------------------

    @property
    def imperative(self) -> frozenset[str]:
        """Verbs that make a sentence an instruction when they open it."""
        return self._imperative

    @property
    def imperative_prefixes(self) -> tuple[str, ...]:
        """The non-English imperative verbs, which open a sentence as a prefix."""
        return self._prefixes

    def opens_with_prefix(self, low: str, start: int = 0) -> bool:
        """Whether ``low`` holds one of :attr:`imperative_prefixes` at ``start``
        (``low.startswith(self.imperative_prefixes, start)``, trying only the verbs that
        begin with the character there)."""
        if start >= len(low):
            return False
        verbs = self._prefix_index.get(low[start])
        return verbs is not None and low.startswith(verbs, start)

    @property
    def weights(self) -> Mapping[str, tuple[tuple[str, float], ...]]:
        """``feature -> ((type, weight), ...)`` without zero weights: the table's own
        ``weights``, or the built-in ones when it has none."""
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = {
                feature: tuple((t, w) for t, w in row.items() if w)
                for feature, row in self._weight_data().items()
            }
        return compiled

    @property
    def lexicon(self) -> frozenset[str]:
        """The units (words, pairs of Chinese characters) that have a ``word.<unit>`` row
        in :attr:`weights`, even an empty one: the lexical features the classifier
        looks for."""
        lexicon = self._lexicon
        if lexicon is None:
            cut = len(LEXICAL_PREFIX)
            lexicon = self._lexicon = frozenset(
                f[cut:] for f in self.weights if f.startswith(LEXICAL_PREFIX))
        return lexicon

    def _weight_data(self) -> _Weights:
        if self._weights is not None:
            return self._weights
        default = _default_table()
        if default is self or default._weights is None:
            return {}
        return default._weights

    def scan(self, low: str, tokens: list[str] | None = None, lead: int = 0) -> list[Cue]:
        """The cues occurring in ``low`` (already lower-cased, ``’`` as ``'``).

        ``tokens`` are its :func:`words` (computed when not given); ``lead`` is where the
        fragment's first word starts, for ``start`` cues.
        """
        index = self._index
        if index is None:
            index = self._index = _Index(self._data)
        return index.scan(low, words(low) if tokens is None else tokens, lead)

    def to_dict(self) -> dict[str, Any]:
        """The table as plain data in the ``cues.json`` shape (round-trips via from_dict)."""
        def entry(e: _Entry) -> Any:
            weight, roles, label = e
            if roles is None and label is None:
                return weight
            out: dict[str, Any] = {"weight": weight}
            if roles is not None:
                out["roles"] = list(roles)
            if label is not None:
                out["label"] = label
            return out

        result: dict[str, Any] = {"version": 1}
        for kind in ("types", "tags"):
            result[kind] = {
                name: {s: {p: entry(e) for p, e in phrases.items()} for s, phrases in t.items()}
                for name, t in self._data[kind].items()
            }
        result["imperative"] = sorted(self._imperative)
        if self._weights is not None:
            result["weights"] = {f: dict(row) for f, row in self._weights.items()}
        return result

    def __repr__(self) -> str:
        n = sum(len(p) for t in self._data["types"].values() for p in t.values())
        return f"<CueTable {n} type cues, {len(self._data['tags'])} tags>"


def _read_file(path: Path) -> Any:
    where = str(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError("cue file not found", where=where) from None
    except OSError as err:
        raise ConfigError(f"cannot read cue file: {err.strerror or err}", where=where) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ConfigError("cue file is not UTF-8 text", where=where) from None
    if path.suffix.lower() == ".toml":
        try:
            import tomllib as toml  # type: ignore[import-not-found,unused-ignore]
        except ModuleNotFoundError:  # Python 3.10
            try:
                import tomli as toml  # type: ignore[import-not-found,no-redef,unused-ignore]
            except ModuleNotFoundError:
                raise ConfigError(
                    "reading a TOML cue file needs Python 3.11+ or the 'tomli' package; "
                    "use JSON instead",
                    where=where,
                ) from None
        try:
            return toml.loads(text)
        except toml.TOMLDecodeError as err:
            raise ConfigError(f"invalid TOML: {err}", where=where) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ConfigError(
            f"invalid JSON: {err.msg} (line {err.lineno}, column {err.colno})", where=where
        ) from None
    except RecursionError:
        raise ConfigError("invalid JSON: nested too deeply", where=where) from None


@cache
def _default_table() -> CueTable:
    text = Path(__file__).with_name("cues.json").read_text("utf-8")
    return CueTable.from_dict(json.loads(text), where="precis/analysis/cues.json")
