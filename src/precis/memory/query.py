"""Query understanding: what a memory question asks for.

From the question alone: its content words (both languages), the exact entities in it (ids,
paths, names), the card types its wording points to ("which SQL…" -> sql, "怎么选…" ->
decision), a time range from its time expressions ("last week", "2023年5月"), whether it
asks for the latest state ("current", "最近"), and, for a question about a cause ("why",
"原因"), the words that introduce one ("because", "由于"), added to the keyword search.
Nothing here touches the store.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from precis.compact._facts import facts
from precis.errors import QueryError
from precis.memory.card import CardType
from precis.memory.text import query_words
from precis.memory.timeref import TimeRange, time_range

__all__ = ["MAX_QUERY_CHARS", "MAX_QUERY_WORDS", "QueryPlan", "understand"]

MAX_QUERY_CHARS = 10_000
MAX_QUERY_WORDS = 128  # a long query (a pasted conversation) keeps its first 128

_INTENT_CUES: tuple[tuple[CardType, str], ...] = (
    ("sql", r"\bsql\b|\bquer(?:y|ies)\b|\bselect\b|查询语句|sql语句"),
    ("config", r"\bconfig\w*|\bsettings?\b|\benv(?:ironment)? var|\bport\b|配置|参数|设置"),
    ("decision",
     r"\bdecid\w*|\bdecision|\bchose|\bchoose|\bpick(?:ed)?\b|决定|选型|选择|怎么选|定了"),
    ("requirement", r"\brequire\w*|\bneeds?\b|\bspec\b|需求|要求"),
    ("constraint", r"\bconstraint|\blimit\w*|\bmust not\b|限制|约束|不能"),
    ("error-fix",
     r"\berror|\bbug\b|\bfail\w*|\bexception|\bcrash\w*|\bfix\w*|报错|错误|异常|修复|失败"),
    ("preference", r"\bprefer\w*|\bfavou?rite|\blikes?\b|\benjoys?\b|喜欢|偏好|爱好"),
    ("todo", r"\btodo\b|\bto-?do\b|\bpending\b|\bnext steps?\b|待办|下一步"),
    ("code", r"\bcode\b|\bfunction\b|\bsnippet|\bclass\b|代码|函数"),
    ("command", r"\bcommand|\bcli\b|\brun\b|命令"),
    ("event", r"\bwhen did\b|\bwhat happened\b|什么时候|哪天"),
)
_INTENTS: tuple[tuple[CardType, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE)) for kind, pattern in _INTENT_CUES
)
# A question about a cause is answered by a statement of one, which seldom repeats the
# question's words ("why did the export time out?" - "the problem is a full table scan"):
# such a query also looks, through keywords, for the words that introduce a cause.
_CAUSE = re.compile(
    r"\bwhy\b|\breasons?\b|\bcause[sd]?\b|\broot cause|原因|为什么|为何|为啥|怎么会|起因",
    re.IGNORECASE,
)
_CAUSE_WORDS = ("because", "caused", "due", "reason", "因为", "由于", "导致", "所以", "问题在于",
                "问题")
_RECENT = re.compile(
    r"\b(?:latest|current(?:ly)?|now|most recent|newest|recently|lately|final)\b"
    r"|最新|最近|目前|现在|当前",
    re.IGNORECASE,
)
_NAME = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*\b")
_QUESTION_WORDS = frozenset({"What", "When", "Where", "Who", "Why", "How", "Which", "Did", "Does",
                             "Do", "Is", "Are", "Was", "Were", "Can", "Could", "Would", "Should",
                             "Has", "Have", "Had", "The", "A", "An", "In", "On", "At", "I", "We"})


@dataclass(frozen=True)
class QueryPlan:
    """What :func:`understand` read from a query."""

    text: str
    words: tuple[str, ...]
    entities: tuple[str, ...]
    names: tuple[str, ...]
    intents: tuple[CardType, ...]
    time: TimeRange | None
    wants_recent: bool
    truncated: bool = False
    expansions: tuple[str, ...] = ()  # extra keyword-search words the question implies


def understand(query: str, *, today: date | None = None) -> QueryPlan:
    """Read a memory query (see the module docstring); unusable queries raise QueryError."""
    if not isinstance(query, str):
        raise QueryError(f"a query must be text, got {type(query).__name__}")
    if "\x00" in query or sum(1 for c in query if ord(c) < 32 and c not in "\t\n\r") > 2:
        raise QueryError("the query holds binary data (control characters)")
    text = query.strip()
    if not text:
        raise QueryError("the query is empty")
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(
            f"the query is {len(text):,} characters long; the limit is {MAX_QUERY_CHARS:,}"
        )
    words = query_words(text)
    truncated = len(words) > MAX_QUERY_WORDS
    entities = tuple(dict.fromkeys(
        f.text for f in facts(text) if f.kind in ("url", "path", "identifier", "command")
    ))
    names = tuple(dict.fromkeys(
        m.group(0) for m in _NAME.finditer(text) if m.group(0) not in _QUESTION_WORDS
    ))
    if not words and not entities:
        raise QueryError("the query has no searchable words (only stop words or punctuation)")
    intents = tuple(kind for kind, pattern in _INTENTS if pattern.search(text))
    return QueryPlan(
        text=text,
        words=tuple(words[:MAX_QUERY_WORDS]),
        entities=entities,
        names=names,
        intents=intents,
        time=time_range(text, today or date.today()),
        wants_recent=bool(_RECENT.search(text)),
        truncated=truncated,
        expansions=tuple(w for w in _CAUSE_WORDS if w not in words) if _CAUSE.search(text)
        else (),
    )
