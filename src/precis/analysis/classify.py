"""Fragment type classification (seed 002 二.2): a rule layer, and an optional model layer.

Rule layer: every type collects evidence, and the type with the most wins (ties go to the
type earlier in :data:`PRIORITY`). Evidence comes from

* cues: the bilingual phrases and regexes of a :class:`~precis.analysis.cues.CueTable`
  (``cue:必须``, ``cue:let's go with``), scanned in the first :data:`SCAN_CHARS` characters;
* structure: the fragment kind (code / SQL / JSON blocks are code, a table is a fact, a
  tool call is code), code fences and their language, stack traces and error lines, shell
  commands, SQL statements, numbers / ids / inline code (facts), a question mark, an
  imperative verb at the start, a numbered list item (``structure:traceback``, ...);
* the speaker: a tool's output is a fact (or an error, or a file's code); a user tends to
  state goals and background, an assistant facts and reasoning, a system prompt rules
  (``role:tool``).

:func:`classify_all` adds the neighbours' context: a list item leans to the type of the line
that introduces it ("Plan:", "有三个方案："); a user's instruction answering an assistant's
question is a decision ("Drop them."); the assistant's next sentences after an error lean
to reasoning (explanations follow failures) (``context:...`` evidence).

``confidence`` is softmax-like: ``exp(best) / (1 + sum(exp(score) for every type with
evidence))``, so one strong cue gives ~0.9, two close rivals ~0.5, and no evidence a low
value. ``tags`` are the secondary labels of seed 000: up to two content classes
(``technical_specification``, ``code_implementation``, ``error_information``,
``user_interaction``, ``workflow_status``, ``documentation``), a technical level
(``tech:basic|intermediate|advanced``) and ``actionable`` or ``informational``.

Model layer: :func:`classify_all` sends the fragments whose rule confidence is below
``threshold`` to a :class:`TypeVoter` in one batch; a voter's answer replaces the rule
answer (``source`` is the voter's name). A voter that raises or answers nonsense leaves the
rule answers in place (with ``voter_failed`` in their evidence): classification never fails
because a voter did.

Speed: a handful of C-level passes per fragment (lower-casing the scan window, splitting
it into words, set intersections against the cue index, a few anchored regex matches,
marker searches for error lines over at most :data:`ERROR_HEAD` + :data:`ERROR_TAIL`
characters), never a Python loop over the cue table.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol, runtime_checkable

from precis.analysis.cues import CueTable, words
from precis.analysis.model import FRAGMENT_TYPES, Classification, FragmentType
from precis.errors import ConfigError
from precis.segment.model import Fragment

__all__ = [
    "ERROR_HEAD",
    "ERROR_TAIL",
    "PRIORITY",
    "SCAN_CHARS",
    "TypeVoter",
    "classify",
    "classify_all",
]

PRIORITY: tuple[FragmentType, ...] = (
    "error", "code", "constraint", "decision", "goal", "todo", "plan", "fact", "reasoning",
    "background", "chitchat",
)
"""Tie order: on equal evidence the type that loses less when kept wins."""

SCAN_CHARS = 600
"""Cues are looked for in the first this many characters of a fragment."""
ERROR_HEAD = 4000
ERROR_TAIL = 1000
"""Error lines are looked for in the first / last this many characters of a block."""

_SHORT_ZH = 16  # a chitchat cue counts fully in a Chinese fragment up to this many chars
_SHORT_EN = 32  # ... or an English one up to this many
_MAX_EVIDENCE = 10
_EXP_CAP = 50.0

# -- structure patterns -------------------------------------------------------------------

# List markers, heading marks, emphasis and quote marks before the first word.
_LEAD = re.compile(r"(?:\s|[>*_#•·+\-]|\d{1,3}(?:[.)](?=\s)|、)|[（(]\d{1,3}[)）])*")
_NUMBERED = re.compile(
    r"\s*(?:\d{1,3}(?:[.)](?=\s)|、)|[（(]\d{1,3}[)）]|step \d+|第[一二三四五六七八九十\d]+步)"
)
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
)
# "3 failed", "12 errors" (not "0 failed", not "1.5 failed"): a count just before the marker
_COUNT_BEFORE = "|".join(f"(?<=(?<![0-9.,])[1-9]{'[0-9]' * n} )" for n in range(4))
_ERROR_AT_MARK = re.compile(
    rf"(?P<failures>(?:{_COUNT_BEFORE})(?:fail(?:ed|ures?)|errors?)\b"
    r"|(?i:fail(?:ures?|ed)|errors?): ?[1-9])"
    r"|(?P<error_payload>(?<=\")(?i:errors?|err|exception)\"\s*:"
    r"(?!\s*(?:null|\[\]|\{\}|\"\"|false)))"
    r"|(?P<error_code>error TS\d+|error\[E\d+\]|(?i:http)/\d(?:\.\d)? [45]\d\d\b|ERR_[A-Z_]+\b)"
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
)
_MULTILINE_MARKS: tuple[tuple[str, bool, re.Pattern[str] | None], ...] = (
    ("e  ", True, None), ("at ", True, None),
)
_JSON_MARKS: tuple[tuple[str, bool, re.Pattern[str] | None], ...] = (
    ('"status"', False, _ERROR_STATUS_VALUE),
    ('"code"', False, _ERROR_STATUS_VALUE),
    ('"state"', False, _ERROR_STATUS_VALUE),
)
_LINES_PER_MARK = 4
_CODE_MARKS = ("def ", "class ", "import ", "return ", "function ", "const ", "public ",
               "private ", "func ", "fn ", "#include", "package ", "let ", "var ", " => ",
               "->", "){", ") {", "};", "self.", "this.", "print(", "console.", "</")

_ROLE_PRIOR: dict[str, tuple[tuple[FragmentType, float, str], ...]] = {
    "user": (("background", 0.3, "role:user"), ("goal", 0.25, "role:user"),
             ("fact", 0.2, "role:user")),
    "assistant": (("fact", 0.3, "role:assistant"), ("reasoning", 0.3, "role:assistant")),
    "system": (("constraint", 1.0, "role:system"), ("background", 0.6, "role:system")),
}
_FALLBACK: dict[str, FragmentType] = {
    "user": "background", "assistant": "fact", "tool": "fact", "system": "constraint",
}
_TYPE_CLASS = {
    "code": "code_implementation",
    "error": "error_information",
    "plan": "workflow_status",
    "todo": "workflow_status",
    "goal": "user_interaction",
    "chitchat": "user_interaction",
}
_RANK = {t: i for i, t in enumerate(PRIORITY)}
_EMPTY = Classification("chitchat", 1.0, ("tech:basic", "informational"), ("structure:empty",))
_KIND_EVIDENCE: dict[str, tuple[FragmentType, float, str]] = {
    "heading": ("fact", 2.0, "structure:heading"),
    "thinking": ("reasoning", 1.5, "structure:thinking"),
    "image": ("fact", 3.0, "structure:image"),
}
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

_Evidence = list[tuple[FragmentType, float, str]]


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
    the neighbours). Never raises on odd text (empty, huge, control characters); an empty
    fragment is ``chitchat``."""
    return _classify(fragment, cues if cues is not None else CueTable.default())


def _classify(
    fragment: Fragment,
    table: CueTable,
    answers_question: bool = False,
    lead_in: FragmentType | None = None,
    explains_error: bool = False,
) -> Classification:
    """Context from :func:`classify_all`: ``answers_question``: the fragment opens a user's
    reply to an assistant question; ``lead_in``: the type of the line ("Plan:",
    "有三个方案：") that introduces this list item; ``explains_error``: an assistant sentence
    shortly after an error (explanations follow failures)."""
    text = fragment.text if isinstance(fragment.text, str) else ""
    role = fragment.role if isinstance(fragment.role, str) else ""
    kind = fragment.kind if isinstance(fragment.kind, str) else ""
    stripped = text.strip()
    if not stripped:
        return _EMPTY

    # Evidence is a list of (type, weight, label); totals are summed at the end, over the
    # few types that got any.
    ev: _Evidence = []
    low = stripped[:SCAN_CHARS].lower()
    if "\u2019" in low:
        low = low.replace("\u2019", "'")
    lead_match = None if low[0].isalpha() else _LEAD.match(low)
    lead = lead_match.end() if lead_match else 0
    tokens = words(low)
    fenced = low.startswith(("```", "~~~"))
    block = fenced or kind in _BLOCK_KINDS or role == "tool" or kind == "tool_result"

    if kind == "tool_call":
        ev.append(("code", 5.0, "structure:tool_call"))
    elif block:
        hint = fragment.lang_hint if isinstance(fragment.lang_hint, str) else None
        _block(stripped, kind, hint, fenced, role == "tool" or kind == "tool_result", ev)
    else:
        _prose(stripped, low, tokens, lead, kind, role, table, ev)

    cue_factor = 0.4 if block or kind == "tool_call" else 1.0
    chit_factor = _chitchat_factor(len(stripped), low.isascii()) * cue_factor
    tag_scores: dict[str, float] = {}
    for target, weight, _label, roles, is_tag, shown in table.scan(low, tokens, lead):
        if roles is not None and role not in roles:
            continue
        if is_tag:
            tag_scores[target] = tag_scores.get(target, 0.0) + weight
        else:
            ev.append((target, weight * (chit_factor if target == "chitchat" else cue_factor),
                       shown))  # type: ignore[arg-type]

    if lead_in is not None and lead_in != "chitchat":
        ev.append((lead_in, 1.2, "context:list_lead_in"))
    if explains_error and not block and kind != "tool_call":
        ev.append(("reasoning", 1.0, "context:after_error"))
    if answers_question and not block and _is_choice(low, tokens, table):
        ev.append(("decision", 2.0, "context:answers_question"))
    ev.extend(_ROLE_PRIOR.get(role, ()))

    score: dict[FragmentType, float] = {}
    for target, weight, _ in ev:
        score[target] = score.get(target, 0.0) + weight
    best: FragmentType | None = None
    top = 0.0
    for target, total in score.items():
        if total > top or (total == top and best is not None and _RANK[target] < _RANK[best]):
            best, top = target, total
    if best is None:
        best = _FALLBACK.get(role, "fact")
        return Classification(best, 0.1, _tags(best, tag_scores), ("fallback:" + (role or "?"),))
    exp = math.exp
    denom = 1.0 + sum([exp(v if v < _EXP_CAP else _EXP_CAP) for v in score.values() if v > 0])
    confidence = round(min(1.0, exp(top if top < _EXP_CAP else _EXP_CAP) / denom), 4)
    return Classification(best, confidence, _tags(best, tag_scores), _evidence(best, ev))


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


def _chitchat_factor(length: int, ascii_text: bool) -> float:
    short = _SHORT_EN if ascii_text else _SHORT_ZH
    if length <= short:
        return 1.3
    if length <= 2 * short:
        return 0.7
    return 0.3


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
        ev.append(("error", weight, "structure:" + name))
    if kind == "table":
        ev.append(("fact", 3.0, "structure:table"))
        return
    lang = (hint or (_fence_hint(text) if fenced else "")).lower()
    if tool:
        ev.append(("fact", 2.5, "role:tool"))
        if lang and lang not in _OUTPUT_HINTS and lang not in _DATA_HINTS:
            ev.append(("code", 3.5 if lang not in _SQL_HINTS else 2.0, "structure:code_fence"))
        elif window.count("→") >= 2 and _code_score(window) >= 2:
            ev.append(("code", 3.5, "structure:source_listing"))
        return
    if kind == "sql" or lang in _SQL_HINTS:
        ev.append(("code", 5.0, "structure:sql"))
    elif lang in _OUTPUT_HINTS:
        ev.append(("fact", 3.0, "structure:output"))
    elif lang:
        ev.append(("code", 5.5, "structure:code_fence"))
    elif kind == "json":
        ev.append(("code", 4.0, "structure:json"))
    elif _output_score(window) > _code_score(window):
        ev.append(("fact", 3.0, "structure:output"))
    else:
        ev.append(("code", 4.0, "structure:code_block"))


def _prose(text: str, low: str, tokens: list[str], lead: int, kind: str, role: str,
           table: CueTable, ev: _Evidence) -> None:
    """Evidence from the shape of running text (a sentence, heading, list item, ...)."""
    if kind in _KIND_EVIDENCE:
        ev.append(_KIND_EVIDENCE[kind])
    if lead and _NUMBERED.match(low):
        ev.append(("plan", 0.8 if role == "user" else 1.5, "structure:numbered_item"))

    # error lines in running text ("TypeError: ...", "npm ERR! ...", "FAILED x::y") have a
    # colon, "!" or a line break; without one the error phrases among the cues suffice
    one_line = "\n" not in text
    if ":" in low or "!" in low or not one_line:
        weight, name = (_error_signal(text, low) if len(text) <= SCAN_CHARS
                        else _error_signal(_window(text)))
        if weight:
            ev.append(("error", weight * 0.8, "structure:" + name))
    first = tokens[0] if tokens and low.startswith(tokens[0], lead) else ""
    if first in _COMMANDS or low.startswith(("$ ", "> "), lead):
        if (one_line and not text.endswith(_SENTENCE_END) and ", " not in low
                and _SHELL.match(low, lead)):
            ev.append(("code", 4.5, "structure:command"))
    elif (first in _SQL_STARTS and _SQL.match(low, lead)
          and (" from " in low or ";" in low or not one_line)):
        ev.append(("code", 4.5, "structure:sql"))

    if _ends_question(text):
        if role == "user":
            ev.append(("goal", 0.8, "structure:question"))
            ev.append(("background", 1.0, "structure:question"))
        elif role in ("assistant", "system"):
            ev.append(("background", 2.0, "structure:question"))
    elif first and _imperative(first, tokens, table):
        if role == "user":
            ev.append(("goal", 1.5, "structure:imperative"))
        elif role == "system":
            ev.append(("constraint", 1.5, "structure:imperative"))
        else:
            ev.append(("plan", 1.2, "structure:imperative"))

    if role == "assistant":
        clauses = low.count(", ") + low.count("; ") + low.count("，") + low.count("；")
        if clauses >= 2:
            ev.append(("reasoning", min(1.2, 0.4 * clauses), "structure:clauses"))
    body = low[lead:] if lead else low
    data = len(body.encode("utf-8", "surrogatepass").translate(_DIGIT_TABLE).split())
    if "`" in body or "_" in body or "/" in body:
        data += body.count("`") // 2 + min(2, body.count("_")) + min(2, body.count("/"))
    if data:
        ev.append(("fact", min(1.5, 0.4 * data), "structure:data"))
    if len(text) <= 16 and not any(ch.isalnum() for ch in text):
        ev.append(("chitchat", 3.0, "structure:no_words"))


def _evidence(best: FragmentType, ev: _Evidence) -> tuple[str, ...]:
    """Labels of the evidence that fired: the winner's first, each once."""
    labels = [e[2] for e in ev if e[0] == best]
    labels += [e[2] for e in ev if e[0] != best and e[1] > 0]
    return tuple(dict.fromkeys(labels))[:_MAX_EVIDENCE]


def _tags(best: FragmentType, tag_scores: dict[str, float]) -> tuple[str, ...]:
    if not tag_scores:
        return _PLAIN_TAGS[best]
    classes = [
        name for _, name in sorted(
            [(-value, name) for name, value in tag_scores.items()
             if value > 0 and name not in _NON_CLASS_TAGS and not name.startswith("tech:")]
        )
    ]
    implied = _TYPE_CLASS.get(best)
    if implied:
        classes = [implied, *(c for c in classes if c != implied)]
    get = tag_scores.get
    if get("tech:advanced", 0.0) > 0:
        level = "tech:advanced"
    elif get("tech:intermediate", 0.0) > 0:
        level = "tech:intermediate"
    else:
        level = "tech:basic"
    act = get("actionable", 0.0) + (1.5 if best in _ACTIONABLE_TYPES else 0.0)
    info = get("informational", 0.0) + (1.0 if best in _INFORMATIONAL_TYPES else 0.0)
    return (*classes[:2], level, "actionable" if act > info else "informational")


_PLAIN_TAGS: dict[str, tuple[str, ...]] = {}
_PLAIN_TAGS.update({t: _tags(t, {"": 0.0}) for t in FRAGMENT_TYPES})


# -- the model layer ----------------------------------------------------------------------


def classify_all(
    fragments: Sequence[Fragment],
    cues: CueTable | None = None,
    voter: TypeVoter | None = None,
    threshold: float = 0.5,
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
    results: list[Classification] = []
    lead_in: FragmentType | None = None
    prev: Fragment | None = None
    after_error = 0  # assistant sentences still to mark as explaining an error
    for fragment in fragments:
        answers = False
        if prev is None:
            lead_in = None
        else:
            same_message = _message(prev) == _message(fragment) and prev.role == fragment.role
            if fragment.kind != "list_item" or not same_message:
                lead_in = None
            elif isinstance(prev.text, str) and prev.text.rstrip().endswith((":", "：")):
                lead_in = results[-1].type
            elif prev.kind != "list_item":
                lead_in = None
            answers = (fragment.role == "user" and prev.role == "assistant"
                       and isinstance(prev.text, str) and _ends_question(prev.text))
        explains = after_error > 0 and fragment.role == "assistant"
        result = _classify(fragment, table, answers, lead_in, explains)
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
