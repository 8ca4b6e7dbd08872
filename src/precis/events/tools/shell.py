"""Shell tools: Claude Code ``Bash`` (and ``BashOutput`` / ``TaskOutput``, which bring a
background command's output), SWE-agent ``bash``, OpenHands ``execute_bash``, Codex
``shell`` / ``local_shell``, and plain ``run_command``-like tools. What the command line does
is told by :func:`precis.events._shell.classify_command`."""

from __future__ import annotations

import re
from dataclasses import replace

from precis.events._registry import Call, ToolVocabulary
from precis.events._shell import classify_command, commit_body
from precis.events.model import Draft

__all__ = ["ShellTools", "shell_draft"]

_SHELLS = frozenset({"Bash", "bash", "execute_bash", "shell", "run_command", "run_shell_command",
                     "terminal", "exec_command", "local_shell", "run_terminal_cmd",
                     "execute_command", "run_bash", "sh", "container.exec", "shell_command"})
_FOLLOW_UPS = frozenset({"BashOutput", "TaskOutput"})
# a tool of another name that takes a command line (``run``, ``exec``, ``run_tests``)
_COMMAND_ARG = re.compile(r"^(?:run|exec|execute|cmd|command|shell|terminal|console)(?:_\w+)?$",
                          re.IGNORECASE)
_BACKGROUND = re.compile(r"running in background with ID: (\w+)")


_COMMAND_ARGS = ("command", "cmd", "commands", "script", "input", "code")


def _command_text(call: Call) -> str:
    value = next((call.args[k] for k in _COMMAND_ARGS if k in call.args), None)
    if isinstance(value, list):
        words = [str(w) for w in value]
        if len(words) >= 3 and words[0] in ("bash", "sh", "zsh") and words[1] in ("-lc", "-c"):
            return words[2]
        return " ".join(words)
    return value if isinstance(value, str) else ""


def shell_draft(command: str, call: Call) -> Draft:
    """The action of running ``command`` (see the module docs)."""
    kind, simple = classify_command(command)
    paths: tuple[str, ...] = ()
    words = next((w for w in simple if w), [])
    if kind in ("delete", "move", "create") and words:
        args = [w for w in words[1:] if not w.startswith("-")]
        if words[0] == "git" and args:
            args = args[1:]
        paths = tuple(args[-2:] if kind == "move" else args[:8])
    detail = call.arg("description")
    if kind == "tracker":
        from precis.events.tools.tasks import tracker_draft

        return tracker_draft(command, simple, call, detail)
    snippet = commit_body(command) if kind == "commit" else ""
    draft = Draft(kind=kind, target=command.strip(), paths=paths, detail=detail,
                  snippet=snippet, reads_only=kind in ("read", "search"))
    m = _BACKGROUND.search((call.output or "")[:300])
    if m:
        call.state.setdefault("background", {})[m.group(1)] = draft
    return draft


class ShellTools(ToolVocabulary):
    name = "shell"

    def read(self, call: Call) -> Draft | None:
        if call.tool in _SHELLS or (_COMMAND_ARG.search(call.tool) and any(
                isinstance(call.args.get(k), (str, list)) for k in _COMMAND_ARGS[:4])):
            command = _command_text(call)
            if command.lstrip().startswith("apply_patch"):
                return None  # the patch vocabulary reads it
            return shell_draft(command, call)
        if call.tool in _FOLLOW_UPS:
            task = call.arg("task_id", "bash_id", "shell_id", "id")
            started = call.state.get("background", {}).get(task)
            if isinstance(started, Draft):  # the output of a command started earlier
                return replace(started, detail=started.detail or "background command")
            return Draft(kind="command", target=task, detail="background task output",
                         reads_only=True)
        return None
