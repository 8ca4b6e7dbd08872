"""Nested collections: message lists found inside eval reports and trajectory dumps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import precis
from precis.errors import FormatError
from precis.formats import read_document
from precis.formats.nested import MAX_DEPTH, NestedFormat, find_message_lists
from precis.formats.openai import OpenAIFormat
from precis.model import ToolCall, ToolResult

FMT = NestedFormat()


def test_eval_report_in_anthropic_shape(fixtures: Path) -> None:
    doc = read_document(fixtures / "nested" / "eval_report.json")
    assert FMT.sniff(doc) == pytest.approx(0.2)
    first, second = FMT.parse(doc)
    assert (first.id, first.title) == ("file_ops_backup", "Back up a config file")
    assert (second.id, second.title) == ("text_count_words", "Count words in a file")
    assert first.metadata["path"] == "results[0].trace.messages"
    assert first.metadata["message_format"] == "anthropic"
    assert first.metadata["turns"] == 2
    # task.system becomes the system message; role tool_result becomes tool.
    assert [m.role for m in first] == ["system", "user", "assistant", "tool", "assistant"]
    assert first[0].text == "You are a careful shell user."
    assert first[2].tool_calls == [
        ToolCall("toolu_b1", "bash", '{"commands": "cp app.conf app.conf.bak"}')
    ]
    assert [m.role for m in second] == ["user", "assistant", "tool"]
    result = second[2].tool_results[0]
    assert (result.call_id, result.is_error) == ("toolu_c1", True)
    assert result.content == "wc: notes.txt: No such file"


def test_trajectory_list_in_openai_shape(fixtures: Path) -> None:
    path = fixtures / "nested" / "trajectories.json"
    doc = read_document(path)
    assert FMT.sniff(doc) == pytest.approx(0.2)
    assert OpenAIFormat().sniff(doc) == 0.0
    convs = FMT.parse(doc)
    # task 0 appears twice (two trials): the second gets "#2" so both stay selectable.
    assert [c.id for c in convs] == ["0", "1", "0#2"]
    assert convs[0].title == "You are mia_li. You want to fly from New York to Seattle on May 20."
    assert convs[0].metadata == {
        "path": "[0].traj", "message_format": "openai", "task_id": 0, "trial": 0, "reward": 1.0,
    }
    first = convs[0]
    assert [m.role for m in first] == ["system", "user", "assistant", "tool", "assistant"]
    assert first[2].parts == [ToolCall("call_1", "get_user_details", '{"user_id":"mia_li"}')]
    assert first[3].parts == [
        ToolResult("call_1", '{"name": "Mia Li"}', name="get_user_details")
    ]
    assert convs[2].metadata["trial"] == 1


def test_load_and_pick(fixtures: Path) -> None:
    path = fixtures / "nested" / "trajectories.json"
    coll = precis.load_all(path)
    assert coll.format == "nested"
    assert [i.message_count for i in coll.infos()] == [5, 2, 1]
    assert precis.load(path, pick="0#2")[0].text == "Book me a flight to Seattle."
    assert precis.load(path, pick="1")[1].text == "Done, ABC123 is cancelled."


def _nest(levels: int, leaf: Any) -> Any:
    value = leaf
    for _ in range(levels):
        value = {"wrap": value}
    return value


MESSAGES = [{"role": "user", "content": "deep"}]


def test_depth_limit() -> None:
    assert find_message_lists(_nest(MAX_DEPTH - 1, MESSAGES))
    assert find_message_lists(_nest(MAX_DEPTH, MESSAGES))
    assert find_message_lists(_nest(MAX_DEPTH + 1, MESSAGES)) == []
    with pytest.raises(FormatError, match=f"no list of chat messages .* within {MAX_DEPTH}"):
        FMT.parse(read_document(_nest(MAX_DEPTH + 1, MESSAGES)))


def test_walk_is_iterative() -> None:
    # Far deeper than Python's recursion limit: must neither recurse nor crash.
    deep: Any = MESSAGES
    for _ in range(5000):
        deep = [deep]
    assert find_message_lists(deep) == []
    assert len(find_message_lists(deep, max_depth=10_000)) == 1


def test_bad_message_names_the_path() -> None:
    items = [{"role": "user", "content": "x"}] * 5 + [{"role": "robot", "content": "beep"}]
    doc = read_document({"runs": [{"id": "r1", "chat": items}]})
    with pytest.raises(FormatError, match="message 5 has unknown role 'robot'") as err:
        FMT.parse(doc)
    assert err.value.where == "<data> at runs[0].chat"


def test_jsonl_records_name_their_line(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text(
        '{"sample_id": "s1", "log": {"chat": [{"role": "user", "content": "a"}]}}\n'
        '{"sample_id": "s2", "log": {"chat": [{"role": "user", "content": "b"}, 7]}}\n',
        encoding="utf-8",
    )
    with pytest.raises(FormatError, match="message 1 is a number") as err:
        FMT.parse(read_document(path))
    assert err.value.where == f"{path} line 2 at log.chat"


@pytest.mark.parametrize(
    "value",
    [
        [{"role": "user", "content": "top-level list: a plain conversation"}],
        {"conversations": [{"from": "human", "value": "hi"}]},
        [{"conversation": {"session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}]}}],
        {"hello": [1, 2, 3]},
    ],
)
def test_not_claimed(value: object) -> None:
    assert FMT.sniff(read_document(value)) == 0.0


# -- real files ----------------------------------------------------------------------------


@pytest.mark.data
def test_real_tau_bench(shared_data: Path) -> None:
    path = shared_data / "transcripts" / "openai" / "tau-bench-gpt-4o-airline-first100.json"
    coll = precis.load_all(path)
    assert coll.format == "nested"
    assert len(coll) == 100
    conv = coll.conversations[0]
    assert conv.id == "0"
    assert conv.title.startswith("You are mia_li_3668. You want to fly from New York to Seattle")
    assert conv[0].role == "system"
    assert conv[0].text.startswith("# Airline Agent Policy")
    assert conv[1].text == "Hi! I'm looking to book a flight from New York to Seattle on May 20th."
    call = next(m for m in conv if m.tool_calls).tool_calls[0]
    assert (call.name, call.id) == ("get_user_details", "call_oIHazX6yQrB8hUwl4cRilFKj")
    assert coll.conversations[50].id == "0#2"  # trial 1 of task 0
    assert coll.conversations[50].metadata["trial"] == 1


@pytest.mark.data
def test_real_bashkit_eval(shared_data: Path) -> None:
    path = shared_data / "transcripts" / "anthropic" / "bashkit-eval-claude-opus-4-7.json"
    coll = precis.load_all(path)
    assert coll.format == "nested"
    assert len(coll) == 58
    conv = coll.conversations[0]
    assert conv.id == "file_ops_project_scaffold"
    assert conv.title == "Create a Python project directory structure"
    assert [m.role for m in conv] == ["user", "assistant", "tool", "assistant"]
    assert conv[0].text.startswith("Create a Python project at /home/eval/myproject")
    assert conv[1].tool_calls[0].name == "bash"
    assert conv[2].tool_results[0].call_id == "toolu_01KtcaMxrVPwJaXnXdaSp8jK"
    assert sum(len(m.tool_calls) for c in coll.conversations for m in c) == 175
