"""File tools: read, create, edit, move, delete.

Claude Code (``Read``, ``Write``, ``Edit``, ``MultiEdit``, ``NotebookEdit``), SWE-agent
(``open``, ``create``, ``edit``, ``insert``, ``goto``, ``scroll_*``, and the
``str_replace_editor`` it shares with OpenHands), and the names plain function-calling agents
give such tools (``read_file``, ``write_file``, ``edit_file``, ...). SWE-agent's editor acts
on "the open file", which it names in its own output (``[File: path (N lines total)]``,
``(Open file: path)``); that is kept in the call state.
"""

from __future__ import annotations

import re
from typing import Any

from precis.events._registry import Call, ToolVocabulary
from precis.events.model import ActionKind, Draft

__all__ = ["FileTools", "defined_names", "key_lines", "signature_of"]

_READ = frozenset({"Read", "read_file", "view_file", "cat_file", "open_file", "read", "view",
                   "ReadFile", "file_read", "get_file_contents", "LS", "list_dir",
                   "list_directory", "list_files"})
_WRITE = frozenset({"Write", "write_file", "create_file", "save_file", "write", "WriteFile",
                    "file_write", "write_to_file"})
_EDIT = frozenset({"Edit", "MultiEdit", "edit_file", "replace_in_file", "patch_file",
                   "str_replace", "replace", "EditFile", "file_edit", "search_replace",
                   "apply_diff", "NotebookEdit", "edit_notebook"})
_DELETE = frozenset({"delete_file", "remove_file", "rm_file", "DeleteFile"})
_MOVE = frozenset({"move_file", "rename_file", "mv", "MoveFile"})
_SWE_VIEW = frozenset({"open", "goto", "scroll_down", "scroll_up"})
_PATH_ARGS = ("file_path", "path", "filename", "file", "notebook_path", "target_file",
              "filepath", "file_name", "relative_workspace_path", "absolute_path")
_OPEN_FILE = re.compile(r"\(Open file: ([^)\n]+)\)")
_FILE_HEADER = re.compile(r"^\[File: (\S+) \(\d+ lines total\)\]")

_DEFS = re.compile(
    r"^[ \t]*(?:"
    r"(?:async[ \t]+)?def[ \t]+(?P<py>\w+[?!]?)"  # Python (and Elixir)
    r"|class[ \t]+(?P<cls>\w+)"  # Python, JS, Java, C#
    r"|def(?:p|macro|macrop|guard)?[ \t]+(?P<ex>\w+[?!]?)"  # Elixir
    r"|defmodule[ \t]+(?P<mod>[\w.]+)"
    r"|(?:pub(?:\([\w:]+\))?[ \t]+)?(?:async[ \t]+)?(?:unsafe[ \t]+)?fn[ \t]+(?P<rs>\w+)"  # Rust
    r"|(?:pub[ \t]+)?(?:struct|enum|trait|mod)[ \t]+(?P<rst>\w+)"
    r"|func[ \t]+(?:\([^)]*\)[ \t]*)?(?P<go>\w+)"  # Go
    r"|(?:export[ \t]+)?(?:default[ \t]+)?(?:async[ \t]+)?function\*?[ \t]+(?P<js>\w+)"  # JS
    r"|(?:export[ \t]+)?(?:const|let|var)[ \t]+(?P<jsv>\w+)[ \t]*=[ \t]*(?:async[ \t]*)?"
    r"(?:\([^)]*\)|\w+)[ \t]*=>"
    r"|(?:export[ \t]+)?(?:interface|type)[ \t]+(?P<ts>\w+)"
    r"|(?:public|private|protected)[ \t]+(?:static[ \t]+)?(?:final[ \t]+)?[\w<>\[\], ]+[ \t]+"
    r"(?P<jv>\w+)[ \t]*\("  # Java / C#
    r")", re.MULTILINE)
_CSS_RULE = re.compile(r"^([.#]?[A-Za-z][\w-]*(?:[ .#:>-][\w-]+)*)\s*\{", re.MULTILINE)


def defined_names(text: str, path: str = "") -> list[str]:
    """The functions, classes, modules (and, in a stylesheet, the rules) ``text`` defines,
    in order, each once."""
    out: list[str] = []
    if path.endswith((".css", ".scss", ".less")):
        out = [m.group(1) for m in _CSS_RULE.finditer(text)]
    else:
        for m in _DEFS.finditer(text):
            name = next((v for v in m.groupdict().values() if v), None)
            if name:
                out.append(name)
    return list(dict.fromkeys(out))


def signature_of(text: str, name: str) -> str:
    """The line of ``text`` that defines ``name`` (stripped, up to 120 characters)."""
    for line in text.splitlines():
        if re.search(rf"\b{re.escape(name)}\b", line) and _DEFS.match(line):
            line = line.strip().rstrip("{:").rstrip()
            return line if len(line) <= 120 else line[:119] + "…"
    return ""


_TEST_NAME = re.compile(r"""^\s*(?:test|describe|it|context)\s*\(?\s*["']"""
                        r"|^\s*(?:async\s+)?def test_|^\s*#\[test\]|^\s*(?:pub\s+)?fn test_"
                        r"|^\s*mod tests\b")
_SETTING = re.compile(r"^\s*[\w.-]+\s*[:=]\s*\S|^\s*@\w+|^\s*(?:attribute|field|column|"
                      r"belongs_to|has_many|has_one|add|create|alter|plug|use|import|alias|"
                      r"require|from)\b")
_COMMENT = re.compile(r"^\s*(?:#|//|--|;|%|/\*|\*)")
_TRIVIAL = re.compile(r"^\s*(?:[{}()\[\];,]+|end|else|\*/|/\*|#|//|--|<!--|-->)?\s*$")


def key_lines(old: str, new: str, path: str = "", limit: int = 16) -> tuple[str, ...]:
    """The telling lines ``new`` adds to ``old``: definitions, test names, settings and
    declarations first, then other code; each stripped, at most ``limit``."""
    before = {line.strip() for line in old.splitlines()}
    scored: list[tuple[float, int, str]] = []
    in_tests = False  # the lines after the first test: the tests' bodies
    for k, raw in enumerate(new.splitlines()):
        line = raw.strip()
        test = bool(_TEST_NAME.match(raw))
        if not line or line in before or _TRIVIAL.match(line) or len(line) < 4:
            in_tests = in_tests or test
            continue
        score = -1.0 if in_tests and not test else 0.0
        in_tests = in_tests or test
        if _DEFS.match(raw) and not test:
            score += 3.0
        if test:
            score += 1.0
        if _COMMENT.match(raw):
            score -= 1.0
        if _SETTING.match(raw):
            score += 1.0
        if '"' in line or "'" in line:
            score += 0.5
        if len(line) > 140:
            line = line[:139] + "…"
        scored.append((score, k, line))
    best = sorted(scored, key=lambda t: (-t[0], t[1]))[:limit]
    return tuple(line for _, _, line in sorted(best, key=lambda t: t[1]))


def _open_file(call: Call) -> str:
    out = call.output or ""
    m = _FILE_HEADER.match(out) or _OPEN_FILE.search(out[-400:])
    if m:
        call.state["open_file"] = m.group(1).strip()
    return str(call.state.get("open_file", ""))


def _edit_draft(path: str, old: str, new: str, kind: ActionKind = "edit") -> Draft:
    before = set(defined_names(old, path))
    after = defined_names(new, path)
    names = tuple(n for n in after if n not in before) or tuple(after[:3])
    snippet = signature_of(new, names[0]) if names else ""
    added = new.count("\n") + (1 if new else 0)
    removed = old.count("\n") + (1 if old else 0)
    detail = f"+{added}/-{removed} lines" if kind == "edit" else f"{added} lines"
    return Draft(kind=kind, target=path, paths=(path,) if path else (), detail=detail,
                 names=names[:6], snippet=snippet, added=key_lines(old, new, path))


def _multi(edits: Any) -> tuple[str, str]:
    olds, news = [], []
    if isinstance(edits, list):
        for e in edits:
            if isinstance(e, dict):
                olds.append(str(e.get("old_string", "")))
                news.append(str(e.get("new_string", "")))
    return "\n".join(olds), "\n".join(news)


class FileTools(ToolVocabulary):
    name = "files"

    def read(self, call: Call) -> Draft | None:
        tool = call.tool
        path = call.arg(*_PATH_ARGS)
        if tool == "str_replace_editor" or tool == "text_editor" or tool.endswith("_editor"):
            return self._editor(call, path)
        if tool in _SWE_VIEW and ("path" in call.args or tool != "open" or not call.args):
            path = path or _open_file(call)
            if tool == "open":
                _open_file(call)
            return Draft(kind="read", target=path, paths=(path,) if path else (),
                         reads_only=True)
        if tool in ("edit", "insert") and not path and (
                "search" in call.args or "replace" in call.args or "text" in call.args
                or "replacement_text" in call.args or "start_line" in call.args):
            path = _open_file(call)  # SWE-agent: the open file
            old = call.arg("search")
            new = call.arg("replace", "text", "replacement_text")
            return _edit_draft(path, old, new)
        if tool == "create" and path:
            call.state["open_file"] = path
            return Draft(kind="create", target=path, paths=(path,))
        if tool in _READ:
            return Draft(kind="read", target=path, paths=(path,) if path else (),
                         reads_only=True)
        if tool in _WRITE:
            content = call.arg("content", "file_text", "text", "contents")
            return _edit_draft(path, "", content, kind="create")
        if tool in _EDIT:
            if tool == "MultiEdit":
                old, new = _multi(call.args.get("edits"))
            elif tool in ("NotebookEdit", "edit_notebook"):
                old, new = "", call.arg("new_source")
            else:
                old = call.arg("old_string", "old_str", "search", "old_text", "old")
                new = call.arg("new_string", "new_str", "replace", "new_text", "new",
                               "replacement", "content")
            return _edit_draft(path, old, new)
        if tool in _DELETE:
            return Draft(kind="delete", target=path, paths=(path,) if path else ())
        if tool in _MOVE:
            src = path or call.arg("source", "src", "from", "old_path")
            dst = call.arg("destination", "dest", "dst", "to", "new_path")
            return Draft(kind="move", target=src, paths=tuple(p for p in (src, dst) if p),
                         detail=f"to {dst}" if dst else "")
        return None

    def _editor(self, call: Call, path: str) -> Draft:
        command = call.arg("command")
        if command in ("view", ""):
            return Draft(kind="read", target=path, paths=(path,) if path else (),
                         reads_only=True)
        if command == "create":
            return _edit_draft(path, "", call.arg("file_text"), kind="create")
        if command == "str_replace":
            return _edit_draft(path, call.arg("old_str"), call.arg("new_str"))
        if command == "insert":
            return _edit_draft(path, "", call.arg("new_str", "text"))
        return Draft(kind="edit", target=path, paths=(path,) if path else (), detail=command)
