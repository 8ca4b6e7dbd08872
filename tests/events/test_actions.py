"""Tool calls read as actions by family, and what came of them, from structure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.events._sessions import coding_session

import precis
from precis.errors import ConfigError
from precis.events import (
    Call,
    Draft,
    ToolMap,
    ToolVocabulary,
    extract_events,
    failures,
    file_ledger,
    register_tools,
    task_list,
)
from precis.events._registry import _USER
from precis.events._shell import classify_command, commit_of
from precis.events._shell import test_counts as counts_of
from precis.model import Conversation, Message, ToolCall, ToolResult


def one_call(name: str, args: dict[str, object], output: str | None, *,
             is_error: bool = False, metadata: dict[str, object] | None = None,
             then: str = "ok"):  # type: ignore[no-untyped-def]
    """The action of a conversation holding one call (and its result, unless None)."""
    messages = [Message.of("user", "go"),
                Message(role="assistant", parts=[ToolCall("c1", name, json.dumps(args))])]
    if output is not None:
        messages.append(Message(role="tool", parts=[ToolResult("c1", output, is_error)],
                                metadata=metadata or {}))
        messages.append(Message.of("assistant", then))
    conv = Conversation(messages)
    (action,) = extract_events(conv, precis.segment(conv).fragments).actions
    return action


@pytest.mark.parametrize(("name", "args", "kind", "target"), [
    ("Read", {"file_path": "/r/a.py"}, "read", "/r/a.py"),
    ("Write", {"file_path": "a.py", "content": "def f():\n    pass\n"}, "create", "a.py"),
    ("Edit", {"file_path": "a.py", "old_string": "x", "new_string": "y"}, "edit", "a.py"),
    ("MultiEdit", {"file_path": "a.py", "edits": [{"old_string": "a", "new_string": "b"}]},
     "edit", "a.py"),
    ("str_replace_editor", {"command": "view", "path": "/w/f.c"}, "read", "/w/f.c"),
    ("str_replace_editor", {"command": "create", "path": "n.py", "file_text": "x = 1"},
     "create", "n.py"),
    ("str_replace_editor", {"command": "str_replace", "path": "f.c", "old_str": "a",
                            "new_str": "b"}, "edit", "f.c"),
    ("open", {"path": "setup.py"}, "read", "setup.py"),
    ("create", {"filename": "reproduce.py"}, "create", "reproduce.py"),
    ("Bash", {"command": "pytest -q tests/test_api.py"}, "test", "pytest -q tests/test_api.py"),
    ("execute_bash", {"command": "cd /w && cargo build"}, "build", "cd /w && cargo build"),
    ("shell", {"command": ["bash", "-lc", "ruff check src"]}, "lint", "ruff check src"),
    ("run", {"command": "npm install left-pad"}, "install", "npm install left-pad"),
    ("Bash", {"command": "git add -A && git commit -m 'x'"}, "commit",
     "git add -A && git commit -m 'x'"),
    ("Bash", {"command": "git push origin main"}, "push", "git push origin main"),
    ("Bash", {"command": "rm -rf build/"}, "delete", "rm -rf build/"),
    ("Grep", {"pattern": "TODO", "path": "src"}, "search", "TODO"),
    ("Glob", {"pattern": "**/*.py"}, "search", "**/*.py"),
    ("WebFetch", {"url": "https://example.com/doc", "prompt": "read"}, "fetch",
     "https://example.com/doc"),
    ("Task", {"description": "Explore the repo", "prompt": "look", "subagent_type": "x"},
     "subagent", "Explore the repo"),
    ("get_reservation_details", {"reservation_id": "4WQ150"}, "lookup", "4WQ150"),
    ("cancel_reservation", {"reservation_id": "4WQ150"}, "change", "4WQ150"),
    ("book_reservation", {"user_id": "mia_li_3668", "origin": "JFK"}, "change", "mia_li_3668"),
    ("think", {"thought": "The user is gold."}, "think", ""),
    ("calculate", {"expression": "2 + 2"}, "calc", "2 + 2"),
    ("submit", {}, "submit", ""),
    ("frobnicate", {"x": 1}, "other", "frobnicate"),
])
def test_tool_families(name: str, args: dict[str, object], kind: str, target: str) -> None:
    action = one_call(name, args, "done")
    assert (action.kind, action.target) == (kind, target)


def test_a_read_whose_file_says_failed_is_a_success() -> None:
    action = one_call("Read", {"file_path": "log.txt"},
                      "1→ERROR: the job failed\n2→Traceback (most recent call last):")
    assert action.status == "ok"
    assert action.result == ""


@pytest.mark.parametrize(("output", "is_error", "metadata", "status", "code"), [
    ("Exit code 1\nnpm ERR! missing script: test", True, None, "failed", 1),
    ("all good", False, None, "ok", None),
    ("ok\n[Command finished with exit code 3]", False, None, "failed", 3),
    ("fine", False, {"extras": {"metadata": {"exit_code": 0}}}, "ok", 0),
    ("boom", False, {"extras": {"metadata": {"exit_code": 2}}}, "failed", 2),
    ("Traceback (most recent call last):\n  File \"x.py\"\nValueError: bad", False, None,
     "failed", None),
    ("bash: frob: command not found", False, None, "failed", None),
])
def test_command_status_from_structure(output: str, is_error: bool,
                                       metadata: dict[str, object] | None, status: str,
                                       code: int | None) -> None:
    action = one_call("Bash", {"command": "make x"}, output, is_error=is_error,
                      metadata=metadata)
    assert (action.status, action.exit_code) == (status, code)


def test_a_traceback_says_what_went_wrong() -> None:
    action = one_call("bash", {"command": "python reproduce.py"},
                      "Traceback (most recent call last):\n  File \"r.py\", line 3\n"
                      "KeyError: 'td_field'")
    assert action.result == "KeyError: 'td_field'"


def test_no_result_yet_is_pending_at_the_end() -> None:
    assert one_call("Bash", {"command": "make"}, None).status == "pending"


def test_a_rejected_call_is_no_failure() -> None:
    action = one_call("Bash", {"command": "sleep 300"},
                      "The user doesn't want to proceed with this tool use. The tool use was "
                      "rejected.", is_error=True)
    assert action.status == "rejected"


@pytest.mark.parametrize(("output", "counts", "described"), [
    ("===== 3 failed, 41 passed, 2 skipped in 1.2s =====", (41, 3, 2, None),
     "3 failed, 41 passed, 2 skipped in 1.2s"),
    ("FAILED tests/t.py::test_a - TimeoutError\n1 failed, 1 passed in 0.42s", (1, 1, None, None),
     "1 failed, 1 passed in 0.42s"),  # pytest -q: no "=" frame
    ("Finished in 0.4 seconds\n49 tests, 0 failures", (49, 0, None, 49), "49 tests, 0 failures"),
    ("1 doctest, 12 tests, 2 failures", (11, 2, None, 13), "1 doctest, 12 tests, 2 failures"),
    ("test result: ok. 12 passed; 0 failed; 1 ignored", (12, 0, 1, None),
     "test result: ok. 12 passed; 0 failed; 1 ignored"),
    ("Tests:       1 failed, 5 passed, 6 total", (5, 1, None, 6),
     "Tests: 1 failed, 5 passed, 6 total"),
    ("Ran 7 tests in 0.01s\n\nFAILED (failures=2)", (5, 2, None, 7),
     "Ran 7 tests, FAILED (failures=2)"),
])
def test_test_counts(output: str, counts: tuple[int | None, ...], described: str) -> None:
    """The counts are read into numbers; the line says what the runner said, in its words
    (a reader compares them with the runner's output: 1 doctest and 12 tests stay so)."""
    found = counts_of(output)
    assert found is not None
    assert (found.passed, found.failed, found.skipped, found.total) == counts
    assert found.describe() == described


def test_failing_tests_fail_the_run_even_with_exit_zero() -> None:
    action = one_call("Bash", {"command": "pytest"}, "== 1 failed, 3 passed in 0.2s ==")
    assert action.status == "failed" and action.counts is not None


def test_commit_id_and_message() -> None:
    assert commit_of("git commit -m 'x'", "[main 3f2a9c1] fix the parser\n 1 file changed") \
        == ("3f2a9c1", "fix the parser")
    assert commit_of('git commit -m "add tests"', "nothing") == (None, "add tests")
    action = one_call("Bash", {"command": "git commit -am wip"}, "[feat/x 9c0ffee] wip")
    assert (action.kind, action.commit, action.result) == ("commit", "9c0ffee", "wip")


def test_command_classification_takes_the_weightiest_command() -> None:
    assert classify_command("cd app && mix test 2>&1 | tail -5")[0] == "test"
    assert classify_command("git add . && git commit -m x && git push")[0] == "commit"
    assert classify_command("sudo -E timeout 60 python -m pytest")[0] == "test"
    assert classify_command("cat <<'EOF' > f.txt\nrm -rf /\nEOF")[0] == "read"


def test_swe_agent_edits_act_on_the_open_file() -> None:
    messages = [Message.of("user", "fix it"),
                Message(role="assistant", parts=[ToolCall("c1", "open", '{"path": "src/f.py"}')]),
                Message(role="tool", parts=[ToolResult("c1", "[File: /repo/src/f.py (90 lines "
                                                             "total)]\n1:import x")]),
                Message(role="assistant", parts=[ToolCall("c2", "edit", json.dumps(
                    {"search": "return a", "replace": "return round(a)"}))]),
                Message(role="tool", parts=[ToolResult("c2", "File updated. (Open file: "
                                                             "/repo/src/f.py)")])]
    conv = Conversation(messages)
    acts = extract_events(conv, precis.segment(conv).fragments).actions
    assert (acts[1].kind, acts[1].paths) == ("edit", ("/repo/src/f.py",))


def test_codex_patch_touches_each_file() -> None:
    patch = ("*** Begin Patch\n*** Add File: src/new.py\n+def hello():\n+    pass\n"
             "*** Update File: src/old.py\n@@\n-x = 1\n+x = 2\n*** Delete File: src/gone.py\n"
             "*** End Patch")
    action = one_call("apply_patch", {"input": patch}, "Done!")
    assert action.file_ops == (("src/new.py", "create"), ("src/old.py", "edit"),
                               ("src/gone.py", "delete"))
    assert action.names == ("hello",)


def test_user_vocabulary_goes_first_and_tool_map_checks_its_spec() -> None:
    class Crm(ToolVocabulary):
        name = "crm"

        def read(self, call: Call) -> Draft | None:
            if call.tool == "get_ticket":
                return Draft(kind="lookup", target=call.arg("ticket"), detail="CRM ticket")
            return None

    register_tools(Crm())
    register_tools(ToolMap("ops", {"sh": ("command", "cmd"), "peek": ("read", "file")}))
    try:
        assert one_call("get_ticket", {"ticket": "T-9"}, "{}").detail == "CRM ticket"
        assert one_call("sh", {"cmd": "pytest -x"}, "1 passed in 0.1s").kind == "test"
        assert one_call("peek", {"file": "a.txt"}, "hi").paths == ("a.txt",)
    finally:
        del _USER[:2]
    with pytest.raises(ConfigError, match="unknown kind 'teleport'"):
        ToolMap("bad", {"x": ("teleport", "y")})
    with pytest.raises(ConfigError, match="expected a ToolVocabulary"):
        register_tools("not a vocabulary")  # type: ignore[arg-type]


def test_session_views(tmp_path: Path) -> None:
    conv = precis.load(coding_session().write(tmp_path / "s.jsonl"))
    ev = extract_events(conv, precis.segment(conv).fragments)
    assert ev.kind == "coding" and ev.root == "/home/dev/shop"
    ledger = {r.path: r for r in file_ledger(ev)}
    assert ledger["lib/shop/order.ex"].changed and not ledger["lib/shop/order.ex"].created
    assert ledger["lib/shop/receipt.ex"].created
    (failure,) = failures(ev)
    assert failure.action.kind == "test"
    assert "undefined function build_order/1" in failure.cause
    assert failure.fixed_by is not None and failure.fixed_by.counts is not None
    assert [a.paths for a in failure.fix] == [("test/shop/order_test.exs",)]
    assert "never imported" in failure.explanation
    todos, tracked = task_list(ev)
    assert [(t.text, t.status) for t in todos] == [
        ("Show the discount on the receipt", "in_progress"),
        ("Document the discount field", "pending")]
    assert [(t.id, t.status) for t in tracked] == [("shop-abc.1", "closed")]
    commit = next(a for a in ev.actions if a.kind == "commit")
    assert commit.commit == "3f2a9c1"
    edit = next(a for a in ev.actions if a.kind == "edit")
    assert edit.intent.startswith("The discount must be subtracted")
    assert "discounted?" in edit.names


def test_paths_are_relative_to_the_directory_a_swe_agent_prompt_shows() -> None:
    shown = "(Open file: /testbed/reproduce.py)\n(Current directory: /testbed)\nbash-$"
    messages = [Message.of("user", "go"),
                Message(role="assistant", parts=[ToolCall("c1", "create", json.dumps(
                    {"filename": "reproduce.py"}))]),
                Message(role="tool", parts=[ToolResult("c1", "[File: /testbed/reproduce.py]\n"
                                                      + shown)]),
                Message(role="assistant", parts=[ToolCall("c2", "str_replace_editor", json.dumps(
                    {"command": "str_replace", "path": "/testbed/reproduce.py",
                     "old_str": "a", "new_str": "b"}))]),
                Message(role="tool", parts=[ToolResult("c2", "edited\n" + shown)]),
                Message.of("assistant", "done")]
    ev = extract_events(Conversation(messages))
    assert [r.path for r in file_ledger(ev)] == ["reproduce.py"]
