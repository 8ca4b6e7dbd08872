"""OpenHands event streams: responses emitted once, tool results, recall, finish, real file."""

from __future__ import annotations

from pathlib import Path

import pytest

import precis
from precis.errors import FormatError
from precis.formats import read_document
from precis.formats.openai import OpenAIFormat
from precis.formats.openhands import OpenHandsFormat, parse_events
from precis.model import Text, ToolCall, ToolResult

FMT = OpenHandsFormat()


@pytest.fixture
def convs(fixtures: Path) -> list[precis.Conversation]:
    return FMT.parse(read_document(fixtures / "openhands" / "output.jsonl"))


def test_detects_eval_output(fixtures: Path) -> None:
    doc = read_document(fixtures / "openhands" / "output.jsonl")
    assert FMT.sniff(doc) == pytest.approx(0.9)
    assert OpenAIFormat().sniff(doc) == 0.0


def test_one_conversation_per_instance(convs: list[precis.Conversation]) -> None:
    assert [c.id for c in convs] == ["demo__app-1", "demo__app-2"]
    assert convs[0].title == "Parser crashes on single-element tuples"
    assert convs[0].metadata["tools"] == [
        {"type": "function", "function": {"name": "execute_bash"}}
    ]
    assert convs[0].metadata["test_result"]["git_patch"].startswith("diff --git")
    assert "history" not in convs[0].metadata


def test_function_calling_instance(convs: list[precis.Conversation]) -> None:
    conv = convs[0]
    assert [m.role for m in conv] == [
        "system", "user", "user", "assistant", "tool", "tool", "user", "assistant", "tool",
        "assistant",
    ]
    assert conv[0].text == "You are OpenHands agent."
    assert conv[0].metadata["agent_class"] == "CodeActAgent"
    assert conv[1].text == "Fix the parser crash."
    assert (conv[1].id, conv[1].timestamp) == ("1", "2025-04-30T16:32:51")


def test_a_response_with_two_calls_is_emitted_once(convs: list[precis.Conversation]) -> None:
    conv = convs[0]
    assistant = conv[3]
    assert assistant.id == "4"
    assert assistant.text == "I'll look at the repo and read the parser."
    assert assistant.tool_calls == [
        ToolCall("toolu_01", "execute_bash", '{"command": "ls /workspace/app"}'),
        ToolCall("toolu_02", "str_replace_editor",
                 '{"command": "view", "path": "/workspace/app/parser.c"}'),
    ]
    assert assistant.metadata["response_id"] == "gen-1"
    texts = [m.text for m in conv if m.role == "assistant"]
    assert len(texts) == len(set(texts))  # no response repeated
    assert conv[4].parts == [ToolResult("toolu_01", "Makefile\nparser.c", name="execute_bash")]
    assert conv[4].metadata["extras"]["metadata"]["exit_code"] == 0
    assert conv[5].tool_results[0].call_id == "toolu_02"


def test_recall_error_think_and_finish(convs: list[precis.Conversation]) -> None:
    conv = convs[0]
    recall = conv[2]
    assert recall.parts == [
        Text("Runtime hosts: http://localhost:5000\nDate: 2025-04-30"),
        Text("[github knowledge, triggered by 'git']\nUse the GITHUB_TOKEN for API calls."),
    ]
    error = conv[6]
    assert error.text == "Parameter 'command' is expected to be one of ['view', 'create']."
    assert error.metadata["is_error"] is True
    assert conv[7].tool_calls[0].name == "think"
    assert conv[8].tool_results[0].content == "Your thought has been logged."
    finish = conv[9]
    assert finish.text == (
        "Done: the tuple case is handled.\n\nThe parser now accepts single-element tuples."
    )
    assert finish.tool_calls == []
    assert finish.metadata["task_completed"] == "true"


def test_non_function_calling_actions_get_synthesized_calls(
    convs: list[precis.Conversation],
) -> None:
    conv = convs[1]
    assert [m.role for m in conv] == ["user", "assistant", "tool", "assistant"]
    assert conv[1].parts == [
        Text("Find the argument parser."),
        ToolCall("event_1", "run", '{"command": "grep -rn argparse"}'),
    ]
    assert conv[2].parts == [ToolResult("event_1", "cli.py:3:import argparse", name="run")]
    assert conv[3].text == "The flag belongs in cli.py."


def test_bare_event_list() -> None:
    events = [
        {"id": 0, "source": "user", "action": "message", "args": {"content": "hi"}},
        {"id": 1, "source": "agent", "action": "message", "args": {"content": "hello"}},
    ]
    doc = read_document(events)
    assert FMT.sniff(doc) == pytest.approx(0.85)
    [conv] = FMT.parse(doc)
    assert [(m.role, m.text) for m in conv] == [("user", "hi"), ("assistant", "hello")]


@pytest.mark.parametrize(
    ("events", "expected"),
    [
        ([{"id": 0, "source": "user"}], "event 0 has neither 'action' nor 'observation'"),
        (["x"], "event 0 is a string"),
        ([{"id": 0, "action": "run", "args": "ls"}], "event 0: args is a string"),
        ([{"id": 0, "action": 3}], "event 0: action is a number"),
        ([{"id": 0, "action": "run", "tool_call_metadata": []}],
         "event 0: tool_call_metadata is a list"),
    ],
)
def test_bad_events(events: list[object], expected: str) -> None:
    with pytest.raises(FormatError, match=expected):
        parse_events(events, "x.json")


def test_bad_history_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_text(
        '{"instance_id": "a", "history": [{"id": 0, "source": "user", "action": "message"}]}\n'
        '{"instance_id": "b", "history": 5}\n',
        encoding="utf-8",
    )
    with pytest.raises(FormatError, match="record 1: 'history' is a number") as err:
        FMT.parse(read_document(path))
    assert err.value.where == f"{path} line 2"


def test_not_claimed() -> None:
    assert FMT.sniff(read_document([{"role": "user", "content": "hi"}])) == 0.0
    swe = {"history": [{"role": "user", "content": "x", "agent": "main"}], "trajectory": []}
    assert FMT.sniff(read_document(swe)) == 0.0


# -- the real evaluation output -----------------------------------------------------------


@pytest.mark.data
def test_real_multi_swe_bench_output(shared_data: Path) -> None:
    path = shared_data / "transcripts" / "openai" / "openhands-multi-swe-bench.output.jsonl"
    coll = precis.load_all(path)
    assert coll.format == "openhands"
    assert [c.id for c in coll.conversations] == [
        "ponylang__ponyc-4595", "ponylang__ponyc-4593", "ponylang__ponyc-4588",
    ]
    conv = coll.conversations[0]
    assert conv.title == "ponyc segfaults when trying to match using a single element tuple form"
    assert conv[0].role == "system"
    assert conv[0].text.startswith("You are OpenHands agent, a helpful AI assistant")
    assert conv[1].role == "user"
    assert conv[1].text.startswith("<uploaded_files>\n/workspace/ponylang__ponyc__0.1\n")
    first_call = next(m for m in conv if m.tool_calls).tool_calls[0]
    assert first_call.id == "toolu_01"
    assert first_call.name == "execute_bash"
    assert first_call.arguments == '{"command": "ls -l /workspace/ponylang__ponyc__0.1"}'
    # 23 LLM calls with tool_call_metadata; the last (finish) is shown as text.
    assert sum(len(m.tool_calls) for m in conv) == 22
    assert conv[-1].role == "assistant" and conv[-1].tool_calls == []
    for c in coll.conversations:
        assert c.warnings == []
        ids = [m.metadata.get("response_id") for m in c if m.metadata.get("response_id")]
        assert len(ids) == len(set(ids))  # each LLM response once, though repeated in events
