"""Exact facts in a text: URLs, paths, commands, identifiers, numbers, error names.

These are what a summary must carry verbatim (the quality check counts them) and what a cut
may never split (the digest keeps them whole). One regular-expression pass per token that
is not a plain word and holds a character some fact needs (:data:`_HINT`); the matches of
a token are remembered, so a token met again (a path, a flag, a box-drawing line) costs a
dictionary lookup.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import NamedTuple

__all__ = [
    "FACT_KINDS",
    "Fact",
    "command_lines",
    "exact_facts",
    "facts",
    "heredoc_end",
    "minor",
    "runs_program",
    "shell_carry",
]

FACT_KINDS = ("url", "path", "command", "identifier", "number", "error")

_EXTENSIONS = (
    "py|pyi|js|mjs|cjs|ts|tsx|jsx|json|jsonl|md|rst|sql|ya?ml|toml|go|rs|java|c|h|cpp|hpp"
    "|csv|txt|sh|ini|cfg|conf|lock|html|css|scss|rb|php|kt|swift|xml|env|log|ipynb|vue"
    "|svelte|dart|exs?|erl|hs|scala|lua|tf|proto|gradle|ps1|bat|patch|diff|pdf|png|jpe?g|svg"
    "|whl|wasm|sqlite|db|parquet|pkl"
)
_PATTERN = re.compile(
    r"(?P<url>\b(?:https?|ftp|file|s3|gs)://[^\s`'\"<>)\]}，。）]+)"
    r"|`(?P<command>[^`\s][^`\n]{0,118}[^`\s])`"
    r"|(?P<date>(?<![\w.-])\d{4}-\d{2}-\d{2}"
    r"(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?(?![\w-]))"
    r"|(?P<error>\b[A-Z][A-Za-z]*(?:Error|Exception|Warning)\b)"
    r"|(?P<path>(?<![\w.~@/:-])(?:~|\.{1,2})?(?:/[\w.@~+-]+){2,}/?"
    # (a file name's letters are ASCII: "的main.cpp文件" holds the name main.cpp)
    r"|(?<![A-Za-z0-9_/.-])[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.@+-]+)+\.[A-Za-z0-9]{1,6}"
    r"(?![A-Za-z0-9_])"
    r"|(?<![\w/.:-])(?=[\w.@+/-]*[A-Za-z])[\w.-]+(?:/[\w.@+-]+){2,}/?"  # a/b/c, no extension
    rf"|(?<![A-Za-z0-9_/.-])[A-Za-z0-9_-]+\.(?:{_EXTENSIONS})(?![A-Za-z0-9_]))"
    r"|(?P<identifier>\b[0-9a-f]{7,64}\b(?=[^\w]|$)"
    r"|\b[A-Z][A-Z0-9]+-\d+\b"
    r"|\b(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{5,}\b"
    r"|(?<!\\)\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b"
    r"|(?<!\\)\b[a-z]+[A-Z][A-Za-z0-9]*\b"
    r"|(?<![\w/.-])(?=[a-z0-9-]*\d)[a-z][a-z0-9]*(?:-[a-z0-9]+)+\b"  # k8s-prod-eu, us-east-1
    r"|(?<![\w-])--[a-z][\w-]+)"
    # (a comma only between groups of three digits: "1,024", not the "1,120000" of a CSV row)
    r"|(?P<number>(?<![\w.])\d+(?:[.:]\d+|,\d{3}(?!\d))+%?|(?<![\w.])\d{2,}%?|(?<![\w.])\d%)"
)
_COMMAND_SPAN = re.compile(r"`([^`\s][^`\n]{0,118}[^`\s])`")
_TOKEN = re.compile(r"\S+")
_WORD_EDGES = ".,;:!?()[]{}\"'*"
# Something a token must hold for any alternative of _PATTERN to match in it: "://" or a
# path's "/", a backtick, a digit (dates, numbers, ids with digits), an error name, the
# "." of a file extension (all start with a lower-case letter), a hex run without digits,
# "_" (snake_case), a lower-case letter before a capital (camelCase) or "--" (a flag). A
# token without one is skipped: the pattern is tried at every position of a token, which
# is most of the time spent here.
_HINT = re.compile(r"[\d/`_]|--|\.[a-z]|[a-z][A-Z]|Error|Exception|Warning|[a-f]{7}")
_TOKEN_CACHE: dict[str, tuple[tuple[str, str, int], ...]] = {}
_TOKEN_CACHE_SIZE = 1 << 14  # distinct tokens remembered (then the cache starts afresh)
_TOKEN_CACHE_CHARS = 256  # a longer token is scanned every time


class Fact(NamedTuple):
    kind: str
    text: str
    start: int
    end: int


# The facts of a text up to this long are remembered (the same tool output, sentence or
# path is often looked at again); a longer one is read every time.
_MEMO_CHARS = 2048
_MEMO_SIZE = 1024


class _Memo:
    """A fact reader with the answers for texts up to ``_MEMO_CHARS`` characters remembered
    (the same fragment text is read several times per compaction); each call returns a
    fresh list."""

    def __init__(self, read: Callable[[str], list[Fact]]) -> None:
        self._read = read
        self._remembered = lru_cache(maxsize=_MEMO_SIZE)(lambda text: tuple(read(text)))
        self.cache_clear = self._remembered.cache_clear
        self.cache_info = self._remembered.cache_info

    def __call__(self, text: str) -> list[Fact]:
        if isinstance(text, str) and len(text) <= _MEMO_CHARS:
            return list(self._remembered(text))
        return self._read(text)


def facts(text: str) -> list[Fact]:
    """The exact facts of ``text`` in order (kinds: :data:`FACT_KINDS`).

    Only a command in backticks or a date holds a space; every other fact lies within one
    whitespace-delimited token. So the text is read token by token, and a token that is a
    plain word (letters only, all lowercase, capitalised or all capitals) is skipped
    without running the pattern: most of prose is.
    """
    return _memo_facts(text)


def _facts(text: str) -> list[Fact]:
    out: list[Fact] = []
    pos = 0
    if "`" in text:
        for span in _COMMAND_SPAN.finditer(text):
            _scan(text, pos, span.start(), out)
            out.append(Fact("command", span.group(1), span.start(1), span.end(1)))
            pos = span.end()
    _scan(text, pos, len(text), out)
    return out


def _scan(text: str, start: int, end: int, out: list[Fact]) -> None:
    cache = _TOKEN_CACHE
    hint = _HINT.search
    for token_match in _TOKEN.finditer(text, start, end):
        token = token_match.group()
        found = cache.get(token)
        if found is None:
            core = token.strip(_WORD_EDGES)
            if core.isalpha() and (core.islower() or core.isupper()
                                   or (core[0].isupper() and core[1:].islower())):
                found = ()  # a plain word
            elif hint(token) is None:
                found = ()  # no fact can match in it
            else:
                found = _token_facts(token)
            if len(token) <= _TOKEN_CACHE_CHARS:
                if len(cache) >= _TOKEN_CACHE_SIZE:
                    cache.clear()
                cache[token] = found
        if found:
            base = token_match.start()
            out += [Fact(kind, value, base + at, base + at + len(value))
                    for kind, value, at in found]


# a sed edit (``'s/getData/fetchRecords/g'``): its slashes make no path
_SED_EDIT = re.compile(r"""['"]?[sy]([/|#,])[^/|#,]*\1[^/|#,]*\1[gimpIe0-9]*['";]*$""")


def _token_facts(token: str) -> tuple[tuple[str, str, int], ...]:
    """The facts of one token: ``(kind, value, start in the token)``."""
    out: list[tuple[str, str, int]] = []
    sed = "/" in token and _SED_EDIT.match(token) is not None
    for m in _PATTERN.finditer(token):
        group = m.lastgroup or "identifier"
        value = m.group(group)
        kind = "number" if group == "date" else group  # a date or time is a number
        if sed and kind == "path":
            continue
        if kind == "identifier" and token.startswith('":', m.end()):
            continue  # a JSON key names a field; it is not a fact
        if kind == "url":
            value = value.rstrip(".,;:!?")
        elif kind == "path" and value.endswith("."):
            value = value.rstrip(".")  # the end of a sentence, not of the path
            if not value:
                continue
        elif kind == "number" and value.endswith((",", ".", ":")):
            value = value[:-1]
        out.append((kind, value, m.start(group)))
    return tuple(out)


# -- shell commands and line-number gutters (what the compactor counts on top of facts()) --

_PROGRAMS = (
    # tools whose name is no English word: a line starting with one is a command
    "git|pip|pip3|pipx|python|python3|pytest|uv|uvx|cargo|rustc|rustup|npm|npx|yarn|pnpm"
    "|node|deno|bun|cmake|ninja|ls|rg|sed|awk|mkdir|rmdir|rm|cp|mv|chmod|chown|curl|wget"
    "|docker|podman|kubectl|helm|terraform|ruff|mypy|pyright|black|isort|flake8|pylint|tox"
    "|nox|poetry|conda|bash|sh|zsh|wc|xargs|grep|egrep|apt|apt-get|brew|tar|unzip|gzip|gcc"
    "|g\\+\\+|clang|javac|mvn|gradle|ssh|scp|rsync|sudo|psql|mysql|sqlite3|jq|yq|gh|aws"
    "|gcloud|az|mix|iex|gem|bundle|rake|composer|dotnet|tsc|eslint|prettier|jest|vitest"
    "|webpack|vite|pre-commit|alembic|uvicorn|gunicorn|cd|pwd|ln|du|df|ps|lsof|nproc"
    "|systemctl|journalctl"
)
_WORDISH = (
    # tools named like English words: a command only with a technical argument
    "make|find|cat|head|tail|sort|uniq|cut|touch|echo|printf|export|source|diff|patch|tree"
    "|go|just|env|which|kill|time|watch|test|set|tee|less|open|file|stat|date|java|ruby"
    "|php|swift|elixir|perl|lua|zip|tr"
)
_KNOWN = frozenset(_PROGRAMS.replace("\\", "").split("|"))
_WORDISH_SET = frozenset(_WORDISH.split("|"))
_PROMPT_HEAD = re.compile(r"\$|bash-\$|[\w.-]+@[\w.-]+(?::\S*)?[$#]")
_TECHNICAL = re.compile(r"(?:^|\s)-{1,2}\w|[/=|<>$*]|&&|\.\w|\w\.\w")
_SHELL_FENCE = re.compile(
    r"^[ \t]*(`{3,}|~{3,})[ \t]*(?:bash|sh|shell|console|zsh|terminal|shell-session|cmd"
    r"|powershell|ps1?)[ \t]*\n(?P<body>.*?)^[ \t]*\1",
    re.MULTILINE | re.DOTALL | re.IGNORECASE,
)
_PROMPT = re.compile(r"^(?:\$|bash-\$|[\w.-]+@[\w.-]+(?::\S*)?[$#])[ \t]+")
_HEREDOC = re.compile(r"<<-?[ \t]*['\"]?(\w+)['\"]?")
_SCRIPT_KEYS = frozenset({"command", "commands", "cmd", "script"})
_GUTTER_AFTER = re.compile(r"→|\t|:(?:[ \t]|\r?$)|\|", re.MULTILINE)
_MAX_COMMAND = 300
_LINE_GUTTER = re.compile(r"[ \t]*\d+(?:→|\t|:[ \t])")  # "  12→", "12\t", "12: "


def command_lines(script: str) -> list[str]:
    """The commands of a shell script or command argument: one per line, without prompts,
    comments, the bodies of here-documents (``cat > f <<'EOF' ... EOF``) and the lines a
    command goes on to: those of a quoted argument that spans lines (an ``awk`` or
    ``python -c`` program) and those after a line ending with ``\\``. A command that
    goes on is its first line."""
    out: list[str] = []
    until: str | None = None
    carry: str | None = None  # see shell_carry
    for raw in script.splitlines():
        line = raw.strip()
        if until is not None:
            if line == until:
                until = None
            continue
        if carry is not None:
            carry = shell_carry(line, carry)
            continue
        line = _PROMPT.sub("", line)
        if not line or line.startswith("#"):
            continue
        carry = shell_carry(line)
        if len(line) <= _MAX_COMMAND:
            out.append(line)
        until = heredoc_end(line)
    return out


def shell_carry(line: str, carry: str | None = None) -> str | None:
    """Whether a shell command goes on after ``line``: the quote (``'`` or ``"``) a
    quoted argument left open, ``\\`` when the line ends with one, else None. ``carry``
    is what the line before left (the line is read from inside that quote)."""
    if "'" not in line and '"' not in line and not line.endswith("\\"):
        return carry if carry in ("'", '"') else None  # the common case, at once
    quote = carry if carry in ("'", '"') else None
    n, end = 0, len(line)
    while n < end:
        c = line[n]
        if quote == "'":
            if c == "'":
                quote = None
        elif c == "\\":
            n += 1  # the next character is escaped (in double quotes too)
        elif quote == '"':
            if c == '"':
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and (n == 0 or line[n - 1] in " \t"):
            break  # a comment to the end of the line
        n += 1
    if quote is not None:
        return quote
    return "\\" if n == end + 1 else None  # the line's last character was an escape


def heredoc_end(line: str) -> str | None:
    """The word that ends the here-document ``line`` opens (``cat > f <<'EOF'`` -> ``EOF``),
    or None."""
    found = _HEREDOC.search(line)
    return found.group(1) if found else None


_ASSIGNMENT = re.compile(r"[A-Za-z_]\w*=\S*$")
# ``name=$(cmd ...)``: the value is what a program prints (not ``$((x+1))``, arithmetic)
_SUBSTITUTION = re.compile(r"[A-Za-z_]\w*=[\"']?\$\((?!\()")
_PROGRAM_NAME = re.compile(r"[a-z][\w.+-]*$")
# an argument a program takes, not a word of a script's own logic: a flag (-c, --all) or
# a path (/data/a.txt, ./out)
_PROGRAM_ARG = re.compile(r"-{1,2}\w|[.~]?/\w")
# the shell's own words: a line starting with one is a script's logic, whatever follows
_SHELL_WORDS = frozenset({
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
    "select", "function", "return", "local", "declare", "readonly", "typeset", "shift",
    "break", "continue", "exit",
})


def runs_program(line: str) -> bool:
    """``line`` is a command that runs a program: after a prompt and ``NAME=value``
    settings, its first word is a known command-line tool or a path to one
    (``./run.sh``), or a name given a flag or a path (``comm -23 a.txt b.txt``); a
    setting whose value is a command's output (``n=$(wc -l < f)``) runs that command.
    Not a line of a script's own logic (``fi``, ``x=$((x+1))``, ``print $2``)."""
    words = _PROMPT.sub("", line.strip()).split()
    while words and _ASSIGNMENT.match(words[0]):
        found = _SUBSTITUTION.match(words[0])
        if found is not None and words[0][found.end():]:
            words[0] = words[0][found.end():]  # the command substituted
            break
        words = words[1:]
    if not words:
        return False
    head = words[0]
    return head in _KNOWN or head in _WORDISH_SET or (
        "/" in head and not head.endswith("/") and head[:1] in "./~") or (
        len(words) > 1 and head not in _SHELL_WORDS and _PROGRAM_NAME.match(head) is not None
        and any(_PROGRAM_ARG.match(w.strip("'\"<(")) for w in words[1:]))


@lru_cache(maxsize=_TOKEN_CACHE_SIZE)
def minor(kind: str, text: str) -> bool:
    """A fact that says less than the others: a name the code and the words around it
    give back (an identifier without a digit: ``db_host``, ``parseArgs``, ``--verbose``)
    or a line of a script's own logic (a command that runs no program: ``fi``,
    ``x=$((x+1))``, ``print $2``). Code in backticks that is one fact of another kind
    (`` `deploy/prod.yaml` ``) is worth what that fact is."""
    if kind == "identifier":
        return not any(c.isdigit() for c in text)
    if kind != "command" or runs_program(text):
        return False
    if not any(c.isspace() for c in text):
        whole = [f for f in _token_facts(text) if f[1] == text]
        if whole and whole[0][0] != "command":
            return minor(whole[0][0], text)
    return True


def _sentence_like(line: str) -> bool:
    """Ends like a sentence: with a full stop, question mark, ... after a word (not one
    that is an argument of its own, as in ``ruff check .``)."""
    return (line.endswith((".", "?", "!", ":", "。", "？", "！", "：")) and " " in line
            and not line[-2:-1].isspace())


def _shell_commands(text: str) -> list[Fact]:
    """Command lines of ``text``: prompted lines (``$ cmd``), lines of shell-tagged code
    blocks, and lines that start with a command-line tool."""
    out: list[Fact] = []
    if "```" in text or "~~~" in text:
        for block in _SHELL_FENCE.finditer(text):
            base = block.start("body")
            for line in command_lines(block.group("body")):
                start = text.find(line, base)
                out.append(Fact("command", line, start, start + len(line)))
    offset = 0
    for raw in text.split("\n"):
        line_start, offset = offset, offset + len(raw) + 1
        body = raw
        words = body.split(None, 1)
        if not words:
            continue
        if words[0][:1].isdigit():  # a file listing's line number: its line after it
            gutter = _LINE_GUTTER.match(raw)
            if gutter is not None:
                body = raw[gutter.end():]
                words = body.split(None, 1)
                if not words:
                    continue
        head = words[0]
        if _PROMPT_HEAD.fullmatch(head):
            if len(words) < 2:
                continue
            line = words[1].rstrip()
        elif head in _KNOWN or head in _WORDISH_SET:
            line = body.strip()
            technical = _TECHNICAL.search(line) is not None
            if head in _KNOWN:
                if _sentence_like(line) and not technical:
                    continue
            elif len(words) < 2 or _sentence_like(line) or not technical:
                continue
        else:
            continue
        if not line or len(line) > _MAX_COMMAND or "`" in line:
            continue
        start = line_start + raw.find(line)
        out.append(Fact("command", line, start, start + len(line)))
    return out


def _json_facts(text: str) -> list[Fact] | None:
    """The exact facts of JSON ``text`` (a tool call's arguments), read from its decoded
    strings (a ``\\n`` escape is a line break, not part of a path); the lines of a
    ``command`` / ``cmd`` / ``commands`` / ``script`` value are commands. Offsets point
    into the decoded strings joined by line breaks. None when it is no JSON."""
    import json

    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, (dict, list)):
        return None
    strings: list[str] = []
    commands: list[str] = []
    stack: list[tuple[str | None, object]] = [(None, value)]
    while stack:
        key, item = stack.pop()
        if isinstance(item, dict):
            stack.extend(reversed([(str(k), v) for k, v in item.items()]))
        elif isinstance(item, list):
            stack.extend(reversed([(key, v) for v in item]))
        elif isinstance(item, str):
            strings.append(item)
            if key in _SCRIPT_KEYS:
                commands.extend(command_lines(item))
        elif isinstance(item, (int, float)) and not isinstance(item, bool):
            strings.append(str(item))
    decoded = "\n".join(strings)
    found = _plain_facts(decoded)
    seen = {f.text for f in found if f.kind == "command"}
    for line in dict.fromkeys(commands):
        if line not in seen:
            start = max(0, decoded.find(line))
            found.append(Fact("command", line, start, start + len(line)))
    found.sort(key=lambda f: (f.start, -f.end))
    return found


def _gutter(text: str, fact: Fact) -> bool:
    """``fact`` is the line number of a file listing (``  110→``, ``110:``, ``110\\t``)."""
    line_start = text.rfind("\n", 0, fact.start) + 1
    return (not text[line_start:fact.start].strip()
            and _GUTTER_AFTER.match(text, fact.end) is not None)


def exact_facts(text: str) -> list[Fact]:
    """What a summary must carry verbatim: :func:`facts` plus shell command lines, less the
    line numbers of file listings; in order of position. JSON text (a tool call's
    arguments) is read through its decoded strings."""
    return _memo_exact_facts(text)


def _exact_facts(text: str) -> list[Fact]:
    if text.lstrip()[:1] in ("{", "["):
        found = _json_facts(text)
        if found is not None:
            return found
    return _plain_facts(text)


def _plain_facts(text: str) -> list[Fact]:
    found = [f for f in _facts(text) if f.kind != "number" or not _gutter(text, f)]
    commands = _shell_commands(text)
    if commands:
        found.extend(dict.fromkeys(commands))  # a prompted line in a shell block: once
        found.sort(key=lambda f: (f.start, -f.end))
    return found


_memo_facts = _Memo(_facts)
_memo_exact_facts = _Memo(_exact_facts)
