"""Fragment type classification (seed 002 二.2): a rule layer, and an optional model layer.

Rule layer: a fragment's *features* vote for types through a weight table, and the type with
the highest total wins (exact ties go to the type earlier in :data:`PRIORITY`). Features are

* cue sums: the summed weights of the bilingual phrases and regexes of a
  :class:`~precis.analysis.cues.CueTable` that occur, one feature per type and speaker
  (``cue_sum.goal``, ``cue_sum.goal.user``), scanned in the first :data:`SCAN_CHARS`
  characters of running text (:data:`BLOCK_SCAN_CHARS` of a block, where they count 0.4);
  each cue is listed in the evidence (``cue:必须``, ``cue:let's go with``);
* structure: the fragment kind (code / SQL / JSON blocks, a table, a tool call or result),
  code fences and their language, tracebacks, error lines, failing logs, exit codes and
  error statuses, shell commands, SQL statements, a question mark, an imperative verb at
  the start (English words, Chinese prefixes such as 使用 / 列出), a numbered item, a
  lead-in colon, clauses, numbers / ids / inline code, the length
  (``structure:traceback``, ``structure:question``, ...);
* the speaker (``role:user``), whose votes start every score;
* context, from :func:`classify_all`: a list item after the line that introduces it
  ("Plan:", "有三个方案："), a user's reply to an assistant question that makes a choice
  ("Drop them."), the assistant's sentences after an error or a tool result, the first user
  message, a user's reply (``context:...``);
* words of running text: every word (or pair of adjacent Chinese characters) that has a
  ``word.<unit>`` row in the weight table (:func:`~precis.analysis.cues.lexical_units`);
  the evidence names the :data:`_SHOWN_WORDS` that vote most for the winner
  (``word:because``).

The weight table (``weights`` in ``cues.json``, ``feature -> {type: weight}``) is data: it
was fitted on the DEV half of the labelled set by regularised logistic regression around
hand-set starting weights (``bench/analysis_fit.py`` refits it, also from a training set
and with words; never from TEST), and a user can override any entry. ``confidence`` is the softmax
probability of the winner over the eleven types. ``tags`` are the secondary labels of seed
000: up to two content classes (``technical_specification``, ``code_implementation``,
``error_information``, ``user_interaction``, ``workflow_status``, ``documentation``), a
technical level (``tech:basic|intermediate|advanced``) and ``actionable`` or
``informational``.

Model layer: :func:`classify_all` sends the fragments whose rule confidence is below
``threshold`` to a :class:`TypeVoter` in one batch; a voter's answer replaces the rule
answer (``source`` is the voter's name). A voter that raises or answers nonsense leaves the
rule answers in place (with ``voter_failed`` in their evidence): classification never fails
because a voter did.

Speed: a handful of C-level passes per fragment (lower-casing the scan window, splitting
it into words, set intersections against the cue index, a few anchored regex matches,
marker searches for error lines over at most :data:`ERROR_HEAD` + :data:`ERROR_TAIL`
characters), never a Python loop over the cue table; a few dictionary additions for the
votes. A text that repeats in the same context (the same tool output, "ok", a re-read
file, the same sentence 100k times) is classified once per :func:`classify_all` call.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from itertools import islice
from typing import NamedTuple, Protocol, runtime_checkable

from precis.analysis._phrases import ANSWER_LEAD, EMAIL
from precis.analysis.cues import LEXICAL_PREFIX, CueTable, lexical_units, words
from precis.analysis.model import FRAGMENT_TYPES, Classification, FragmentType
from precis.errors import ConfigError
from precis.segment.model import Fragment

__all__ = [
    "BLOCK_SCAN_CHARS",
    "ERROR_HEAD",
    "ERROR_TAIL",
    "PRIORITY",
    "SCAN_CHARS",
    "Features",
    "TypeVoter",
    "classify",
    "classify_all",
    "cue_sum_features",
    "features_in_context",
]

PRIORITY: tuple[FragmentType, ...] = (
    "error", "code", "constraint", "decision", "goal", "todo", "plan", "fact", "reasoning",
    "background", "chitchat",
)
"""Tie order: on equal evidence the type that loses less when kept wins."""

SCAN_CHARS = 600
"""Cues are looked for in the first this many characters of running text ..."""
BLOCK_SCAN_CHARS = 200
"""... and of a block (code, tool output), where they count less than its structure."""
ERROR_HEAD = 4000
ERROR_TAIL = 1000
"""Error lines are looked for in the first / last this many characters of a block."""

_SHORT_ZH = 16  # a chitchat cue counts fully in a Chinese fragment up to this many chars
_SHORT_EN = 32  # ... or an English one up to this many
_MAX_EVIDENCE = 10

# -- structure patterns -------------------------------------------------------------------

# List markers, heading marks, emphasis and quote marks before the first word.
_LEAD = re.compile(r"(?:\s|[>*_#•·+\-]|\d{1,3}(?:[.)](?=\s)|、)|[（(]\d{1,3}[)）])*")
_NUMBERED = re.compile(
    r"\s*(?:\d{1,3}(?:[.)](?=\s)|、)|[（(]\d{1,3}[)）]|step \d+|第[一二三四五六七八九十\d]+步)"
)
# Clause marks: one regex pass counts them all (no two of them overlap, so the count is the
# sum of the counts of each); it skips the other characters at C speed.
_CLAUSE_MARK = re.compile(", |; |，|；")
# Digit runs are counted with bytes.translate + split (a regex findall is ~5x slower).
_DIGIT_TABLE = bytes(i if 0x30 <= i <= 0x39 else 0x20 for i in range(256))
_FENCE_INFO = re.compile(r"(?:```|~~~)[ \t]*([\w+#.-]*)")
_SQL = re.compile(
    r"(?:select\s+(?:distinct\s+)?[\w*`\"(]|insert\s+into\s|update\s+[\w.`\"]+\s+set\s"
    r"|delete\s+from\s|create\s+(?:or\s+replace\s+)?(?:temp(?:orary)?\s+)?"
    r"(?:table|index|unique\s+index|view|materialized\s+view|function|schema|database)\s"
    r"|alter\s+table\s|drop\s+(?:table|index|view)\s|with\s+\w+\s+as\s*\("
    r"|explain\s+(?:analyze\s+)?select\s)"
)
# A shell command on one line. Commands that are also English words ("go", "make",
# "find") count only when an argument looks like a flag, path or assignment.
_SHELL = re.compile(
    r"(?:\$ |> |# )?(?:sudo )?(?:"
    r"(?:pip3?|pipx|npm|npx|yarn|pnpm|git|docker|docker-compose|kubectl|helm|cargo|rustup|uv|"
    r"uvx|poetry|brew|apt|apt-get|yum|dnf|curl|wget|mvn|gradle|systemctl|journalctl|pytest|"
    r"psql|gh|terraform|conda|nvidia-smi|vllm|dbt|chmod|chown|mkdir|ssh|scp|rsync|jq|ruff|"
    r"mypy|tox|nox|bq|gcloud|aws|az|redis-cli|sqlite3|dotnet|xcodebuild|adb|ffmpeg|"
    r"systemextensionsctl|tar|unzip|gcc|cmake|deno|bun)(?: \S+)*"
    r"|(?:go|make|find|cat|ls|cd|echo|export|source|python3?|node|java|rm|cp|mv|grep|rg|sed|"
    r"awk|kill|head|tail|touch|du|df|ps|bash|sh)(?: \S+)*? (?:[-./~$]\S*|\S*[/=]\S*)(?: \S+)*"
    r")$"
)
_SENTENCE_END = (".", "?", "!", "。", "？", "！", ",", "，", ":", "：", ";", "；")
_OUTPUT_HINTS = frozenset(
    {"text", "txt", "log", "logs", "console", "output", "plaintext", "plain", "shell-session",
     "terminal", "stdout", "stderr", "csv", "tsv"}
)
_DATA_HINTS = frozenset({"json", "jsonl", "yaml", "yml", "toml", "xml", "ini", "csv", "tsv"})
_SQL_HINTS = frozenset({"sql", "mysql", "postgresql", "postgres", "psql", "sqlite", "plsql",
                        "tsql", "hql", "bigquery", "snowflake", "presto", "trino"})
_BLOCK_KINDS = frozenset({"code", "sql", "json", "table"})

# Error evidence is found from markers: a lower-cased marker ("err", "fail", ...) locates a
# candidate; an anchored pattern confirms it at the start of its line (tracebacks,
# "ValueError: ...", "npm ERR!", "FAILED", stack frames) or at the marker itself ("3 failed",
# an "error" key in JSON, "HTTP/1.1 500"). Searching whole blocks with one pattern would run
# at ~7 MB/s; finding markers runs at hundreds of MB/s.
_ERROR_LINE_START = re.compile(
    r"(?P<traceback>[ \t]*Traceback \(most recent call last\))"
    r"|(?P<exception>[ \t]*(?:[\w$]+\.)*[A-Z]\w*(?:Error|Exception|Fault)\b(?::|[ \t]*$))"
    r"|(?P<error_line>[ \t]*(?:E {2,}\S|npm ERR!|FAILED\b|FAIL\b|ERROR\b|Error:|"
    r"error(?:\[\w+\])?:|fatal:|FATAL\b|panic:|Exception in thread|Caused by:|"
    r"Segmentation fault|Killed\b|CRITICAL\b))"
    r"|(?P<stack_frame>[ \t]+at [\w$.<>/]+\(.*\)[ \t]*$)"
    # a log line at an error level after its time stamp / bracketed fields:
    # "2024-05-13 10:22:01,311 ERROR [worker] ...", "[ERROR] BUILD FAILURE", "E | ..."
    r"|(?P<log_error>[ \t]*(?:\[[^\]\n]{1,40}\][ \t]*|\d[\d\-/:.,TZ+]*[ \t]+){0,4}"
    r"\[?(?:ERROR|FATAL|CRITICAL|SEVERE|ERR)\]?(?:[ \t:|\]-]|$))"
)
# "3 failed", "12 errors" (not "0 failed", not "1.5 failed"): a count just before the marker
_COUNT_BEFORE = "|".join(f"(?<=(?<![0-9.,])[1-9]{'[0-9]' * n} )" for n in range(4))
_ERROR_AT_MARK = re.compile(
    rf"(?P<failures>(?:{_COUNT_BEFORE})(?:fail(?:ed|ures?)|errors?)\b"
    r"|(?i:fail(?:ures?|ed)|errors?): ?[1-9])"
    r"|(?P<error_payload>(?<=\")(?i:errors?|err|exception)\"\s*:"
    r"(?!\s*(?:null|\[\]|\{\}|\"\"|false)))"
    r"|(?P<error_code>error TS\d+|error\[E\d+\]|(?i:http)/\d(?:\.\d)? [45]\d\d\b|ERR_[A-Z_]+\b)"
    # structured logs: level=error, "level": "error"; a failed build
    r"|(?P<log_error>(?:(?<=level=)|(?<=level\":\")|(?<=level\": \")|(?<=severity=))"
    r"(?i:error|fatal|crit))"
    r"|(?P<build_failed>(?<=(?i:build) )(?i:fail(?:ed|ure)))"
)
# failures that operating systems, shells, databases and cluster tools print
_ERROR_PHRASE = re.compile(
    r"(?P<exit_code>(?i:exit(?:ed)?(?: with)?(?: code| status)[ :=]*[1-9]\d*"
    r"|(?<=non-zero )exit))"
    r"|(?P<os_error>(?i:no such file or directory|permission denied|command not found"
    r"|connection refused))"
    r"|(?P<cluster_error>(?i:crashloopbackoff|oomkilled))"
    r"|(?P<sql_error>(?i:ora)-\d{5}\b|(?i:sqlstate)\[?\w*)"
    r"|(?P<exception>(?i:uncaught) \w*(?i:error|exception))"
)
# a numeric HTTP error status in JSON: "status": 500, "statusCode": 429, "code": 503
_ERROR_STATUS_NUMBER = re.compile(
    r'(?P<error_status>"(?i:status(?:_?code)?|code|http_?status)"\s*:\s*[45]\d\d\b)'
)
_ERROR_STATUS_VALUE = re.compile(
    r"\s*:\s*\"[^\"\n]*(?i:fail|error|limit|denied|invalid|timeout|unauthori[sz]ed|"
    r"forbidden|not_found|refused|exceeded)"
)
_ERROR_WEIGHT = {
    "traceback": 6.0,
    "exception": 5.0,
    "error_line": 5.0,
    "stack_frame": 4.0,
    "failures": 4.5,
    "error_payload": 5.0,
    "error_code": 4.0,
    "log_error": 4.5,
    "build_failed": 4.5,
    "exit_code": 4.0,
    "os_error": 4.5,
    "cluster_error": 4.5,
    "sql_error": 4.5,
    "error_status": 4.5,
}
# marker (lower case) -> check the line start?, pattern to match at the marker (or None)
_ERROR_MARKS: tuple[tuple[str, bool, re.Pattern[str] | None], ...] = (
    ("traceback", True, None),
    ("err", True, _ERROR_AT_MARK),
    ("exception", True, _ERROR_AT_MARK),
    ("fail", True, _ERROR_AT_MARK),
    ("fatal", True, None),
    ("panic", True, None),
    ("killed", True, None),
    ("fault", True, None),
    ("critical", True, None),
    ("caused by", True, None),
    ("http/", False, _ERROR_AT_MARK),
    ("severe", True, None),
    ("exit", False, _ERROR_PHRASE),
    ("no such file", False, _ERROR_PHRASE),
    ("permission denied", False, _ERROR_PHRASE),
    ("command not found", False, _ERROR_PHRASE),
    ("connection refused", False, _ERROR_PHRASE),
    ("crashloopbackoff", False, _ERROR_PHRASE),
    ("oomkilled", False, _ERROR_PHRASE),
    ("ora-", False, _ERROR_PHRASE),
    ("sqlstate", False, _ERROR_PHRASE),
    ("uncaught", False, _ERROR_PHRASE),
)
_MULTILINE_MARKS: tuple[tuple[str, bool, re.Pattern[str] | None], ...] = (
    ("e  ", True, None), ("at ", True, None),
)
_JSON_MARKS: tuple[tuple[str, bool, re.Pattern[str] | None], ...] = (
    ('"status"', False, _ERROR_STATUS_VALUE),
    ('"code"', False, _ERROR_STATUS_VALUE),
    ('"state"', False, _ERROR_STATUS_VALUE),
    ('"status', False, _ERROR_STATUS_NUMBER),
    ('"code"', False, _ERROR_STATUS_NUMBER),
    ('"http', False, _ERROR_STATUS_NUMBER),
)
_LINES_PER_MARK = 4
_CODE_MARKS = ("def ", "class ", "import ", "return ", "function ", "const ", "public ",
               "private ", "func ", "fn ", "#include", "package ", "let ", "var ", " => ",
               "->", "){", ") {", "};", "self.", "this.", "print(", "console.", "</")

_TYPE_CLASS = {
    "code": "code_implementation",
    "error": "error_information",
    "plan": "workflow_status",
    "todo": "workflow_status",
    "goal": "user_interaction",
    "chitchat": "user_interaction",
}
_EMPTY = Classification("chitchat", 1.0, ("tech:basic", "informational"), ("structure:empty",))
# First words of a shell command line (checked before the full pattern).
_COMMANDS = frozenset({
    "pip", "pip3", "pipx", "npm", "npx", "yarn", "pnpm", "git", "docker", "docker-compose",
    "kubectl", "helm", "cargo", "rustup", "uv", "uvx", "poetry", "brew", "apt", "apt-get",
    "yum", "dnf", "curl", "wget", "mvn", "gradle", "systemctl", "journalctl", "pytest", "psql",
    "gh", "terraform", "conda", "nvidia-smi", "vllm", "dbt", "chmod", "chown", "mkdir", "ssh",
    "scp", "rsync", "jq", "ruff", "mypy", "tox", "nox", "bq", "gcloud", "aws", "az",
    "redis-cli", "sqlite3", "dotnet", "xcodebuild", "adb", "ffmpeg", "systemextensionsctl",
    "tar", "unzip", "gcc", "cmake", "deno", "bun", "sudo", "go", "make", "find", "cat", "ls",
    "cd", "echo", "export", "source", "python", "python3", "node", "java", "rm", "cp", "mv",
    "grep", "rg", "sed", "awk", "kill", "head", "tail", "touch", "du", "df", "ps", "bash", "sh"
})
_SQL_STARTS = frozenset(
    {"select", "insert", "update", "delete", "create", "alter", "drop", "with", "explain"}
)
_ACTIONABLE_TYPES = frozenset({"goal", "constraint", "plan", "todo", "decision"})
_INFORMATIONAL_TYPES = frozenset({"background", "fact", "reasoning", "chitchat", "error"})
_NON_CLASS_TAGS = frozenset({"actionable", "informational"})

_Evidence = list[tuple[str, float, str]]
_CueHits = list[tuple[str, float, str]]

_ROLES = frozenset({"system", "user", "assistant", "tool"})
_ROLE_FEATURE = {r: "role." + r for r in ("system", "user", "assistant", "tool", "other")}
_ROLE_EVIDENCE = {r: (f, 1.0, "role:" + r) for r, f in _ROLE_FEATURE.items()}
# role-specific features of running text: name -> (feature, 1.0, label)
_PROSE_KEYS = {
    r: {"numbered": f"numbered.{r}", "question": f"question.{r}",
        "imperative": f"imperative.{r}", "lead_in": f"prose.lead_in.{r}",
        "clauses": f"prose.clauses.{r}", "data": f"prose.data.{r}"}
    for r in _ROLE_FEATURE
}
_PROSE_LABELS = {"numbered": "structure:numbered_item", "question": "structure:question",
                 "imperative": "structure:imperative", "lead_in": "structure:lead_in"}
_PROSE = {r: {n: (keys[n], 1.0, label) for n, label in _PROSE_LABELS.items()}
          for r, keys in _PROSE_KEYS.items()}
# the cue-sum feature of each type, per speaker (see _Model)
_CUE_KEYS: dict[str, dict[str, str]] = {
    r: {t: f"cue_sum.{t}@{r}" for t in FRAGMENT_TYPES}
    for r in ("system", "user", "assistant", "tool", "other")
}
_ZERO: dict[str, float] = dict.fromkeys(FRAGMENT_TYPES, 0.0)
_FALLBACK = {"user": "background", "assistant": "fact", "tool": "fact", "system": "constraint"}
_EMPTY_ROW: dict[str, float] = {}
_CUE_CAP = 8.0  # a cue sum counts up to this much (a long text piles up phrases)
_KIND_FEATURE: dict[str, tuple[str, float, str]] = {
    k: ("kind." + k, 1.0, "structure:" + k)
    for k in ("heading", "thinking", "image", "list_item", "paragraph")
}


@runtime_checkable
class TypeVoter(Protocol):
    """The optional model layer: votes on fragments the rules are unsure about.

    ``vote`` gets ``(fragment, rule answer)`` pairs and the candidate types, and returns
    one answer per pair, in order: a :class:`Classification`, or ``None`` to keep the rule
    answer. It is called once per :func:`classify_all` call, with every fragment below the
    threshold.
    """

    name: str

    def vote(
        self,
        items: Sequence[tuple[Fragment, Classification]],
        candidates: Sequence[FragmentType],
    ) -> Sequence[Classification | None]: ...


# -- the rule layer -----------------------------------------------------------------------


def classify(fragment: Fragment, cues: CueTable | None = None) -> Classification:
    """The type of one fragment by the rules, on its own (:func:`classify_all` also uses
    the neighbours): as if it were a whole message. Never raises on odd text (empty, huge,
    control characters); an empty fragment is ``chitchat``."""
    table = cues if cues is not None else CueTable.default()
    return _decide(fragment, table, _SOLO)


class _Context(NamedTuple):
    """What :func:`classify_all` knows about a fragment's neighbours.

    ``answers``: the fragment opens a user's reply to an assistant question; ``lead_in``:
    the type of the line ("Plan:", "有三个方案：") that introduces this list item;
    ``after_error``: an assistant sentence shortly after an error; ``after_tool``: the
    first assistant sentence after a tool result; ``opening``: it is in the
    conversation's first user message; ``reply``: it opens a user message that follows
    the assistant's.
    """

    answers: bool = False
    lead_in: FragmentType | None = None
    after_error: bool = False
    after_tool: bool = False
    opening: bool = False
    reply: bool = False


_SOLO = _Context()


def _decide(fragment: Fragment, table: CueTable, ctx: _Context) -> Classification:
    """The rule answer for one fragment in its context, on its own (no caches)."""
    return _classify_one(fragment, table, ctx, _model(table))


def _cached_decider(table: CueTable) -> Callable[[Fragment, _Context], Classification]:
    """:func:`_decide` for many fragments: the answer is kept for a text in a context, for
    fragments that repeat (the same tool output, "ok", a re-read file), and for the same
    evidence (many different sentences show the same features and cues). Answers are
    immutable, so they can be shared."""
    model = _model(table)
    cache: dict[object, Classification] = {}
    scores: dict[object, Classification] = {}

    def decide(fragment: Fragment, ctx: _Context) -> Classification:
        key = (fragment.text, fragment.role, fragment.kind, fragment.lang_hint,
               None if ctx is _SOLO else ctx)
        try:
            answer = cache.get(key)
        except TypeError:  # unhashable odd input
            return _classify_one(fragment, table, ctx, model, scores)
        if answer is None:
            answer = cache[key] = _classify_one(fragment, table, ctx, model, scores)
        return answer

    return decide


def _classify_one(fragment: Fragment, table: CueTable, ctx: _Context,
                  model: _Model, scores: dict[object, Classification] | None = None
                  ) -> Classification:
    feats = _features(fragment, table, ctx)
    if feats is None:
        return _EMPTY
    if scores is None:
        return _score(*feats, model)
    # the answer is a function of the evidence alone (features, values and labels, the cues
    # in their order, the tag scores): the same evidence gets the same answer object
    ev, hits, tag_scores = feats
    key = (tuple(ev), tuple(hits), tuple(tag_scores.items()))
    answer = scores.get(key)
    if answer is None:
        answer = scores[key] = _score(ev, hits, tag_scores, model)
    return answer


def _features(
    fragment: Fragment, table: CueTable, ctx: _Context
) -> tuple[_Evidence, _CueHits, dict[str, float]] | None:
    """The evidence for one fragment, or ``None`` when it is empty: ``(feature, value,
    label)`` triples (the weight table turns each feature into votes for types; the
    first is the speaker's), the cues that occurred ``(type, weight, label)`` (their
    sums per type are features) and the secondary tag scores."""
    text = fragment.text if isinstance(fragment.text, str) else ""
    role = fragment.role if isinstance(fragment.role, str) else ""
    kind = fragment.kind if isinstance(fragment.kind, str) else ""
    stripped = text.strip()
    if not stripped:
        return None
    if role not in _ROLES:
        role = "other"
    ev: _Evidence = [_ROLE_EVIDENCE[role]]
    fenced = stripped.startswith(("```", "~~~"))
    block = (fenced or kind in _BLOCK_KINDS or role == "tool" or kind == "tool_result"
             or kind == "tool_call")
    low = stripped[:BLOCK_SCAN_CHARS if block else SCAN_CHARS].lower()
    if "\u2019" in low:
        low = low.replace("\u2019", "'")
    lead_match = None if low[0].isalpha() else _LEAD.match(low)
    lead = lead_match.end() if lead_match else 0
    tokens = words(low)

    if kind == "tool_call":
        ev.append(("block.tool_call", 1.0, "structure:tool_call"))
    elif block:
        hint = fragment.lang_hint if isinstance(fragment.lang_hint, str) else None
        _block(stripped, kind, hint, fenced, role == "tool" or kind == "tool_result", ev)
    else:
        _prose(stripped, low, tokens, lead, kind, role, table, ev)

    # cue sums per type: one feature per type (and its speaker), so the weight table
    # decides how far each type's phrases are trusted from each speaker
    cue_factor = 0.4 if block else 1.0
    size = len(stripped)
    short = _SHORT_EN if low.isascii() else _SHORT_ZH
    chit_factor = (1.3 if size <= short else 0.7 if size <= 2 * short else 0.3) * cue_factor
    tag_scores: dict[str, float] = {}
    hits: _CueHits = []
    for target, weight, _label, roles, is_tag, shown in table.scan(low, tokens, lead):
        if roles is not None and role not in roles:
            continue
        if is_tag:
            tag_scores[target] = tag_scores.get(target, 0.0) + weight
            continue
        weight *= chit_factor if target == "chitchat" else cue_factor
        hits.append((target, weight, shown))
    if hits:
        keys = _CUE_KEYS[role]
        for target, total in _cue_totals(hits).items():
            ev.append((keys[target], total, ""))
    if not block:
        if ctx is not _SOLO and ctx != _SOLO:
            _context_features(ctx, role, low, tokens, table, ev)
        lexicon = table.lexicon
        if lexicon:
            found = lexicon.intersection(lexical_units(low, tokens))
            if found:
                ev += [(LEXICAL_PREFIX + unit, 1.0, "") for unit in sorted(found)]
    return ev, hits, tag_scores


def _cue_totals(hits: _CueHits) -> dict[str, float]:
    """The summed weight of the cues of each type, each sum within +-:data:`_CUE_CAP`."""
    sums: dict[str, float] = {}
    for target, weight, _ in hits:
        sums[target] = sums.get(target, 0.0) + weight
    for target, total in sums.items():
        if total > _CUE_CAP:
            sums[target] = _CUE_CAP
        elif total < -_CUE_CAP:
            sums[target] = -_CUE_CAP
    return sums


def cue_sum_features(hits: Sequence[tuple[str, float, str]], role: str) -> dict[str, float]:
    """The cue-sum features of cue ``hits`` ``(type, weight, label)`` from speaker ``role``,
    as rows of the weight table: ``cue_sum.<type>`` and ``cue_sum.<type>.<role>`` both get
    the type's capped sum (the classifier looks up their merged row)."""
    out: dict[str, float] = {}
    for target, total in _cue_totals(list(hits)).items():
        out["cue_sum." + target] = total
        out[f"cue_sum.{target}.{role}"] = total
    return out


class Features(NamedTuple):
    """What the rule layer saw in one fragment, for fitting the weight table
    (``bench/analysis_fit.py``).

    ``values`` maps every row of the weight table that the fragment has to its value
    (``score[type] = sum(value * weights[row][type])``): the speaker (``role.user``: 1),
    structure and context features, and the cue sums (:func:`cue_sum_features`).
    ``cues`` are the cues that fired ``(type, weight, label)``, so a fit can recompute
    the cue sums without some of them; ``role`` is the speaker as the features name it
    (``other`` for an unknown one); ``answer`` is the rule answer. An empty fragment has
    no values (it is always ``chitchat``).
    """

    role: str
    values: dict[str, float]
    cues: tuple[tuple[str, float, str], ...]
    answer: Classification


def features_in_context(fragments: Sequence[Fragment],
                        cues: CueTable | None = None) -> list[Features]:
    """The :class:`Features` of every fragment, in the context :func:`classify_all` gives
    it (the context of a fragment depends on the rule answers for the earlier ones)."""
    table = cues if cues is not None else CueTable.default()
    model = _model(table)
    out: list[Features] = []

    def decide(fragment: Fragment, ctx: _Context) -> Classification:
        found = _features(fragment, table, ctx)
        if found is None:
            out.append(Features("", {}, (), _EMPTY))
            return _EMPTY
        ev, hits, tag_scores = found
        role = ev[0][0][len("role."):]
        values: dict[str, float] = {}
        for key, value, _ in ev:
            if "@" not in key:  # cue sums are added per row below
                values[key] = values.get(key, 0.0) + value
        values.update(cue_sum_features(hits, role))
        answer = _score(ev, hits, tag_scores, model)
        out.append(Features(role, values, tuple(hits), answer))
        return answer

    _walk(fragments, decide)
    return out


def _context_features(ctx: _Context, role: str, low: str, tokens: list[str],
                      table: CueTable, ev: _Evidence) -> None:
    """The features of a (non-block) fragment's place in the conversation."""
    if ctx.lead_in is not None:
        ev.append(("context.lead_in." + ctx.lead_in, 1.0, "context:list_lead_in"))
    if ctx.after_error and role == "assistant":
        ev.append(("context.after_error", 1.0, "context:after_error"))
    if ctx.after_tool and role == "assistant":
        ev.append(("context.after_tool", 1.0, "context:after_tool"))
    if ctx.answers:
        if role == "user" and _is_choice(low, tokens, table):
            ev.append(("context.answers_choice", 1.0, "context:answers_question"))
        else:
            ev.append(("context.answers", 1.0, "context:answers_question"))
    if ctx.reply:
        ev.append(("context.reply", 1.0, "context:reply"))
    if ctx.opening and role == "user":
        ev.append(("context.opening", 1.0, "context:opening"))


class _Model(NamedTuple):
    """A weight table compiled for scoring: ``rows`` maps a feature to its votes
    ``((type, weight), ...)``; a cue sum's row already adds the speaker's correction
    (``cue_sum.goal`` + ``cue_sum.goal.user`` under ``cue_sum.goal@user``); ``start``
    holds the speaker features' votes as dicts (every score starts from one); ``support``
    maps a type to the lexical features that vote for it and their weights (to name the
    strongest in the evidence)."""

    rows: dict[str, tuple[tuple[str, float], ...]]
    start: dict[str, dict[str, float]]
    support: dict[str, dict[str, float]]


_MODELS: dict[int, tuple[Mapping[str, tuple[tuple[str, float], ...]], _Model]] = {}
_MAX_MODELS = 16


def _model(table: CueTable) -> _Model:
    """The compiled weights of ``table`` (built once per table)."""
    weights = table.weights
    cached = _MODELS.get(id(weights))
    if cached is not None and cached[0] is weights:
        return cached[1]
    lookup: dict[str, dict[str, float]] = {k: dict(row) for k, row in weights.items()}
    for role, keys in _CUE_KEYS.items():
        for target, key in keys.items():
            merged = dict(lookup.get("cue_sum." + target, {}))
            for t, w in lookup.get(f"cue_sum.{target}.{role}", {}).items():
                merged[t] = merged.get(t, 0.0) + w
            lookup[key] = merged
    rows = {k: tuple((t, w) for t, w in row.items() if w) for k, row in lookup.items()}
    start = {k: dict(lookup.get(k, {})) for k in _ROLE_FEATURE.values()}
    support: dict[str, dict[str, float]] = {t: {} for t in FRAGMENT_TYPES}
    for key, votes in rows.items():
        if key.startswith(LEXICAL_PREFIX):
            for t, w in votes:
                if w > 0 and t in support:
                    support[t][key] = w
    model = _Model({k: v for k, v in rows.items() if v}, start, support)
    if len(_MODELS) >= _MAX_MODELS:
        _MODELS.pop(next(iter(_MODELS)))
    _MODELS[id(weights)] = (weights, model)
    return model


def _score(ev: _Evidence, hits: _CueHits, tag_scores: dict[str, float],
           model: _Model) -> Classification:
    """The type with the highest total vote (``value * weight`` over the features of
    ``ev``; ``ev[0]`` is the speaker's, whose votes start the scores); confidence is its
    softmax probability over the eleven types (a type without votes scores 0)."""
    score = dict(model.start.get(ev[0][0], _EMPTY_ROW))
    get = model.rows.get
    sget = score.get
    for key, value, _ in islice(ev, 1, None):
        row = get(key)
        if row is not None:
            if value == 1.0:
                for target, w in row:
                    score[target] = sget(target, 0.0) + w
            else:
                for target, w in row:
                    score[target] = sget(target, 0.0) + value * w
    best: str
    if not score:  # no votes at all (a weight table without them): by the speaker
        best = _FALLBACK.get(ev[0][0][5:], "fact")
        return Classification(best, round(1.0 / len(_ZERO), 4),  # type: ignore[arg-type]
                              _tags(best, tag_scores), _evidence(best, ev, hits))
    values = list(score.values())
    top = max(values)
    best = list(score)[values.index(top)]  # the first with the top score (C-level calls)
    missing = len(_ZERO) - len(score)
    if top <= 0.0 and missing:  # a type without votes (0) wins
        top = 0.0
        best = next(t for t in PRIORITY if sget(t, 0.0) == 0.0)
    elif values.count(top) > 1:  # an exact tie: the first in PRIORITY
        best = next(t for t in PRIORITY if sget(t, 0.0) == top)
    try:
        confidence = math.exp(top) / (sum(map(math.exp, values)) + missing)
    except OverflowError:  # huge user weights
        confidence = 1.0 / (missing * math.exp(-min(top, 700.0))
                            + math.fsum(math.exp(max(v - top, -700.0)) for v in values))
    return Classification(best, round(confidence, 4),  # type: ignore[arg-type]
                          _tags(best, tag_scores),
                          _evidence(best, ev, hits, _words_for(best, ev, model)))


_SHOWN_WORDS = 3  # the words voting most for the winner that its evidence names


def _words_for(best: str, ev: _Evidence, model: _Model) -> list[str]:
    """``word:<unit>`` labels of the lexical features that vote most for ``best``."""
    votes: list[tuple[float, str]] = []
    get = model.support[best].get
    for key, _, _ in reversed(ev):  # (lexical features come last)
        if not key.startswith(LEXICAL_PREFIX):
            break
        w = get(key)
        if w is not None:
            votes.append((-w, key))
    if not votes:
        return []
    votes.sort()
    cut = len(LEXICAL_PREFIX)
    return ["word:" + key[cut:] for _, key in votes[:_SHOWN_WORDS]]


_EXPLAIN_WINDOW = 3
_STRUCTURED_KINDS = frozenset({"code", "sql", "json", "tool_call", "tool_result"})
_CHOICE_OPENERS = frozenset({"no", "nope", "yes", "yeah", "ok", "okay", "sure", "then"})
_CHOICE_OPENERS_ZH = ("先不", "不用", "不要", "那就", "就用", "就按", "用", "换", "改", "按")


def _is_choice(low: str, tokens: list[str], table: CueTable) -> bool:
    """Whether a reply to a question makes a choice: an instruction ("No, pin it to 3.4"),
    or a Chinese reply opening with a choice word ("先不升", "那就…")."""
    if tokens and low.startswith(tokens[0]):
        first = tokens[0]
        if first in table.imperative:
            return True
        if first in _CHOICE_OPENERS and len(tokens) > 1 and tokens[1] in table.imperative:
            return True
    return low.startswith(_CHOICE_OPENERS_ZH)


_CONNECTIVES = frozenset({"so", "and", "then", "also", "ok", "okay", "now", "just", "but"})


def _imperative(first: str, tokens: list[str], table: CueTable) -> bool:
    """Whether the text opens with an imperative verb, maybe after "so" / "and" / "ok"."""
    if first in table.imperative:
        return True
    return first in _CONNECTIVES and len(tokens) > 1 and tokens[1] in table.imperative


def _ends_question(text: str) -> bool:
    return text.rstrip(" \t\n\"'”’)）*_`").endswith(("?", "？"))


def _window(text: str) -> str:
    if len(text) <= ERROR_HEAD + ERROR_TAIL:
        return text
    return text[:ERROR_HEAD] + "\n" + text[-ERROR_TAIL:]


def _error_signal(window: str, lowered: str | None = None) -> tuple[float, str]:
    """The strongest error evidence in ``window``: (weight, name) or (0, "").

    ``lowered`` is ``window.lower()`` if the caller has it.
    """
    low = lowered if lowered is not None and len(lowered) == len(window) else window.lower()
    if len(low) != len(window):  # lower-casing changed the length (rare scripts)
        low = window
    marks = _ERROR_MARKS
    if "\n" in window:
        marks = marks + _MULTILINE_MARKS
    if '"' in window:
        marks = marks + _JSON_MARKS
    best, name = 0.0, ""
    for mark, at_start, at_mark in marks:
        pos = low.find(mark)
        seen = 0
        while pos >= 0 and seen < _LINES_PER_MARK:
            seen += 1
            match = None
            if at_start:
                start = window.rfind("\n", 0, pos) + 1
                match = _ERROR_LINE_START.match(window, start)
            if match is None and at_mark is not None:
                offset = len(mark) if at_mark is _ERROR_STATUS_VALUE else 0
                match = at_mark.match(window, pos + offset)
                if match is not None and at_mark is _ERROR_STATUS_VALUE:
                    best_here = _ERROR_WEIGHT["error_payload"]
                    if best_here > best:
                        best, name = best_here, "error_payload"
                    match = None
            if match is not None:
                group = match.lastgroup or ""
                weight = _ERROR_WEIGHT.get(group, 0.0)
                if weight > best:
                    best, name = weight, group
                    if best >= _ERROR_WEIGHT["traceback"]:
                        return best, name
            nl = window.find("\n", pos)
            pos = low.find(mark, nl) if nl >= 0 else -1
    return best, name


def _fence_hint(text: str) -> str:
    match = _FENCE_INFO.match(text)
    return match.group(1).lower() if match else ""


def _output_score(window: str) -> float:
    """How much a block without a language looks like command output rather than code."""
    score = 0.0
    first = window.lstrip("`~ \t\n")
    if first.startswith(("$ ", "> ", "mysql>", "postgres=", "PS ", "% ")) and "\n" in first:
        score += 3.0
    if window.count("|") >= 6 or "+--" in window or "--+--" in window:
        score += 3.0
    if "├" in window or "└" in window:
        score += 3.0
    if window.count("\t") >= 3:
        score += 2.0
    if "passed" in window or "✓" in window or " ok" in window or "Success" in window:
        score += 1.0
    return score


def _code_score(window: str) -> float:
    """How much a block looks like source code."""
    score = float(sum(1 for mark in _CODE_MARKS if mark in window))
    score += min(3, window.count(";\n") + window.count("{\n") + window.count(":\n    "))
    score += min(2, window.count(" = "))
    return score


def _block(text: str, kind: str, hint: str | None, fenced: bool, tool: bool,
           ev: _Evidence) -> None:
    """Evidence for a block: a code / SQL / JSON / table fragment, a fence, tool output."""
    window = _window(text)
    weight, name = _error_signal(window)
    if weight:
        ev.append(("error." + name, 1.0, "structure:" + name))
    if kind == "table":
        ev.append(("block.table", 1.0, "structure:table"))
        return
    lang = (hint or (_fence_hint(text) if fenced else "")).lower()
    if tool:
        ev.append(("block.tool_output", 1.0, "role:tool"))
        if lang and lang not in _OUTPUT_HINTS and lang not in _DATA_HINTS:
            if lang in _SQL_HINTS:
                ev.append(("block.tool_sql", 1.0, "structure:code_fence"))
            else:
                ev.append(("block.tool_code", 1.0, "structure:code_fence"))
        elif window.count("→") >= 2 and _code_score(window) >= 2:
            ev.append(("block.source_listing", 1.0, "structure:source_listing"))
        return
    if kind == "sql" or lang in _SQL_HINTS:
        ev.append(("block.sql", 1.0, "structure:sql"))
    elif lang in _OUTPUT_HINTS:
        ev.append(("block.output", 1.0, "structure:output"))
    elif lang:
        ev.append(("block.code_fence", 1.0, "structure:code_fence"))
    elif kind == "json":
        ev.append(("block.json", 1.0, "structure:json"))
    elif _output_score(window) > _code_score(window):
        ev.append(("block.output", 1.0, "structure:output"))
    else:
        ev.append(("block.code", 1.0, "structure:code_block"))


def _prose(text: str, low: str, tokens: list[str], lead: int, kind: str, role: str,
           table: CueTable, ev: _Evidence) -> None:
    """Evidence from the shape of running text (a sentence, heading, list item, ...)."""
    if kind in _KIND_FEATURE:
        ev.append(_KIND_FEATURE[kind])
    if lead and _NUMBERED.match(low):
        ev.append(_PROSE[role]["numbered"])

    # error lines in running text ("TypeError: ...", "npm ERR! ...", "FAILED x::y") have a
    # colon, "!" or a line break; without one the error phrases among the cues suffice
    one_line = "\n" not in text
    if ":" in low or "!" in low or not one_line:
        weight, name = (_error_signal(text, low) if len(text) <= SCAN_CHARS
                        else _error_signal(_window(text)))
        if weight:
            ev.append(("error." + name, 0.8, "structure:" + name))
    first = tokens[0] if tokens and low.startswith(tokens[0], lead) else ""
    if first in _COMMANDS or low.startswith(("$ ", "> "), lead):
        if (one_line and not text.endswith(_SENTENCE_END) and ", " not in low
                and _SHELL.match(low, lead)):
            ev.append(("prose.command", 1.0, "structure:command"))
    elif (first in _SQL_STARTS and _SQL.match(low, lead)
          and (" from " in low or ";" in low or not one_line)):
        ev.append(("prose.sql", 1.0, "structure:sql"))

    question = _ends_question(text)
    if question:
        ev.append(_PROSE[role]["question"])
    elif (_imperative(first, tokens, table) if first
          else table.opens_with_prefix(low, lead)):
        ev.append(_PROSE[role]["imperative"])
    elif text.endswith((":", "：")):
        ev.append(_PROSE[role]["lead_in"])

    clauses = len(_CLAUSE_MARK.findall(low))
    if clauses:
        ev.append((_PROSE_KEYS[role]["clauses"], min(3, clauses), "structure:clauses"))
    body = low[lead:] if lead else low
    data = len(body.encode("utf-8", "surrogatepass").translate(_DIGIT_TABLE).split())
    if "`" in body or "_" in body or "/" in body:
        data += body.count("`") // 2 + min(2, body.count("_")) + min(2, body.count("/"))
    if data:
        ev.append((_PROSE_KEYS[role]["data"], min(4, data), "structure:data"))
    ascii_text = low.isascii()
    size = len(tokens) if ascii_text else len(text)
    tiny = size <= (3 if ascii_text else 6)
    if (not question and (len(text) <= 80 and len(text.split()) <= 3 if ascii_text else tiny)
            and (data or ("@" in body and EMAIL.search(body)))):
        # a reply that is a value ("VIP-240715-88213", "2 on average", an e-mail): a fact
        ev.append(("prose.short_data", 1.0, "structure:short_data"))
    if tiny:
        ev.append(("length.tiny", 1.0, "structure:short"))
        if len(text) <= 16 and not any(ch.isalnum() for ch in text):
            ev.append(("prose.no_words", 1.0, "structure:no_words"))
    elif size <= (8 if ascii_text else 15):
        ev.append(("length.short", 1.0, "structure:short"))
    elif size > (30 if ascii_text else 60):
        ev.append(("length.long", 1.0, ""))
    if role == "user" and not question and _answer_then_order(low, table):
        ev.append(("prose.answer.user", 1.0, "structure:answer"))


def _answer_then_order(low: str, table: CueTable) -> bool:
    """``low`` opens with an acknowledgement or a yes and goes on with an instruction: "ok
    keep ours.", "yes, turn it off", "可以，压缩加上" (a choice made); not "ok thanks", nor
    "yeah, our team says ..." (an answer that informs)."""
    lead = ANSWER_LEAD.match(low)
    if lead is None or lead.end() >= len(low):
        return False
    at = lead.end()
    rest = words(low[at:])
    if rest and low.startswith(rest[0], at):
        return _imperative(rest[0], rest, table)
    return table.opens_with_prefix(low, at)


def _evidence(best: str, ev: _Evidence, hits: _CueHits,
              shown_words: Sequence[str] = ()) -> tuple[str, ...]:
    """Labels of the evidence, each once: the cues for ``best`` first, then the shape
    and context of the text, the words that vote most for ``best``, the other cues and
    the speaker."""
    if hits:
        labels = [label for target, _, label in hits if target == best]
        labels += [label for _, _, label in islice(ev, 1, None) if label]
        labels += shown_words
        labels += [label for target, _, label in hits if target != best]
    else:
        labels = [label for _, _, label in islice(ev, 1, None) if label]
        labels += shown_words
    labels.append(ev[0][2])
    out = tuple(dict.fromkeys(labels))
    return out if len(out) <= _MAX_EVIDENCE else out[:_MAX_EVIDENCE]


def _tags(best: str, tag_scores: dict[str, float]) -> tuple[str, ...]:
    if not tag_scores:
        return _PLAIN_TAGS[best]
    classes = [name for name, value in tag_scores.items()
               if value > 0 and name not in _NON_CLASS_TAGS and not name.startswith("tech:")]
    if len(classes) > 1:
        classes.sort(key=lambda name: (-tag_scores[name], name))
    implied = _TYPE_CLASS.get(best)
    if implied is not None:
        if implied in classes:
            classes.remove(implied)
        classes.insert(0, implied)
    get = tag_scores.get
    if get("tech:advanced", 0.0) > 0:
        level = "tech:advanced"
    elif get("tech:intermediate", 0.0) > 0:
        level = "tech:intermediate"
    else:
        level = "tech:basic"
    act = get("actionable", 0.0) + _ACTIONABLE.get(best, 0.0)
    informational = get("informational", 0.0) + _INFORMATIONAL.get(best, 0.0)
    return (*classes[:2], level, "actionable" if act > informational else "informational")


_ACTIONABLE = dict.fromkeys(_ACTIONABLE_TYPES, 1.5)
_INFORMATIONAL = dict.fromkeys(_INFORMATIONAL_TYPES, 1.0)
_PLAIN_TAGS: dict[str, tuple[str, ...]] = {}
_PLAIN_TAGS.update({t: _tags(t, {"": 0.0}) for t in FRAGMENT_TYPES})


# -- the model layer ----------------------------------------------------------------------


def classify_all(
    fragments: Sequence[Fragment],
    cues: CueTable | None = None,
    voter: TypeVoter | None = None,
    threshold: float = 0.7,
) -> list[Classification]:
    """Classify every fragment; ask ``voter`` (if any) about those below ``threshold``.

    The voter is called once, with all low-confidence fragments; a non-``None`` answer
    replaces the rule answer (``source`` = the voter's name, ``rules:<type>`` appended to
    its evidence). If the voter raises, returns the wrong number of answers or an invalid
    answer, the rule answers stay and get ``voter_failed`` in their evidence.
    """
    if (isinstance(threshold, bool) or not isinstance(threshold, (int, float))
            or not 0.0 <= threshold <= 1.0):
        raise ConfigError(f"the vote threshold must be a number from 0 to 1, got {threshold!r}",
                          where="threshold")
    table = cues if cues is not None else CueTable.default()
    results = _rules_in_context(fragments, table)
    if voter is not None:
        _ask_voter(voter, fragments, results, threshold)
    return results


def _rules_in_context(fragments: Sequence[Fragment], table: CueTable) -> list[Classification]:
    """The rule answer for every fragment, with the context of its neighbours."""
    return _walk(fragments, _cached_decider(table))


def _walk(fragments: Sequence[Fragment],
          decide: Callable[[Fragment, _Context], Classification]) -> list[Classification]:
    """``decide(fragment, context)`` for every fragment in order; the context of a
    fragment depends on its neighbours and on the answers for the earlier ones."""
    results: list[Classification] = []
    lead_in: FragmentType | None = None
    prev: Fragment | None = None
    after_error = 0  # assistant sentences still to mark as explaining an error
    opening = -2  # the message index of the first user message (-2: none yet)
    messages = [_message(f) for f in fragments]
    for i, fragment in enumerate(fragments):
        answers = after_tool = False
        message = messages[i]
        first = i == 0 or messages[i - 1] != message
        if opening == -2 and fragment.role == "user":
            opening = message
        if prev is None:
            lead_in = None
        else:
            same_message = not first and prev.role == fragment.role
            if fragment.kind != "list_item" or not same_message:
                lead_in = None
            elif isinstance(prev.text, str) and prev.text.rstrip().endswith((":", "：")):
                lead_in = results[-1].type
            elif prev.kind != "list_item":
                lead_in = None
            answers = (fragment.role == "user" and prev.role == "assistant"
                       and isinstance(prev.text, str) and _ends_question(prev.text))
            after_tool = prev.role == "tool" and fragment.role == "assistant"
        explains = after_error > 0 and fragment.role == "assistant"
        reply = (first and prev is not None and fragment.role == "user"
                 and prev.role == "assistant")
        in_opening = message == opening
        if answers or lead_in is not None or explains or after_tool or in_opening or reply:
            ctx = _Context(answers, lead_in, explains, after_tool, in_opening, reply)
        else:
            ctx = _SOLO  # no context: one shared object, so answers can be shared too
        result = decide(fragment, ctx)
        results.append(result)
        if result.type == "error":
            after_error = _EXPLAIN_WINDOW
        elif explains:
            after_error -= 1
        elif fragment.kind in _STRUCTURED_KINDS or (
            fragment.role == "user" and prev is not None and prev.role != "user"
        ):
            after_error = 0
        prev = fragment
    return results


def _ask_voter(voter: TypeVoter, fragments: Sequence[Fragment],
               results: list[Classification], threshold: float) -> None:
    """Replace the unsure rule answers by the voter's (in place)."""
    unsure = [i for i, r in enumerate(results) if r.confidence < threshold]
    if not unsure:
        return
    name = _voter_name(voter)
    try:
        votes = list(voter.vote([(fragments[i], results[i]) for i in unsure], FRAGMENT_TYPES))
        if len(votes) != len(unsure):
            raise ValueError(f"{len(votes)} answers for {len(unsure)} fragments")
    except Exception:  # a voter must never break classification
        for i in unsure:
            results[i] = _failed(results[i])
        return
    for i, vote in zip(unsure, votes):
        if vote is None:
            continue
        if not _valid(vote):
            results[i] = _failed(results[i])
            continue
        rule = results[i]
        results[i] = replace(
            vote,
            source=name,
            tags=vote.tags or rule.tags,
            evidence=(*vote.evidence, f"rules:{rule.type}"),
        )


def _message(fragment: Fragment) -> int:
    provenance = getattr(fragment, "provenance", None)
    message = getattr(provenance, "message", -1)
    return message if isinstance(message, int) else -1


def _voter_name(voter: object) -> str:
    try:
        name = voter.name  # type: ignore[attr-defined]
    except Exception:
        name = None
    return name if isinstance(name, str) and name else type(voter).__name__


def _failed(result: Classification) -> Classification:
    if "voter_failed" in result.evidence:
        return result
    return replace(result, evidence=(*result.evidence, "voter_failed"))


def _valid(answer: object) -> bool:
    if not isinstance(answer, Classification) or answer.type not in FRAGMENT_TYPES:
        return False
    conf = answer.confidence
    if isinstance(conf, bool) or not isinstance(conf, (int, float)) or not 0 <= conf <= 1:
        return False
    return all(
        isinstance(seq, tuple) and all(isinstance(s, str) for s in seq)
        for seq in (answer.tags, answer.evidence)
    )
