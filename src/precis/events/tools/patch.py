"""Patches in Codex's ``apply_patch`` form (a tool of that name, or ``apply_patch`` run from
the shell): ``*** Add File: p``, ``*** Update File: p`` (with ``*** Move to: q``),
``*** Delete File: p``; one call may touch several files."""

from __future__ import annotations

import re

from precis.events._registry import Call, ToolVocabulary
from precis.events.model import ActionKind, Draft
from precis.events.tools.files import defined_names, signature_of

__all__ = ["PatchTools", "patch_draft"]

_HEADER = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$",
                     re.MULTILINE)
_KINDS: dict[str, ActionKind] = {"Add": "create", "Update": "edit", "Delete": "delete"}


def patch_draft(patch: str) -> Draft:
    """The files a patch adds, updates, moves and deletes, and the names its added lines
    define."""
    ops: list[tuple[str, ActionKind]] = []
    for m in _HEADER.finditer(patch):
        if m.group(3):
            if ops:
                ops[-1] = (ops[-1][0], "move")
                ops.append((m.group(3).strip(), "create"))
            continue
        ops.append((m.group(2).strip(), _KINDS[m.group(1)]))
    added = "\n".join(line[1:] for line in patch.splitlines()
                      if line.startswith("+") and not line.startswith("+++"))
    first = ops[0][0] if ops else ""
    names = tuple(defined_names(added, first)[:6])
    kinds = {k for _, k in ops}
    kind: ActionKind = next(iter(kinds)) if len(kinds) == 1 else "edit"
    return Draft(kind=kind, target=first, paths=tuple(p for p, _ in ops), names=names,
                 snippet=signature_of(added, names[0]) if names else "",
                 file_ops=tuple(ops) if len(ops) > 1 else (),
                 detail=f"{len(ops)} files" if len(ops) > 1 else "")


def _patch_text(call: Call) -> str:
    value = call.args.get("input", call.args.get("patch", call.args.get("command")))
    if isinstance(value, list):
        value = next((str(v) for v in value if "*** Begin Patch" in str(v)), "")
    return value if isinstance(value, str) else ""


class PatchTools(ToolVocabulary):
    name = "patch"

    def read(self, call: Call) -> Draft | None:
        if call.tool not in ("apply_patch", "shell", "local_shell", "exec_command"):
            return None
        text = _patch_text(call)
        if "*** Begin Patch" not in text:
            return None
        return patch_draft(text)
