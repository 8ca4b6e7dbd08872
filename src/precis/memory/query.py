"""Query understanding: what a memory question asks for, in English and Chinese alike.

From the question alone: its content words (both languages), the exact entities in it (ids,
paths), the people it names ("Caroline", "张伟", "Bart在…"), the card types its
wording points to ("which SQL…" -> sql, "怎么选…" -> decision, "怎么配置" -> config,
"what did we do in the billing session" / "上次做到哪了" -> summary), a
time range from its time expressions ("last week", "2023年5月", "去年圣诞节", "三月初"),
whether it asks for the latest state ("current", "最近") or for a version ("which version",
"哪个版本"), and, for a question about a cause ("why", "为什么"), the words that introduce
one ("because", "由于"), added to the keyword search (and for a question about a session,
the tag of its summary card, ``summary``).

A query of several lines (a pasted conversation, a note and then a question) asks with its
last line: the types, the time, the latest-or-version wish and the cause are read there, and
its last two lines are also searched on their own (``end``), since what was said last is
what a memory should answer. A statement ("我喜欢苹果汁！", "I like jazz.": a full stop or
an exclamation, no question) asks for no type, nothing latest, no version and no cause.
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

# \b of an English word, also where it meets a Chinese character ("这个bug", "Redis的config")
_B = r"(?:(?<![A-Za-z0-9_])(?=[A-Za-z0-9_])|(?<=[A-Za-z0-9_])(?![A-Za-z0-9_]))"


def _cue(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern.replace(r"\b", _B), re.IGNORECASE)


_INTENT_CUES: tuple[tuple[CardType, str], ...] = (
    ("sql", r"\bsql\b|\bquer(?:y|ies)\b|\bselect\b|查询语句|sql语句"),
    ("config", r"\bconfig\w*|\bsettings?\b|\benv(?:ironment)? var|\bport\b|\bconfigure"
               r"|配置|参数|设置|端口|环境变量"),
    ("decision", r"\bdecid\w*|\bdecision|\bchose|\bchoose|\bpick(?:ed)?\b"
                 r"|决定|选型|选择|怎么选|定了|选了|选用|采用"),
    ("requirement", r"\brequire\w*|\bneeds?\b|\bspec\b|需求|要求"),
    ("constraint",
     r"\bconstraint|\blimit\w*|\bmust not\b|\bnot allowed|限制|约束|不能|不允许|禁止"),
    ("error-fix", r"\berror|\bbug\b|\bfail\w*|\bexception|\bcrash\w*|\bfix\w*"
                  r"|报错|错误|异常|修复|失败|出错|故障"),
    ("preference", r"\bprefer\w*|\bfavou?rite|\blikes?\b|\benjoys?\b|喜欢|偏好|爱好|最爱"),
    ("todo", r"\btodo\b|\bto-?do\b|\bpending\b|\bnext steps?\b|待办|下一步|还没做|待处理"),
    ("code", r"\bcode\b|\bfunction\b|\bsnippet|\bclass\b|代码|函数"),
    ("command", r"\bcommand|\bcli\b|\brun\b|命令|运行|执行"),
    ("event", r"\bwhen did\b|\bwhat happened\b|什么时候|哪天|哪一天|几号|发生了什么"),
    # a session as a whole: what was done in it, where it stands, which one did something
    ("summary", r"\b(?:which|what|that|this|last|previous|earlier|same|our|my|the\s+\w+)\s+"
                r"sessions?\b|\bsessions?\s+(?:about|on|where|in which|that)\b"
                r"|\bwhat (?:did|have) (?:we|you|i) (?:do|done|work\w* on)\b"
                r"|\bwhere (?:did )?(?:we|you|i) (?:leave|left) off|\bsummar\w*|\brecap\b"
                r"|\bso far\b|\bworked on\b|\bpending\b|\bnext steps?\b"
                # the work's progress, not a person's ("Gina's progress", "her progress")
                r"|(?<!'s )(?<!\u2019s )(?<!\bher )(?<!\bhis )(?<!\btheir )\bprogress\b"
                r"|会话|做到哪|进展|进度|总结|概括|摘要|做了什么|做了哪些|干了什么|下一步|待办"),
)
_INTENTS: tuple[tuple[CardType, re.Pattern[str]], ...] = tuple(
    (kind, _cue(pattern)) for kind, pattern in _INTENT_CUES
)
# "which version" / "哪个版本": answered by a card that names a version (v2, 7.2.1)
_VERSION = _cue(r"\b(?:which|what) version|\bversion numbers?\b|哪个版本|什么版本|哪一版|版本号")
_VERSION_WORDS = ("version", "版本")
# a sentence that asks: a question mark or a question word; a statement that ends in a full
# stop or an exclamation ("我喜欢苹果汁！") tells, so its cue words ask for no card type
_QUESTION = _cue(r"[?？]|\b(?:what|which|when|where|who|whom|whose|why|how)\b"
                 r"|什么|哪|吗|怎么|为什么|为何|为啥|谁|几|多少|是否|有没有")
_TOLD = re.compile(r"[.。!！…~～]+[\s\"'”’」』）)]*$")
# A question about a cause is answered by a statement of one, which seldom repeats the
# question's words ("why did the export time out?" - "the problem is a full table scan"):
# such a query also looks, through keywords, for the words that introduce a cause.
_CAUSE = _cue(r"\bwhy\b|\breasons?\b|\bcause[sd]?\b|\broot cause"
              r"|原因|为什么|为何|为啥|怎么会|起因")
_CAUSE_WORDS = ("because", "caused", "due", "reason", "因为", "由于", "导致", "所以", "问题在于",
                "问题")
# a question about a session looks for its summary card by the card's tag (in any language),
# and about the last one ("上次那个会话做到哪了") for the latest
_SUMMARY_WORDS = ("summary",)
# the words of such a question that ask about a session without naming its content: the
# question is searched by the rest ("git 那个会话做到哪了" -> git)
SESSION_CUE_WORDS = frozenset({
    "session", "sessions", "会话", "做到", "哪了", "哪里", "进展", "进度", "总结", "概括",
    "摘要", "一步", "待办", "上次", "上回",
    "recap", "summary", "summarize", "summarise", "progress", "far", "leave", "left", "last",
    "previous", "latest", "next", "step", "steps", "pending", "work", "worked"})
_LAST = _cue(r"\b(?:last|previous|latest)\b|上次|上回|上一次|最近")
_RECENT = _cue(r"\b(?:latest|current(?:ly)?|now|most recent|newest|recently|lately|final)\b"
               r"|最新|最近|目前|现在|当前")
# a capitalised word (a name), also right before or after Chinese ("Bart在生日派对上")
_NAME = re.compile(r"(?<![A-Za-z])[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*(?![A-Za-z])")
_ZH_NAME_TAGS = frozenset({"nr", "nrfg", "nrt"})  # jieba's tags of people's names
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
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
    wants_version: bool = False
    end: str | None = None  # the last two lines of a query of three or more lines
    end_words: tuple[str, ...] = ()


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
    if not words and not entities:
        raise QueryError("the query has no searchable words (only stop words or punctuation)")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    ask = lines[-1] if len(lines) > 1 else text
    end = "\n".join(lines[-2:]) if len(lines) > 2 else None
    if _TOLD.search(ask) and not _QUESTION.search(ask):
        ask = ""  # a statement: it asks for no type, nothing latest, no version, no cause
    wants_version = bool(_VERSION.search(ask))
    intents = tuple(kind for kind, pattern in _INTENTS if pattern.search(ask))
    if "summary" in intents:  # "which session ...": the word names no content
        words = [w for w in words if w.lower() not in SESSION_CUE_WORDS] or words
    expansions = (_CAUSE_WORDS if _CAUSE.search(ask) else ()) + (
        _VERSION_WORDS if wants_version else ()) + (
        _SUMMARY_WORDS if "summary" in intents else ())
    return QueryPlan(
        text=text,
        words=tuple(words[:MAX_QUERY_WORDS]),
        entities=entities,
        names=_names(text),
        intents=intents,
        time=time_range(lines[-1] if len(lines) > 1 else text, today or date.today()),
        wants_recent=bool(_RECENT.search(ask)) or ("summary" in intents
                                                   and bool(_LAST.search(ask))),
        truncated=truncated,
        expansions=tuple(w for w in dict.fromkeys(expansions) if w not in words),
        wants_version=wants_version,
        end=end,
        end_words=tuple(query_words(end)[:MAX_QUERY_WORDS]) if end else (),
    )


def _names(text: str) -> tuple[str, ...]:
    """The people a query names: capitalised words (not question words) and, in Chinese, the
    words jieba tags as a person's name ("张伟", "小王", "李老师")."""
    names = [m.group(0) for m in _NAME.finditer(text) if m.group(0) not in _QUESTION_WORDS]
    if _HAN.search(text):
        import rjieba

        names += [word for word, tag in rjieba.tag(text) if tag in _ZH_NAME_TAGS]
    return tuple(dict.fromkeys(names))
