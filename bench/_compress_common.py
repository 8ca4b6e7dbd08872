"""Shared parts of the compression benchmarks: data, rendering, scoring, the precis adapter.

- **Data**: the LoCoMo dev conversations and the agent sessions of the shared data folder
  (one :class:`Session` per conversation; a file with several conversations gives several).
- **Rendering**: the one text form every baseline works on and every budget is counted on.
  Each message is a line ``"{speaker}: {text}"`` (speaker = ``Message.name`` or the role;
  tool calls and results as their text), and whenever the calendar date of
  ``Message.timestamp`` changes, a header line ``[8 May 2023]`` comes before it.
- **Answer retention** (LoCoMo): a gold answer's content words (lowercase, split on
  non-alphanumerics, minus :data:`STOPWORDS`) must all appear as words of the output.
- **Exact facts** (agent sessions): paths, shell commands, numbers, ids and URLs, found by
  this module's own regular expressions (independent of precis's extraction) in the
  fragments precis's analysis rates HIGH; a fact is kept when it appears verbatim in the
  output (or JSON-escaped, as it reads inside a tool call's arguments). The line-number
  gutter of a file listing (``   110→``, ``   110\t``, ``110:``) is not a fact.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import precis
from precis.model import Conversation, Image, Message, Text

try:  # run as a script (bench/ on sys.path) or imported as bench._compress_common
    from _common import require_data
    from session import _counter
except ImportError:  # pragma: no cover
    from bench._common import require_data
    from bench.session import _counter

__all__ = [
    "AGENT_FILES",
    "CATEGORIES",
    "FACT_KINDS",
    "LOCOMO",
    "STOPWORDS",
    "Fact",
    "Line",
    "Question",
    "Session",
    "agent_sessions",
    "content_words",
    "counter",
    "date_label",
    "extract_facts",
    "fact_present",
    "high_facts",
    "load_compress",
    "locomo_conversations",
    "locomo_questions",
    "message_lines",
    "pct",
    "render",
    "render_conversation",
    "retained",
]

counter = _counter
"""The benchmarks' token counter: o200k_base from the shared tokenizers, else the estimator."""

LOCOMO = ("locomo", "locomo_dev.json")
AGENT_FILES: tuple[tuple[str, int | None], ...] = (
    ("claude-code/python-to-rust-port.transcript.jsonl", None),
    ("claude-code/marot-spotter.subagent-aa84377.jsonl", None),
    ("anthropic/bashkit-eval-claude-opus-4-7.json", None),
    ("anthropic/python-to-rust-port.messages.json", None),
    ("openai/tau-bench-gpt-4o-airline-first100.json", 20),
    ("openai/swe-agent-marshmallow-1867.traj", None),
    ("openai/openhands-multi-swe-bench.output.jsonl", None),
)
"""Agent-session files under ``transcripts/`` and how many conversations to take (None: all)."""

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Session:
    """One conversation of one file."""

    file: str
    label: str
    conversation: Conversation


def agent_sessions(data: Path) -> list[Session]:
    """Every agent session of :data:`AGENT_FILES` (skips the run when a file is missing)."""
    sessions = []
    for rel, limit in AGENT_FILES:
        path = require_data(data, "transcripts", *rel.split("/"))
        convs = precis.load_all(path).conversations
        for index, conv in enumerate(convs[:limit] if limit else convs):
            label = f"{rel}#{index}" if len(convs) > 1 else rel
            sessions.append(Session(rel, label, conv))
    return sessions


def locomo_conversations(data: Path) -> list[Conversation]:
    """LoCoMo conversations as text: each shared photo becomes its caption
    (``[image: a photo of ...]``), the way every method sees it, so no method pays the
    fixed image cost of a token counter for pictures the benchmark cannot use."""
    convs = precis.load_all(require_data(data, *LOCOMO)).conversations
    for conv in convs:
        for message in conv.messages:
            message.parts = [Text(p.text) if isinstance(p, Image) else p for p in message.parts]
    return convs


def load_compress() -> Callable[..., Any] | None:
    """``precis.compact.compress``, or None (with a message) when it is not available."""
    try:
        from precis.compact import compress
    except ImportError as exc:
        print(f"precis.compact not available ({exc})")
        return None
    return compress  # type: ignore[no-any-return]


def pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


# ---------------------------------------------------------------------- rendering

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


def date_label(timestamp: str | None) -> str | None:
    """``"2023-05-08T13:56:00"`` -> ``"8 May 2023"`` (None when there is no ISO date)."""
    match = _ISO_DATE.match(timestamp or "")
    if not match:
        return None
    year, month, day = (int(g) for g in match.groups())
    if not 1 <= month <= 12 or not 1 <= day <= 31:
        return None
    return f"{day} {_MONTHS[month - 1]} {year}"


@dataclass(frozen=True)
class Line:
    """One message as rendered: ``index`` in the conversation, speaker, text, date."""

    index: int
    speaker: str
    body: str
    date: str | None
    system: bool


def message_lines(messages: Iterable[Message]) -> list[Line]:
    """The rendered line of every message that has any text (empty ones are left out)."""
    lines = []
    for index, message in enumerate(messages):
        body = "\n".join(p.text for p in message.parts if p.text)
        if body.strip():
            lines.append(Line(index, message.name or message.role, body,
                              date_label(message.timestamp), message.role == "system"))
    return lines


def render(items: Iterable[tuple[Line, str]]) -> str:
    """``(line, text shown for it)`` pairs, in order, with date headers where the date changes."""
    out: list[str] = []
    last: str | None = None
    for line, body in items:
        if line.date and line.date != last:
            out.append(f"[{line.date}]")
            last = line.date
        out.append(f"{line.speaker}: {body}")
    return "\n".join(out)


def render_conversation(messages: Iterable[Message]) -> str:
    return render((line, line.body) for line in message_lines(messages))


# ------------------------------------------------------------- answer retention

_STOPWORD_LIST = """
a an the and or but nor so yet of in on at to for from by with about as into onto over under
after before during between through up down out off than then there here
is am are was were be been being do does did done has have had having will would shall should
can could might must
i me my mine we us our ours you your yours he him his she her hers it its they them their theirs
this that these those who whom whose which what when where why how
not no all any some each both either neither such very just also too only own same other
s t d ll m re ve
"""
STOPWORDS = frozenset(_STOPWORD_LIST.split())
"""Words that carry no answer content (a small English list; month names and numbers stay)."""

_WORD = re.compile(r"[^\W_]+")


def content_words(text: str) -> list[str]:
    """Lowercase alphanumeric words of ``text`` minus :data:`STOPWORDS`, in order."""
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


@dataclass(frozen=True)
class Question:
    index: int
    category: int
    question: str
    answer: str
    words: frozenset[str]


def locomo_questions(conv: Conversation) -> list[Question]:
    """The scorable questions: categories 1-4 with an answer that has content words."""
    questions = []
    for index, qa in enumerate(conv.metadata.get("locomo", {}).get("qa", [])):
        category, answer = qa.get("category"), qa.get("answer")
        if category not in CATEGORIES or answer is None:
            continue
        words = frozenset(content_words(str(answer)))
        if words:
            questions.append(Question(index, category, str(qa.get("question", "")),
                                      str(answer), words))
    return questions


def retained(questions: Iterable[Question], output: str) -> set[int]:
    """Indexes of the questions whose every answer content word is a word of ``output``."""
    words = set(_WORD.findall(output.lower()))
    return {q.index for q in questions if q.words <= words}


# ------------------------------------------------------------------ exact facts

FACT_KINDS = ("path", "command", "number", "id", "url")


@dataclass(frozen=True, order=True)
class Fact:
    kind: str
    value: str


_URL = re.compile(r"https?://[^\s<>\"'`)\]}|\\]+")
_PATH = re.compile(
    r"(?<![\w/:.~@+<)}-])"
    r"(?:(?:~|\.{1,2})?(?:/[\w.@+-]+)+|[\w.@+-]+(?:/[\w.@+-]+)+)/?"
)
_EXTENSIONS = (
    "py|pyi|rs|toml|json|jsonl|yaml|yml|md|rst|txt|cfg|ini|lock|js|mjs|ts|tsx|jsx|sh|cpp|hpp"
    "|go|java|rb|html|css|sql|csv|log|ipynb|traj"
)
_FILENAME = re.compile(rf"(?<![\w/.@+-])[\w-]+(?:\.[\w-]+)*\.(?:{_EXTENSIONS})(?![\w/.-])")
_FILE_EXT = re.compile(rf"\.(?:{_EXTENSIONS})$|\.[A-Za-z0-9]{{1,6}}$")
_UUID = re.compile(r"(?<![\w-])[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}(?![\w-])")
_HEX = re.compile(r"(?<![\w-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,}(?![\w-])")
_TICKET = re.compile(r"(?<![\w-])[A-Z][A-Z0-9]+-\d+(?![\w-])|(?<![\w#&])#\d+\b")
_CODE = re.compile(r"(?<![\w-])(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{6,12}(?![\w-])")
_SNAKE_ID = re.compile(r"(?<![\w-])[a-z][a-z0-9]*(?:_[a-z0-9]+)*_\d{2,}(?![\w-])")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)*(?!\w)")
_CLI = (
    "git|pip|pip3|python|python3|pytest|uv|cargo|rustc|npm|npx|yarn|pnpm|node|make|cmake|cd|ls"
    "|cat|grep|rg|find|sed|awk|mkdir|rm|cp|mv|touch|chmod|echo|curl|wget|docker|kubectl|ruff"
    "|mypy|tox|poetry|bash|sh|head|tail|wc|export|apt|apt-get|brew|tar|diff|gcc|javac|mvn"
    "|gradle|go"
)
_CLI_LINE = re.compile(rf"^[ \t]*((?:{_CLI})(?:[ \t][^\n]*)?)$", re.MULTILINE)
_DOLLAR_LINE = re.compile(r"^[ \t]*\$[ \t]+([^\n]+)$", re.MULTILINE)
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_CLI_START = re.compile(rf"^(?:\$\s+)?(?:{_CLI})\s+\S")  # with an argument: `sed` is a name
_COMMAND_KEYS = frozenset({"command", "commands", "cmd"})
_SED = re.compile(r"(?<![\w/])[sy]([/|#,])[^\s]*?\1[^\s]*?\1[gimpIe0-9]*(?![\w/])")
"""A sed substitution (``s/localhost/db.internal/g``): an edit, not a path."""
_NOT_COMMAND = re.compile(r"^(?:#.*|[{}()\[\];&|\s]*)$")
"""A comment or a lone brace: the first line of a ``command`` value that runs nothing."""
_GUTTER = re.compile(r"^[ \t]*\d+(?:→|\t)|^\d+:(?=[ \t]|\r?$)", re.MULTILINE)
"""Line numbers of a file listing (``cat -n``, Claude Code ``Read``, SWE-agent ``open``)."""


def _mask(text: str, pattern: re.Pattern[str], keep: Callable[[str], str | None],
          kind: str, found: set[Fact]) -> str:
    """Record every match ``keep`` accepts as a fact and blank it out of ``text``."""
    def replace(match: re.Match[str]) -> str:
        value = keep(match.group(0))
        if value is None:
            return match.group(0)
        found.add(Fact(kind, value))
        return " " * len(match.group(0))
    return pattern.sub(replace, text)


def _url(value: str) -> str | None:
    value = value.rstrip(".,;:!?")
    return value if len(value) > len("https://") else None


def _path(value: str) -> str | None:
    value = value.rstrip(".,;:/")
    if not re.search(r"[A-Za-z]", value):
        return None
    if value.startswith(("/", "~", ".")) and "/" in value:
        return value
    last = value.rsplit("/", 1)[-1]
    return value if value.count("/") >= 2 or _FILE_EXT.search(last) else None


def _same(value: str) -> str:
    return value


def _number(value: str) -> str | None:
    return value if "." in value or sum(c.isdigit() for c in value) >= 2 else None


def _commands(text: str, found: set[Fact]) -> None:
    for match in _DOLLAR_LINE.finditer(text):
        found.add(Fact("command", match.group(1).strip()))
    for match in _CLI_LINE.finditer(text):
        found.add(Fact("command", match.group(1).strip()))
    for match in _INLINE_CODE.finditer(text):
        code = match.group(1).strip()
        if _CLI_START.match(code):
            found.add(Fact("command", re.sub(r"^\$\s+", "", code)))


def _extract_text(text: str, found: set[Fact]) -> None:
    text = _GUTTER.sub(lambda m: " " * len(m.group(0)), text)
    _commands(text, found)
    text = _mask(text, _URL, _url, "url", found)
    text = _mask(text, _UUID, _same, "id", found)
    text = _SED.sub(lambda m: " " * len(m.group(0)), text)
    text = _mask(text, _PATH, _path, "path", found)
    text = _mask(text, _FILENAME, _same, "path", found)
    for pattern in (_HEX, _TICKET, _CODE, _SNAKE_ID):
        text = _mask(text, pattern, _same, "id", found)
    _mask(text, _NUMBER, _number, "number", found)


def _leaves(value: Any, key: str | None = None) -> Iterator[tuple[str | None, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, str(k))
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v, key)
    else:
        yield key, value


def extract_facts(text: str) -> set[Fact]:
    """Paths, commands, numbers, ids and URLs in ``text``.

    Text that is a JSON object or array (a tool call's arguments) is decoded and every
    string in it is read on its own; the first line of a ``command`` / ``commands`` /
    ``cmd`` value that is not a comment or a lone brace is a command whatever it starts
    with. A sed substitution (``s/a/b/g``) is no path, nor is what follows a variable
    (``$(outDir)/ponyc``: only the whole would be).
    """
    found: set[Fact] = set()
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            value = json.loads(stripped)
        except ValueError:
            value = None
        if isinstance(value, (dict, list)):
            for key, leaf in _leaves(value):
                if isinstance(leaf, str):
                    if key in _COMMAND_KEYS:
                        first = next((line.strip() for line in leaf.splitlines()
                                      if not _NOT_COMMAND.match(line.strip())), None)
                        if first:
                            found.add(Fact("command", first))
                    _extract_text(leaf, found)
                elif isinstance(leaf, (int, float)) and not isinstance(leaf, bool):
                    _extract_text(str(leaf), found)
            return {f for f in found if f.value}
    _extract_text(text, found)
    return {f for f in found if f.value}


def high_facts(conv: Conversation) -> set[Fact]:
    """The facts of the fragments precis's analysis rates HIGH."""
    from precis.analysis import analyze

    facts: set[Fact] = set()
    for item in analyze(conv).items():
        if item.level == "HIGH":
            facts |= extract_facts(item.fragment.text)
    return facts


def fact_present(fact: Fact, output: str) -> bool:
    """``fact`` appears verbatim in ``output``, or JSON-escaped (inside tool-call arguments)."""
    if fact.value in output:
        return True
    escaped = json.dumps(fact.value, ensure_ascii=False)[1:-1]
    return escaped != fact.value and escaped in output
