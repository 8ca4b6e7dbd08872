"""Block structure of one text: one pass over its lines, fences skipped by regex.

A block is ``(kind, start, end, lang_hint)`` with ``start`` / ``end`` offsets into the text
(not yet stripped of white space). Kinds:

``heading``    a Markdown ``#`` line, or a line followed by a setext ``===`` / ``---`` line
``list_item``  a list marker line (``-``, ``*``, ``+``, ``1.``, ``1)``, ``(a)``, ``一、``,
               ``（一）``, ``①``, ``1、``, ``•``) plus the lines that continue it
``code``       a fenced block (``` or ~~~, to the end of the text when unterminated),
               a run of code-like lines, or a block indented by 4+ columns
``sql``        a fenced ``sql`` block, or a SQL statement up to its ``;`` or a blank line
``json``       a fenced ``json`` block (unfenced JSON is recognised by the caller)
``table``      a run of Markdown table rows (``| a | b |``, or ``a | b`` over ``---|---``)
``prose``      running text (split into sentences later)
``rule``       a thematic break (``---``, ``***``, ``___``)

Blank lines end every block except fenced ones. Unfenced code blocks separated only by
blank lines are merged into one. The scan is linear: every line is looked at once, with a
few compiled-regex matches.
"""

from __future__ import annotations

from precis.segment._json import is_json
from precis.segment._lang import has_han
from precis.segment._lines import (
    JSON_LANGS,
    SQL_LANGS,
    closing_fence,
    indent_width,
    is_code_line,
    is_exception_line,
    is_rule,
    is_table_separator,
    line_kind,
    match_fence,
    match_heading,
    match_sql_start,
    sql_after_colon,
)

__all__ = ["Block", "split_blocks"]

Block = tuple[str, int, int, "str | None"]


def _fence_kind(hint: str) -> str:
    if hint in JSON_LANGS:
        return "json"
    if hint in SQL_LANGS:
        return "sql"
    return "code"


def _close(blocks: list[Block], kind: str, start: int, end: int, merge_code: bool) -> bool:
    """Append the open block; return whether the last block is now unfenced code.

    Unfenced code right after unfenced code (only blank lines between) extends it.
    """
    if kind == "code":
        if merge_code:
            blocks[-1] = ("code", blocks[-1][1], end, None)
        else:
            blocks.append(("code", start, end, None))
        return True
    blocks.append((kind, start, end, None))
    return False


def _classify(s: str, c: str, line: str, indented: bool, table: bool, text: str, nl: int) -> str:
    """The kind of a line that does not continue an open code or SQL block."""
    if c == "#" and match_heading(s) and indent_width(line) < 4:
        return "heading"
    if c in "-*_=" and is_rule(s):
        return "rule"
    if "|" in s and ((c == "|" and s.count("|") >= 2) or table or _next_is_sep(text, nl)):
        return "table"
    kind = line_kind(s)
    if kind == "code" and (":" in s or "：" in s) and sql_after_colon(s) >= 0:
        return "prose"  # "执行：SELECT ...": the prose branch splits it
    if kind is not None:
        return kind
    if indented and indent_width(line) >= 4:
        return "indented"
    return "prose"


def _next_is_sep(text: str, nl: int) -> bool:
    if nl >= len(text):
        return False
    end = text.find("\n", nl + 1)
    nxt = text[nl + 1 : end if end >= 0 else len(text)].strip()
    return bool(nxt) and is_table_separator(nxt)


def _fence(text: str, pos: int, nl: int, marker: str, hint: str) -> Block:
    """The fenced block opened on the line ``text[pos:nl]``."""
    n = len(text)
    close = closing_fence(marker[0], len(marker)).search(text, nl + 1) if nl < n else None
    end = close.end() if close else n
    kind = _fence_kind(hint) if hint else _sniff(text, nl + 1, end)
    return (kind, pos, end, hint or None)


def split_blocks(text: str) -> list[Block]:
    """The blocks of ``text`` in order (see the module docstring)."""
    blocks: list[Block] = []
    find = text.find
    n = len(text)
    pos = 0
    cur: str | None = None  # kind of the open block
    cur_start = cur_end = 0
    sql_open = False  # the open SQL statement has not reached its ";"
    list_ctx = False  # indented lines after a list item continue it
    merge_code = False  # the last block is unfenced code (merge the next one into it)
    prev_colon = False  # the previous prose line ended with a colon
    while pos <= n:
        nl = find("\n", pos)
        if nl < 0:
            nl = n
        line = text[pos:nl]
        s = line.strip()
        if not s:
            if cur is not None:
                merge_code = _close(blocks, cur, cur_start, cur_end, merge_code)
                cur = None
            pos = nl + 1
            continue
        c = s[0]
        indented = line[0] in " \t"
        if c in "`~":
            fence = match_fence(s)
            if fence is not None:
                if cur is not None:
                    _close(blocks, cur, cur_start, cur_end, merge_code)
                    cur = None
                block = _fence(text, pos, nl, *fence)
                blocks.append(block)
                merge_code = list_ctx = False
                pos = block[2] + 1
                continue
        if cur == "code" and (indented or c in "#})]" or is_code_line(s) or is_exception_line(s)):
            cur_end = nl
            pos = nl + 1
            continue
        if cur == "sql" and (sql_open or indented or s.startswith("--") or match_sql_start(s)):
            cur_end = nl
            sql_open = s[-1] != ";"
            pos = nl + 1
            continue

        kind = _classify(s, c, line, indented, cur == "table", text, nl)
        if kind != "list_item" and not indented:
            list_ctx = False
        if kind == "prose":
            if cur == "prose" or cur == "list_item":
                cur_end = nl
            else:
                if cur is not None:
                    merge_code = _close(blocks, cur, cur_start, cur_end, merge_code)
                cur, cur_start, cur_end = "prose", pos, nl
            prev_colon = s[-1] in ":："
            if ":" in s or "：" in s:
                at = sql_after_colon(line)
                if at >= 0:  # "执行：SELECT ...": prose up to the colon, SQL after it
                    merge_code = _close(blocks, cur, cur_start, pos + at, merge_code)
                    cur, cur_start, cur_end = "sql", pos + at, nl
                    sql_open = s[-1] != ";"
                    prev_colon = False
            pos = nl + 1
            continue
        prev_colon = False
        if kind == "indented":
            if cur == "list_item" or (cur == "prose" and not prev_colon):
                cur_end = nl
                pos = nl + 1
                continue
            kind = "code" if cur == "prose" or not (list_ctx or has_han(s)) else "prose"
        elif kind == "rule" and cur == "prose" and c in "=-":
            kind = "heading"  # setext: the paragraph above is the heading text
            pos, cur = cur_start, None
        elif kind == "table" and cur == "table":
            cur_end = nl
            pos = nl + 1
            continue
        if cur is not None:
            merge_code = _close(blocks, cur, cur_start, cur_end, merge_code)
            cur = None
        if kind == "heading" or kind == "rule":
            blocks.append((kind, pos, nl, None))
            merge_code = False
        else:
            cur, cur_start, cur_end = kind, pos, nl
            if kind == "list_item":
                list_ctx = True
            elif kind == "sql":
                sql_open = s[-1] != ";"
        pos = nl + 1
    if cur is not None:
        _close(blocks, cur, cur_start, cur_end, merge_code)
    return blocks


def _sniff(text: str, start: int, end: int) -> str:
    """The kind of an unlabelled fence from its content: ``json``, ``sql`` or ``code``."""
    body = text[start:end].strip()
    if body.endswith(("```", "~~~")):
        body = body.rstrip("`~").rstrip()
    if body and is_json(body):
        return "json"
    if body and match_sql_start(body):
        return "sql"
    return "code"
