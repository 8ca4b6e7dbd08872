"""What one line of text looks like: fence, heading, list item, table row, SQL, code or prose.

These are the line-level rules behind :mod:`precis.segment._blocks`. Each takes the line
with its indentation removed (``s``) and answers with a compiled regex, so a line costs a
few C-level matches and no per-character Python.

Code detection is deliberately conservative: a line is code-like only when it has syntax
prose rarely has (``def f(``, ``import x``, ``x = 1``, ``foo(bar)``, a shell prompt ``$ ``,
a known command such as ``pip install``, a line ending in ``{`` / ``[`` / ``(``, a line
ending in ``;`` that also has brackets, quotes or ``=``, a lone closing bracket, ...).
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

__all__ = [
    "JSON_LANGS",
    "SQL_LANGS",
    "closing_fence",
    "indent_width",
    "is_code_line",
    "is_exception_line",
    "is_rule",
    "is_table_separator",
    "line_kind",
    "match_fence",
    "match_heading",
    "match_sql_start",
    "sql_after_colon",
]

JSON_LANGS = frozenset({"json", "jsonc", "json5", "jsonl", "ndjson", "geojson"})
SQL_LANGS = frozenset(
    {
        "sql",
        "mysql",
        "postgresql",
        "postgres",
        "psql",
        "pgsql",
        "plpgsql",
        "plsql",
        "sqlite",
        "sqlite3",
        "tsql",
        "mssql",
        "hive",
        "hql",
        "sparksql",
        "bigquery",
        "snowflake",
    }
)

# ``` or ~~~ (three or more), then the info string ("python", "json title=x", ...).
_FENCE = re.compile(r"(`{3,}|~{3,})[ \t]*([^\s`]*)(.*)")
_HEADING = re.compile(r"#{1,6}(?:[ \t]|\Z)")
_CELL = r"[ \t]*:?-+:?[ \t]*"
_TABLE_SEP = re.compile(rf"\|?{_CELL}(?:\|{_CELL})+\|?\Z|\|{_CELL}\|\Z")

_CJK_NUM = "一二三四五六七八九十百零〇"
_LIST = (
    r"(?:[-*+]|\d{1,9}[.)]|\((?:\d{1,9}|[A-Za-z]|[ivxIVX]{2,5})\))(?:[ \t]|\Z)"
    r"|(?:[A-Za-z]|[ivxIVX]{2,5})[.)][ \t]+\S"  # "a. text", not a lone "C."
    r"|\d{1,9}[.)．](?=[\u3400-\u9fff])"
    r"|\d{1,9}、"
    rf"|[（(][{_CJK_NUM}\d]{{1,4}}[）)]"
    rf"|[{_CJK_NUM}]{{1,4}}[、．]"
    r"|[①-⑳⑴-⒇⒈-⒛❶-❿➀-➉]"
    r"|[•·▪‣◦●○■□◆◇]"
)

# SQL statement starts. Any case when the shape is unmistakably SQL (``insert into t (``,
# ``select * from``, ``create table t (``); the bare keywords only in upper case.
_ID = r"[\w.\"`\[\]]+"
_SQL_BODY = (
    r"(?i:insert[ \t]+(?:or[ \t]+\w+[ \t]+)?into[ \t]+"
    + _ID
    + r"[ \t]*(?:\(|values\b|select\b|default\b)"
    r"|delete[ \t]+from[ \t]+" + _ID + r"[ \t]*(?:where\b|using\b|;|\Z)"
    r"|update[ \t]+" + _ID + r"[ \t]+set[ \t]+" + _ID + r"[ \t]*="
    r"|create[ \t]+(?:or[ \t]+replace[ \t]+)?"
    r"(?:(?:temp|temporary|unique|materialized|virtual)[ \t]+)?"
    r"(?:table|view|index|database|schema|function|procedure|trigger|extension|sequence|type)"
    r"[ \t]+(?:if[ \t]+not[ \t]+exists[ \t]+)?" + _ID + r"[ \t]*(?:\(|as\b|on\b|;|\Z)"
    r"|alter[ \t]+table[ \t]+\S+[ \t]+(?:add|drop|alter|rename|modify|set|owner)\b"
    r"|drop[ \t]+(?:table|view|index|database|schema|sequence|function|trigger)[ \t]+"
    r"(?:if[ \t]+exists[ \t]+)?" + _ID + r"[ \t]*(?:cascade\b|restrict\b|;|\Z)"
    r"|truncate[ \t]+table\b"
    r"|select[ \t]+(?:\*|distinct\b|count[ \t]*\(|" + _ID + r"[ \t]*,[ \t]*[\w\"`]"
    r"|[\w.*\"`]+[ \t]+from[ \t]+"
    + _ID
    + r"[ \t]*(?:where\b|join\b|inner\b|left\b|limit\b|order\b|group\b|as\b|;|\Z))"
    r"|with[ \t]+(?:recursive[ \t]+)?\w+(?:[ \t]*\([^)]*\))?[ \t]+as[ \t]*\("
    r"|explain[ \t]+(?:analyze[ \t]+)?select\b)"
    r"|(?:SELECT|INSERT[ \t]+INTO|DELETE[ \t]+FROM|UPDATE[ \t]+\S+[ \t]+SET"
    r"|CREATE[ \t]+(?:[A-Z]+[ \t]+)?(?:TABLE|VIEW|INDEX|DATABASE|SCHEMA|FUNCTION|TRIGGER)"
    r"|ALTER[ \t]+TABLE|DROP[ \t]+TABLE|WITH[ \t]+\w+(?:[ \t]*\([^)]*\))?[ \t]+AS)(?:[ \t]|\Z)"
)
_CODE_START = r"""
      (?:async[ \t]+)?def[ \t]+\w+[ \t]*\(
    | class[ \t]+\w+(?:[ \t]*[(:{<]|[ \t]+(?:extends|implements)\b)
    | import[ \t]+(?:[\w.]+(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*[\w.]+(?:[ \t]+as[ \t]+\w+)?)*
                   [ \t]*;?\Z|\{|\*[ \t]+as\b|[\w$]+[ \t]+from\b|["'])
    | from[ \t]+[\w.]+[ \t]+import[ \t]
    | (?:export[ \t]+)?(?:default[ \t]+)?(?:async[ \t]+)?function\b[ \t*]*[\w$]*[ \t]*\(
    | (?:export[ \t]+)?(?:const|let|var)[ \t]+[\w${}\[\], ]+(?::[^=]+)?=
    | export[ \t]+(?:default|class|interface|type|enum|\{|\*|\w+=)
    | (?:pub(?:\([\w ]+\))?[ \t]+)?(?:async[ \t]+)?fn[ \t]+\w+[ \t]*[(<]
    | pub[ \t]+(?:struct|enum|mod|use|trait|const|static|type|crate|impl)\b
    | (?:use|mod)[ \t]+[\w:]+(?:::|;)
    | package[ \t]+[\w.]+;?\Z
    | func[ \t]+(?:\([^)]*\)[ \t]*)?\w+[ \t]*[(\[]
    | \#(?:include|define|ifn?def|endif|pragma|undef)\b
    | \#!/
    | Traceback[ \t]\(most[ \t]recent[ \t]call[ \t]last\):
    | (?:public|private|protected|internal)[ \t]+(?:(?:static|final|abstract|async|override
        |readonly|virtual|sealed)[ \t]+)*(?:class|interface|enum|struct|record|void
        |[\w<>\[\],?]+[ \t]+\w+[ \t]*[(=;])
    | (?:else|try|finally)[ \t]*:\Z
    | except\b[^:]*:\Z
    | (?:if|elif|while)[ \t]+(?=[^:]*(?:==|!=|<=|>=|[<>(\[.]))[^:]*:\Z
    | elif\b.*:\Z
    | for[ \t]+\w+(?:[ \t]*,[ \t]*\w+)*[ \t]+in[ \t]+\S.*:\Z
    | with[ \t]+[\w.]+\(.*\)(?:[ \t]+as[ \t]+\w+)?[ \t]*:\Z
    | (?:if|while|for|switch)[ \t]*\(.*\)[ \t]*\{?\Z
    | return\b[^。！？]*;\Z
    | @[\w.]+(?:\(.*\))?\Z
    | \$[ \t]+\S
    | >>>(?:[ \t]|\Z)
    | PS[ \t]+[A-Za-z]:\\[^>]*>
    | [A-Za-z]:\\[^>\s]*>[ \t]*\S
    | //
    | /\*
    | \*/
    | <!--
    | </?[A-Za-z][\w-]*(?:[ \t][^<>]*)?/?>
    | [}\])]+[;,)]*[ \t]*\Z
    | (?:pip3?|pipx|uv|poetry|conda|mamba)[ \t]+(?:install|uninstall|add|remove|run|sync
        |create|list|show|init|lock|activate)\b
    | (?:npm|yarn|pnpm|bun)[ \t]+(?:install|i|add|remove|run|test|start|build|ci|init
        |publish|exec|dlx)\b
    | npx[ \t]+\S
    | git[ \t]+(?:clone|add|commit|push|pull|checkout|switch|branch|merge|rebase|status|log
        |diff|reset|stash|fetch|init|remote|tag|cherry-pick|restore|show|config|bisect|blame
        |revert|worktree|rm|mv)\b
    | docker(?:-compose)?[ \t]+(?:run|build|compose|exec|ps|pull|push|up|down|images|logs
        |stop|rm|start|tag|login)\b
    | (?:kubectl|helm|terraform)[ \t]+\w
    | (?:curl|wget)[ \t]+(?:-|["']?https?://)
    | cargo[ \t]+(?:build|run|test|add|install|new|init|check|clippy|fmt|bench|publish)\b
    | go[ \t]+(?:run|build|test|get|mod|install|vet|fmt)\b
    | sudo[ \t]+\S
    | (?:apt(?:-get)?|brew|yum|dnf|apk|pacman)[ \t]+(?:install|update|upgrade|remove|add|-S)\b
    | python3?(?:\.\d+)?[ \t]+(?:-[mcVuO]|\S+\.py\b)
    | (?:node|deno|ts-node)[ \t]+\S+\.[mc]?[jt]s\b
    | pytest(?:[ \t]|\Z)
    | (?:ruff|black|isort|mypy|flake8)[ \t]+(?:check|format|-|\S*[/.])
    | cd[ \t]+\S+\Z
    | (?:mkdir|chmod|chown|rm|cp|mv|ls|cat|grep|rg|find|touch|tail|head|source|ln|tar|unzip
        |ssh|scp|rsync|echo)[ \t]+(?:-|[\w.~$/-]*[/~$]|\S+\.\w+(?:[ \t]|\Z))
    | [A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*|\[[^\]]*\])*[ \t]*(?::[ \t]*[\w\[\], .|]+)?
        (?:[-+*/%&|^]|\*\*|//|<<|>>)?=(?!=)[ \t]*\S
    | (?:await[ \t]+|return[ \t]+)?[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*\(.*\)[ \t]*[;,]?\Z
    """
_SEMI_CODE = re.compile(r"[=(){}\[\]\"'<>]")
# Lines that start like this ("The ", "It's ", "We,") can be none of list / SQL / code
# by the patterns above (bar the line-end rules): a fast path for English prose.
_PLAIN_START = re.compile(
    r"(?!(?i:select|insert|delete|update|create|alter|drop|truncate|with|explain)\b|Traceback)"
    r"[A-Z][a-z]+(?:'[a-z]+)?[ ,](?![ \t]*(?:[-+*/%&|^:]|\*\*|//|<<|>>|=))"
)
# First characters of the list markers that do not start with an ASCII letter or sign.
_LIST_FIRST = (
    "0123456789０１２３４５６７８９（("
    + _CJK_NUM
    + "".join(
        chr(c)
        for r in (
            (0x2460, 0x2473),
            (0x2474, 0x2487),
            (0x2488, 0x249B),
            (0x2776, 0x277F),
            (0x2780, 0x2789),
        )
        for c in range(r[0], r[1] + 1)
    )
    + "•·▪‣◦●○■□◆◇"
)


# The big patterns are compiled on first use, so ``import precis`` stays fast.
@cache
def _list_re() -> re.Pattern[str]:
    return re.compile(_LIST)


@cache
def _sql_start_re() -> re.Pattern[str]:
    return re.compile(_SQL_BODY)


@cache
def _sql_after_colon_re() -> re.Pattern[str]:
    return re.compile(r"[:：][ \t]*(?=" + _SQL_BODY + ")")


@cache
def _code_start_re() -> re.Pattern[str]:
    return re.compile(_CODE_START, re.X)


@cache
def _line_kind_re() -> re.Pattern[str]:
    """List, SQL and code in one match; the group that matched names the kind."""
    return re.compile(f"(?P<list_item>{_LIST})|(?P<sql>{_SQL_BODY})|(?P<code>(?x:{_CODE_START}))")


_EXCEPTION_LINE = re.compile(r"[\w.]*(?:Error|Exception|Exit|Interrupt|Warning)(?::|\Z)")


def is_exception_line(s: str) -> bool:
    """``ValueError: bad``: the last line of a traceback (continues a code block)."""
    return _EXCEPTION_LINE.match(s) is not None


def match_fence(s: str) -> tuple[str, str] | None:
    """``(marker, language)`` when ``s`` opens a fenced block (```` ```py ```` / ``~~~``)."""
    m = _FENCE.match(s)
    if m is None:
        return None
    marker = m.group(1)
    if marker[0] == "`" and "`" in m.group(3):
        return None  # ```code``` on one line is inline code, not a fence
    return marker, m.group(2).lower()


@lru_cache(maxsize=64)
def closing_fence(char: str, length: int) -> re.Pattern[str]:
    """A multi-line pattern for the line that closes a fence of ``length`` ``char``s."""
    return re.compile(r"^[ \t]*" + re.escape(char) + f"{{{length},}}" + r"[^\S\n]*$", re.M)


def match_heading(s: str) -> bool:
    return _HEADING.match(s) is not None


def is_rule(s: str) -> bool:
    """``---``, ``***``, ``___`` (spaces allowed) or ``===``: a break or a setext underline."""
    c = s[0]
    if c not in "-*_=":
        return False
    t = s.replace(" ", "").replace("\t", "")
    return len(t) >= 3 and t.count(c) == len(t)


def is_table_separator(s: str) -> bool:
    return "-" in s and _TABLE_SEP.match(s) is not None


def match_sql_start(s: str) -> bool:
    return _sql_start_re().match(s) is not None


def sql_after_colon(line: str) -> int:
    """Offset in ``line`` where SQL starts after a colon (``执行：SELECT ...``), or -1."""
    m = _sql_after_colon_re().search(line)
    return m.end() if m else -1


def is_code_line(s: str) -> bool:
    """Whether the stripped line ``s`` has syntax that prose does not (see module docs)."""
    last = s[-1]
    if last in "{[(":
        return True
    if last == ";" and _SEMI_CODE.search(s):
        return True
    return _code_start_re().match(s) is not None


def line_kind(s: str) -> str | None:
    """``list_item``, ``sql`` or ``code`` for the stripped line ``s``, else ``None``."""
    c = s[0]
    if c.isascii() and not c.isdigit():
        if not _PLAIN_START.match(s):
            m = _line_kind_re().match(s)
            if m is not None:
                return m.lastgroup
    elif c in _LIST_FIRST and _list_re().match(s):
        return "list_item"
    last = s[-1]
    if last in "{[(" or (last == ";" and _SEMI_CODE.search(s)):
        return "code"
    return None


def indent_width(line: str) -> int:
    """Columns of leading spaces / tabs (a tab counts as 4)."""
    lead = len(line) - len(line.lstrip(" \t"))
    if not lead:
        return 0
    return len(line[:lead].expandtabs(4))
