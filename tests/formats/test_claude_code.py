"""Claude Code session logs: merging split responses, noise, metadata, real sessions."""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from precis.errors import FormatError
from precis.formats import detect_format
from precis.formats._checks import check_tool_pairs
from precis.formats._reader import read_document
from precis.formats.anthropic import AnthropicFormat
from precis.formats.claude_code import ClaudeCodeFormat
from precis.formats.export import to_anthropic
from precis.model import Conversation, Text, Thinking, ToolCall, ToolResult

FMT = ClaudeCodeFormat()


def _load(path: Path) -> Conversation:
    (conv,) = FMT.parse(read_document(path))
    return conv


def _jsonl(tmp_path: Path, records: list[Any]) -> Path:
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def session(fixtures: Path) -> Conversation:
    return _load(fixtures / "claude_code" / "session.jsonl")


def test_messages_after_merging_and_skipping_noise(session: Conversation) -> None:
    # 18 lines: 7 noise/meta lines (summary, queue-operation, progress, snapshot, system,
    # a repeated line) and 11 message lines; msg_A's 4 lines and msg_B's 2 lines merge,
    # and line 15 splits into a tool result and user text -> 9 messages.
    assert [(m.role, m.id) for m in session] == [
        ("user", "u-1"),
        ("assistant", "msg_A"),
        ("tool", "u-5"),
        ("tool", "u-7"),
        ("assistant", "msg_B"),
        ("tool", "u-10"),
        ("user", "u-10#1"),
        ("user", "u-11"),
        ("assistant", "msg_C"),
    ]


def test_split_response_is_one_message_in_file_order(session: Conversation) -> None:
    merged = session[1]
    assert merged.parts == [
        Thinking("Look at the test first."),  # redacted (empty) signature -> None
        Text("I'll run the test and read the parser."),
        ToolCall("toolu_1", "Bash", '{"command": "pytest tests/test_dates.py -q"}'),
        ToolCall("toolu_2", "Read", '{"file_path": "/repo/dates.py"}'),
    ]
    assert merged.metadata["uuids"] == ["u-2", "u-3", "u-4", "u-6"]
    assert merged.metadata["lines"] == [4, 5, 6, 9]
    assert merged.metadata["line"] == 4
    # The last line carries the final usage and stop reason.
    assert merged.metadata["usage"] == {"input_tokens": 10, "output_tokens": 80}
    assert merged.metadata["stop_reason"] == "tool_use"
    assert merged.metadata["model"] == "claude-sonnet-4-5"
    assert merged.metadata["request_id"] == "req_msg_A"
    assert merged.timestamp == "2025-03-01T10:00:03+00:00"
    assert "uuids" not in session[8].metadata  # a one-line response is not "merged"
    assert session[8].metadata["uuid"] == "u-12"


def test_tool_results_pair_with_calls(session: Conversation) -> None:
    assert session[2].parts == [ToolResult("toolu_1", "1 failed", is_error=True, name="Bash")]
    assert session[3].parts == [
        ToolResult("toolu_2", "def parse_date(s):\n    return s", name="Read")
    ]
    assert session[2].metadata["tool_use_result"]["stdout"] == "1 failed"
    assert session[2].metadata["parent_uuid"] == "u-4"
    assert check_tool_pairs(session) == []


def test_mixed_user_line_is_split(session: Conversation) -> None:
    tool, user = session[5], session[6]
    assert tool.parts == [ToolResult("toolu_3", "ok", name="Edit")]
    assert user.parts == [Text("Also add a test for 2024-02-29.")]
    assert tool.metadata["split_from"] == user.metadata["split_from"] == 15
    assert tool.timestamp == user.timestamp == "2025-03-01T10:00:10+00:00"


def test_session_metadata(session: Conversation) -> None:
    assert session.id == "sess-1"
    assert session.title == "Fix the failing date parser test"
    meta = session.metadata
    assert meta["cwd"] == "/repo" and meta["git_branch"] == "main"
    assert meta["version"] == "2.0.0"
    assert meta["skipped"] == {"queue-operation": 1, "progress": 1, "file-history-snapshot": 1}
    assert meta["duplicate_lines"] == 1
    assert meta["events"] == [
        {
            "subtype": "informational",
            "content": "PostToolUse hook ran",
            "level": "info",
            "timestamp": "2025-03-01T10:00:07.500Z",
            "line": 12,
        }
    ]
    assert meta["summaries"] == ["Fix the failing date parser test"]
    assert "is_sidechain" not in meta
    assert session[7].metadata["is_meta"] is True
    assert session[0].metadata["is_sidechain"] is False


def test_custom_title_wins_over_summary(tmp_path: Path) -> None:
    records = [
        {"type": "summary", "summary": "Old summary", "leafUuid": "x"},
        {"type": "custom-title", "customTitle": "My title", "sessionId": "s"},
        {
            "type": "user",
            "uuid": "u",
            "sessionId": "s",
            "message": {"role": "user", "content": "hi"},
        },
    ]
    conv = _load(_jsonl(tmp_path, records))
    assert conv.title == "My title"
    assert conv.messages[0].parts == [Text("hi")]


def test_sniff(fixtures: Path, tmp_path: Path) -> None:
    doc = read_document(fixtures / "claude_code" / "session.jsonl")
    assert FMT.sniff(doc) >= 0.9
    assert AnthropicFormat().sniff(doc) == 0
    plain = _jsonl(
        tmp_path, [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    )
    assert FMT.sniff(read_document(plain)) == 0
    noise_only = _jsonl(tmp_path, [{"type": "summary", "summary": "s", "leafUuid": "x"}])
    assert FMT.sniff(read_document(noise_only)) == 0


def test_errors_name_the_line(tmp_path: Path) -> None:
    good = {
        "type": "user",
        "uuid": "u1",
        "sessionId": "s",
        "message": {"role": "user", "content": "hi"},
    }
    bad_message = {"type": "assistant", "uuid": "u2", "sessionId": "s", "message": "oops"}
    with pytest.raises(FormatError) as info:
        FMT.parse(read_document(_jsonl(tmp_path, [good, bad_message])))
    assert info.value.where.endswith("log.jsonl line 2")
    assert "'message' a string" in info.value.message

    no_id = {
        "type": "assistant",
        "uuid": "u3",
        "sessionId": "s",
        "message": {"role": "assistant", "content": [{"type": "tool_use", "name": "Bash"}]},
    }
    with pytest.raises(FormatError) as info:
        FMT.parse(read_document(_jsonl(tmp_path, [good, no_id])))
    assert info.value.where.endswith("line 2")
    assert info.value.message.startswith("assistant message block 0")

    with pytest.raises(FormatError, match="entry is a list"):
        FMT.parse(read_document(_jsonl(tmp_path, [good, [1, 2]])))


def test_no_messages_gives_no_conversation(tmp_path: Path) -> None:
    summary = {"type": "summary", "summary": "s", "leafUuid": "x"}
    path = _jsonl(tmp_path, [summary, {"type": "progress", "uuid": "p"}])
    assert FMT.parse(read_document(path)) == []


def test_one_line_log(tmp_path: Path) -> None:
    entry = {
        "type": "user",
        "uuid": "u",
        "sessionId": "s",
        "message": {"role": "user", "content": "hi"},
    }
    doc = read_document(_jsonl(tmp_path, [entry]))
    assert doc.kind == "json"  # a single line is plain JSON to the reader
    assert FMT.sniff(doc) >= 0.9
    (conv,) = FMT.parse(doc)
    assert [(m.role, m.id, m.text) for m in conv] == [("user", "u", "hi")]


# -- real sessions -------------------------------------------------------------------


def _assert_valid_anthropic(conv: Conversation) -> None:
    turns = to_anthropic(conv.messages)["messages"]
    for before, after in pairwise(turns):
        assert before["role"] != after["role"]
        asked = {b["id"] for b in before["content"] if b["type"] == "tool_use"}
        answered = {b["tool_use_id"] for b in after["content"] if b["type"] == "tool_result"}
        assert asked == answered


@pytest.mark.data
def test_real_main_session(shared_data: Path) -> None:
    conv = _load(
        shared_data / "transcripts" / "claude-code" / "python-to-rust-port.transcript.jsonl"
    )
    roles = [m.role for m in conv]
    # 97 lines: 1 queue-operation, 55 assistant lines from 39 responses, 41 user lines
    # (39 tool results, the prompt, one stop-hook message).
    assert len(conv) == 80
    assert (roles.count("assistant"), roles.count("tool"), roles.count("user")) == (39, 39, 2)
    assert conv.id == "c7d3d95c-57f0-4359-8f4b-926a9bef5a3f"
    assert conv[0].text.startswith("Port this Python project to Rust.")
    assert conv[1].id == "msg_01H9V6TtzNYTPeVuiyiMoY7A"
    call = conv[1].tool_calls[0]
    assert (call.id, call.name) == ("toolu_01PKfvC84zTHnFnxjuoazGo5", "Task")
    assert conv[2].tool_results[0].call_id == call.id
    assert conv[2].tool_results[0].name == "Task"
    # Lines 65-67 share one message id: text plus two parallel calls, then both results.
    merged = next(m for m in conv if m.metadata.get("lines") == [65, 66, 67])
    at = conv.messages.index(merged)
    assert [p.kind for p in merged.parts] == ["text", "tool_call", "tool_call"]
    assert [m.tool_results[0].call_id for m in conv[at + 1 : at + 3]] == [
        c.id for c in merged.tool_calls
    ]
    hook = next(m for m in conv if m.metadata.get("is_meta"))
    assert hook.role == "user" and hook.text.startswith("Stop hook feedback:")
    assert conv.metadata["skipped"] == {"queue-operation": 1}
    assert check_tool_pairs(conv) == []
    _assert_valid_anthropic(conv)


@pytest.mark.data
def test_real_subagent_session(shared_data: Path) -> None:
    path = shared_data / "transcripts" / "claude-code" / "marot-spotter.subagent-aa84377.jsonl"
    conv = _load(path)
    # 98 lines: 46 progress, 22 user lines, 30 assistant lines from 9 responses.
    assert len(conv) == 31
    assert conv.metadata["agent_id"] == "aa84377"
    assert conv.metadata["is_sidechain"] is True
    assert conv.metadata["skipped"] == {"progress": 46}
    assert conv[0].text.startswith("Read and summarize the following files")
    first = conv[1]
    # The first response's lines are not contiguous: results were written between them.
    assert first.metadata["lines"] == [2, 3, 4, 5, 9, 13, 14]
    assert [p.kind for p in first.parts] == ["text"] + ["tool_call"] * 6
    assert first.tool_calls[0].id == "toolu_01U33N92EcbX5Zgfj2CRPqfF"
    assert first.tool_calls[0].name == "Glob"
    results = [m.tool_results[0] for m in conv[2:8]]
    assert [r.call_id for r in results] == [c.id for c in first.tool_calls]
    assert results[0].content.endswith("lib/spotter/transcripts/jobs/sync_transcripts.ex")
    assert check_tool_pairs(conv) == []
    _assert_valid_anthropic(conv)


def test_detected_among_all_formats(fixtures: Path) -> None:
    doc = read_document(fixtures / "claude_code" / "session.jsonl")
    assert detect_format(doc).name == "claude-code"


@pytest.mark.data
@pytest.mark.parametrize(
    "name", ["python-to-rust-port.transcript.jsonl", "marot-spotter.subagent-aa84377.jsonl"]
)
def test_real_logs_detected(shared_data: Path, name: str) -> None:
    doc = read_document(shared_data / "transcripts" / "claude-code" / name)
    assert detect_format(doc).name == "claude-code"
