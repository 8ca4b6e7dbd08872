"""The runtime benchmark and the agent-loop example: ids stay unique when the session is
stretched, the replay stays under budget and valid, the example runs and reloads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from precis.model import Message, Text, ToolCall, ToolResult

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from runtime_session import _shifted, message_text  # noqa: E402


def _call(cid: str) -> Message:
    return Message("assistant", [ToolCall(id=cid, name="run", arguments='{"cmd": "ls"}')])


def _result(cid: str, text: str) -> Message:
    return Message("tool", [ToolResult(call_id=cid, content=text)])


def test_shifted_ids_are_unique_and_results_follow_their_call() -> None:
    # a source that reuses call id "a" (as tau-bench does), repeated in two passes
    block = [Message("user", [Text("go")]), _call("a"), _result("a", "one"),
             _call("a"), _result("a", "two")]
    first, second = _shifted(block, "_0_0", 1), _shifted(block, "_1_0", 6)
    calls = [p.id for m in first + second for p in m.tool_calls]
    assert calls == ["a_0_0", "ax2_0_0", "a_1_0", "ax2_1_0"]
    # each result answers the latest call of its id, in both passes
    assert [p.call_id for m in first for p in m.tool_results] == ["a_0_0", "ax2_0_0"]
    assert [p.call_id for m in second for p in m.tool_results] == ["a_1_0", "ax2_1_0"]
    assert [m.id for m in first] == ["m1", "m2", "m3", "m4", "m5"]


def test_shifted_ids_stay_within_40_characters() -> None:
    long_id = "call_" + "x" * 38
    out = _shifted([_call(long_id), _result(long_id, "ok")], "_12_3", 0)
    new = out[0].tool_calls[0].id
    assert len(new) == 40 and new.endswith("_12_3")
    assert out[1].tool_results[0].call_id == new


def test_message_text_holds_calls_results_and_text() -> None:
    text = message_text([Message("user", [Text("see src/a.py")]), _call("c1"),
                         _result("c1", "exit 2")])
    assert text.split("\n") == ["see src/a.py", "run", '{"cmd": "ls"}', "exit 2"]


def test_replay_on_shared_data_stays_under_budget(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "runtime.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "runtime_session.py"), "--data", str(shared_data),
         "--tokens", "40000", "--budget", "8000", "--check-every", "5", "--json", str(out)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["session"]["tokens"] >= 40_000
    assert data["calls_over_budget"] == 0
    assert data["peak_tokens_at_call"] <= 8000 < data["peak_tokens_before_compaction"]
    assert data["openai_invalid_checks"] == data["anthropic_invalid_checks"] == 0
    assert data["final_openai_errors"] == data["final_anthropic_errors"] == []
    assert sum(r["events"] for r in data["strategies"]) > 0
    # everything offloaded can be reloaded, so every fact is in working + offloaded
    assert data["facts"]["facts"] > 0
    assert data["facts"]["in_reloadable"] == data["facts"]["facts"]


def test_agent_loop_example_runs_and_reloads() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "agent_loop.py")],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "event log:" in out
    events = [line for line in out.splitlines() if " messages " in line and " tokens " in line]
    assert len(events) >= 2
    assert "reload ok:" in out
    # the model quotes the failure it could only see by reloading the offloaded output
    assert "printed: E   AssertionError: assert Decimal('107.99') == Decimal('108.00')" in out
