"""A fragment as one summary line: code folds to a stub, long text keeps its core.

The digest is extractive: it keeps the speaker's own words (so a Chinese conversation gets
Chinese lines), cuts only between sentences or words, and never through an exact fact; facts
that fall outside the kept core are listed after it verbatim.
"""

from __future__ import annotations

import json
import re

from precis.compact._facts import (
    command_lines,
    exact_facts,
    facts,
    heredoc_end,
    minor,
    shell_carry,
)
from precis.compact._labels import label
from precis.model import Conversation, ToolCall, ToolResult
from precis.segment.model import Fragment

__all__ = ["code_stub", "core_text", "digest", "json_shape", "script_digest", "tool_call_digest"]

_SPACE = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+|(?<=[。！？；])")
_DEFINES = re.compile(
    r"^\s*(?:export\s+|pub(?:\(crate\))?\s+|async\s+|public\s+|private\s+|static\s+)*"
    r"(?:def|class|function|fn|func|struct|enum|trait|interface|type|impl|module|const|let|var)"
    r"\s+([A-Za-z_$][\w$]*)"
    r"|^\s*([A-Za-z_][\w]*)\s*(?::[^=\n]+)?=\s*(?:function|lambda|\(|async)"
    r"|^\s*([A-Za-z_][\w-]*)\s*\(\)\s*\{"  # a shell function
    r"|\bCREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP(?:ORARY)?\s+)?"
    r"(?:TABLE|VIEW|INDEX|FUNCTION|PROCEDURE|TRIGGER|MATERIALIZED\s+VIEW)\s+"
    r"(?:IF\s+NOT\s+EXISTS\s+)?([\w.\"`]+)",
    re.MULTILINE | re.IGNORECASE,
)
_SQL_TABLES = re.compile(r"\b(?:FROM|JOIN|UPDATE|INTO)\s+([\w.\"`]+)", re.IGNORECASE)
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})[^\n]*\n?|\n?\s*(`{3,}|~{3,})\s*$")
_ARG_KEYS = ("command", "cmd", "commands", "script", "code", "query", "sql", "path",
             "file_path", "filepath", "file", "url", "pattern", "old_str", "new_str", "content",
             "text", "input")
_SCRIPT_KEYS = frozenset({"command", "cmd", "commands", "script"})
_ERROR_LINE = re.compile(
    r"^(?:E\s+)?[\w.]*(?:Error|Exception)\b\s*[:(]|^Traceback|\bFAILED\b|^FAIL:"
    r"|^(?:error|fatal)(?:\[\w+\])?:|panicked at|^错误|失败：|异常：",
    re.IGNORECASE)
_PATH_KEYS = frozenset({"path", "file_path", "filepath", "file"})
_BODY_KEYS = frozenset({"code", "old_str", "new_str", "content", "text", "input"})
_LIST_MARK = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)、]|[（(]\d{1,3}[)）])\s+")
_MAX_NAMES = 6
_INLINE_CODE_CHARS = 160
_MORE_FACTS = 8  # facts a core lists after it that it leaves out


def _clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at a word boundary, never inside a fact."""
    if len(text) <= limit:
        return text
    cut = limit
    for fact in facts(text[: limit + 200]):
        if fact.start < cut < fact.end:
            cut = fact.start
            break
    space = text.rfind(" ", 0, cut)
    if space > cut * 0.6:
        cut = space
    return text[:cut].rstrip(" ,;:，；：") + "…"


def core_text(text: str, limit: int, language: str = "en") -> str:
    """The core of a long text: its first sentence, then the sentences that carry exact facts,
    within ``limit`` characters; facts left out are listed verbatim after it."""
    original = text
    text = _LIST_MARK.sub("", _SPACE.sub(" ", text).strip(), count=1)
    if len(text) <= limit:
        return text
    sentences = [s for s in _SENTENCE_END.split(text) if s]
    joiner = "" if language == "zh" else " "
    kept = [_clip(sentences[0], limit)]
    used = len(kept[0])
    for sentence in sentences[1:]:
        if facts(sentence) and used + len(sentence) + 1 <= limit:
            kept.append(sentence)
            used += len(sentence) + 1
    core = joiner.join(kept)
    missing = [f for f in exact_facts(original) if f.text not in core]
    if missing:
        # in order, names and a script's own lines after the rest (see facts.minor)
        missing.sort(key=lambda f: minor(f.kind, f.text))
        unique = list(dict.fromkeys(f.text for f in missing))[:_MORE_FACTS]
        core += f" ({label(language, 'more_facts')}: {', '.join(unique)})"
    return core


def _strip_fence(text: str) -> str:
    return _FENCE.sub("", text)


def _names(values: list[str]) -> str:
    unique = list(dict.fromkeys(v.strip('"`') for v in values if v))
    shown = ", ".join(unique[:_MAX_NAMES])
    return shown + (", …" if len(unique) > _MAX_NAMES else "")


def code_stub(text: str, kind: str, lang_hint: str | None, language: str = "en") -> str:
    """A code / SQL / JSON / table block as one line: short blocks verbatim in backticks,
    longer ones as ``[python code, 42 lines; defines parse, Config]``."""
    body = _strip_fence(text).strip("\n")
    lines = [line for line in body.splitlines() if line.strip()]
    if len(lines) <= 2 and len(body) <= _INLINE_CODE_CHARS and "`" not in body:
        return "`" + _SPACE.sub(" ", body).strip() + "`"
    n = len(lines)
    if kind == "sql":
        head = label(language, "sql", n=n)
    elif kind == "json":
        head = label(language, "json", n=n)
    elif kind == "table":
        head = label(language, "table", n=max(0, n - 2))
    else:
        head = label(language, "code", lang=lang_hint or "", n=n).strip()
    details: list[str] = []
    defined = [next(g for g in m.groups() if g) for m in _DEFINES.finditer(body)]
    if defined:
        details.append(label(language, "defines", names=_names(defined)))
    if kind == "sql" or (lang_hint or "").lower() == "sql":
        used = _SQL_TABLES.findall(body)
        if used:
            details.append(label(language, "uses", names=_names(used)))
    elif kind == "json":
        try:
            value = json.loads(body)
        except ValueError:
            value = None
        if isinstance(value, dict):
            details.append(label(language, "keys", names=_names(list(value)[:_MAX_NAMES + 1])))
    elif kind == "table" and lines:
        details.append(_clip(lines[0].strip(), 120))
    return "[" + head + ("; " + "; ".join(details) if details else "") + "]"


def script_digest(script: str, limit: int, language: str = "en") -> str:
    """A shell script as one line: its commands verbatim, joined by ``; ``, a here-document
    folded to a stub (``cat > f.py <<'EOF' [python code, 12 lines]``); whole commands while
    they fit ``limit``, then ``…``."""
    parts: list[str] = []
    body: list[str] = []
    until: str | None = None
    carry: str | None = None  # the command goes on (see shell_carry)
    for raw in script.splitlines():
        if until is not None:
            if raw.strip() == until:
                parts[-1] += " " + code_stub("\n".join(body), "code", None, language)
                until, body = None, []
            else:
                body.append(raw)
            continue
        if carry is not None:
            carry = shell_carry(raw.strip(), carry)
            if carry == "\\" or carry is None:  # a line after "\\", or the quote's last
                parts[-1] = _goes_on(parts[-1], body, raw.strip(), language)
                body = []
            else:
                body.append(raw)
            continue
        line = command_lines(raw)
        if not line:
            continue
        parts.append(line[0])
        until = heredoc_end(line[0])
        carry = shell_carry(line[0])
    if body:
        parts[-1] = (parts[-1] + " " + code_stub("\n".join(body), "code", None, language)
                     if until is not None else _goes_on(parts[-1], body, "", language))
    out = ""
    for part in parts:
        joined = f"{out}; {part}" if out else part
        if len(joined) > limit:
            return (out + "; …") if out else _clip(part, limit)
        out = joined
    return out


def _goes_on(head: str, body: list[str], last: str, language: str) -> str:
    """A command that goes on over several lines as one: its lines joined by spaces, or,
    when that is long, the lines of a quoted program between its first and last line
    folded to a stub (``awk -F, '[code, 9 lines]' /data/in.csv``)."""
    whole = " ".join(p for p in (head, *(b.strip() for b in body), last) if p)
    if len(_SPACE.sub(" ", whole)) <= _INLINE_CODE_CHARS or not body:
        return _SPACE.sub(" ", whole)
    stub = code_stub("\n".join(body), "code", None, language)
    if stub.startswith("`"):
        return _SPACE.sub(" ", whole)
    return head + stub + last


def tool_call_digest(call: ToolCall, limit: int, language: str = "en") -> str:
    """``name(command)``: the call's telling arguments (a command, path or query) verbatim."""
    args: object
    try:
        args = json.loads(call.arguments) if call.arguments.strip() else {}
    except ValueError:
        args = call.arguments
    shown: list[str] = []
    if isinstance(args, dict):
        for key in _ARG_KEYS:
            value = args.get(key)
            if not isinstance(value, str) or not value.strip():
                continue
            if key in _BODY_KEYS and "\n" in value.strip():
                shown.append(code_stub(value, "code", None, language))
            elif key in _SCRIPT_KEYS and "\n" in value.strip():
                shown.append(script_digest(value, limit * 2, language))
            else:
                shown.append(_clip(_SPACE.sub(" ", value).strip(), limit))
            new = args.get("new_str")
            if key == "old_str" and isinstance(new, str) and new.strip():
                shown.append("→")  # an edit: what the text became matters most
                continue
            if key not in _PATH_KEYS:
                break
        if not shown:
            scalars = [f"{k}={v}" for k, v in args.items() if isinstance(v, (str, int, float))]
            shown.append(_clip(", ".join(scalars), limit))
    else:
        shown.append(_clip(_SPACE.sub(" ", str(args)), limit))
    inner = " ".join(s for s in shown if s)
    return f"{call.name}({inner})" if inner else f"{call.name}()"


def json_shape(text: str, limit: int) -> str | None:
    """JSON ``text`` in brief: itself (compact) when it fits ``limit``, else its shape,
    ``{user_id, name, address, …}`` or ``[12 items: {flight_number, origin, …}]``; None
    when the text is no JSON object or array."""
    stripped = text.strip()
    if stripped[:1] not in ("{", "["):
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    compact = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    if len(compact) <= limit:
        return compact
    return _shape(value)


def _shape(value: object) -> str:
    if isinstance(value, dict):
        keys = [str(k) for k in value]
        return "{" + ", ".join(keys[:_MAX_NAMES]) + (", …" if len(keys) > _MAX_NAMES else "") + "}"
    if isinstance(value, list):
        inner = f": {_shape(value[0])}" if value and isinstance(value[0], (dict, list)) else ""
        return f"[{len(value)} items{inner}]"
    return json.dumps(value, ensure_ascii=False)[:80]


def _tool_result_digest(
    result: ToolResult, text: str, limit: int, language: str, name: str | None
) -> str:
    name = result.name or name or "tool"
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    error_line = next((line for line in lines if _ERROR_LINE.search(line)), None)
    key = "tool_error" if result.is_error or error_line else "tool_result"
    first = error_line or lines[0]
    shape = None if error_line else json_shape(text, limit)
    if shape is not None:
        body = shape
    elif result.is_error or len(lines) == 1:
        body = core_text(first, limit, language)
    else:
        body = core_text(first, limit, language) + f" ({label(language, 'lines', n=len(lines))})"
    return f"{label(language, key, name=name)}: {body}"


def digest(
    fragment: Fragment,
    conversation: Conversation,
    limit: int,
    language: str,
    call_names: dict[str, str] | None = None,
) -> str:
    """One summary line for ``fragment`` (without its citation); ``call_names`` maps tool
    call ids to tool names (a result names its tool by them)."""
    kind = fragment.kind
    if kind in ("code", "sql", "json", "table"):
        return code_stub(fragment.text, kind, fragment.lang_hint, language)
    if kind in ("tool_call", "tool_result"):
        p = fragment.provenance
        part = conversation.messages[p.message].parts[p.part]
        if isinstance(part, ToolCall):
            return tool_call_digest(part, limit, language)
        if isinstance(part, ToolResult):
            name = (call_names or {}).get(part.call_id)
            return _tool_result_digest(part, fragment.text, limit, language, name)
    if kind == "image":
        return f"[{label(language, 'image')}] " + core_text(fragment.text, limit, language)
    return core_text(fragment.text, limit, language)

