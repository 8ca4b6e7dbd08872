"""SWE-agent trajectories: history messages, tool_call_ids, extras, real file."""

from __future__ import annotations

from pathlib import Path

import pytest

import precis
from precis.errors import FormatError
from precis.formats import read_document
from precis.formats.openai import OpenAIFormat
from precis.formats.swe_agent import SWEAgentFormat
from precis.model import ToolCall, ToolResult

FMT = SWEAgentFormat()


def test_mini_trajectory(fixtures: Path) -> None:
    doc = read_document(fixtures / "swe_agent" / "mini.traj")
    assert FMT.sniff(doc) == pytest.approx(0.95)
    assert OpenAIFormat().sniff(doc) == 0.0
    [conv] = FMT.parse(doc)
    assert conv.id == "demo__timedelta-1"  # from the (string) replay_config
    assert conv.title == "TimeDelta rounding"
    assert [m.role for m in conv] == [
        "system", "user", "assistant", "tool", "assistant", "tool", "assistant"
    ]
    assert conv[1].text == "ISSUE:\nTimeDelta rounds 345 ms down to 344."
    assert conv.metadata["info"]["exit_status"] == "submitted"
    assert conv.metadata["trajectory_steps"] == 1
    assert "history" not in conv.metadata and "trajectory" not in conv.metadata


def test_extras_kept_in_metadata(fixtures: Path) -> None:
    [conv] = FMT.parse(read_document(fixtures / "swe_agent" / "mini.traj"))
    assert conv[0].metadata == {"agent": "main", "message_type": "system_prompt"}
    assert conv[2].metadata["action"] == "ls"
    assert conv[2].metadata["thought"] == "List files."
    assert conv[2].parts[1] == ToolCall("call_1", "bash", '{"command":"ls"}')
    assert conv[3].metadata["tool_call_ids"] == ["call_1"]
    assert conv[3].parts == [ToolResult("call_1", "setup.py\nsrc/")]


def test_several_tool_call_ids_answer_each_call(fixtures: Path) -> None:
    [conv] = FMT.parse(read_document(fixtures / "swe_agent" / "mini.traj"))
    results = conv[5].tool_results
    assert [r.call_id for r in results] == ["call_2", "call_3"]
    assert all(r.content == "[File: a.py]\n[File: b.py]" for r in results)


def test_load_reports_the_unanswered_submit(fixtures: Path) -> None:
    conv = precis.load(fixtures / "swe_agent" / "mini.traj")
    assert conv.source_format == "swe-agent"
    assert conv.warnings == ["message 6: tool call 'call_4' has no result in the conversation"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"history": "nope", "trajectory": []}, "'history' is a string"),
        ({"history": [{"role": "user", "content": "x"}, 5], "trajectory": []},
         "message 1 is a number"),
        ({"history": [{"role": "critic", "content": "x", "agent": "main"}]},
         "message 0 has unknown role 'critic'"),
        ({"history": [{"role": "tool", "content": "x", "tool_call_ids": "c1"}]},
         "message 0: tool_call_ids is a string"),
    ],
)
def test_bad_structure(value: object, expected: str) -> None:
    with pytest.raises(FormatError, match=expected):
        FMT.parse(read_document(value))


def test_not_claimed_without_swe_agent_markers() -> None:
    assert FMT.sniff(read_document({"history": [{"role": "user", "content": "hi"}]})) == 0.0
    assert FMT.sniff(read_document([{"role": "user", "content": "hi"}])) == 0.0


# -- the real trajectory -----------------------------------------------------------------


@pytest.mark.data
def test_real_marshmallow_trajectory(shared_data: Path) -> None:
    path = shared_data / "transcripts" / "openai" / "swe-agent-marshmallow-1867.traj"
    coll = precis.load_all(path)
    assert coll.format == "swe-agent"
    [conv] = coll.conversations
    assert conv.id == "marshmallow-code__marshmallow-1867"
    assert conv.title == "TimeDelta serialization precision"
    assert len(conv) == 28
    assert [m.role for m in conv[:4]] == ["system", "user", "assistant", "tool"]
    assert conv[1].text.startswith("We're currently solving the following issue")
    first_call = conv[2].tool_calls[0]
    assert (first_call.name, first_call.arguments) == ("bash", '{"command":"ls -F"}')
    assert conv[3].tool_call_id == first_call.id == "call_9diWc1DYm4RLmPfHgIaP2wd"
    assert sum(len(m.tool_calls) for m in conv) == 13
    assert conv.warnings == []
    assert conv.metadata["info"]["exit_status"] == "submitted"
