"""Tool pairs: the tail's start (window_start) and the repair that makes any list valid."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from _api_rules import anthropic_errors, openai_errors
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from precis.compact._pairs import NO_RESULT_TEXT, OPENING_TEXT, Repair, repair, window_start
from precis.errors import ConfigError
from precis.formats.export import to_anthropic, to_openai
from precis.model import Image, Message, Part, Text, Thinking, ToolCall, ToolResult

SYSTEM = Message.of("system", "You are a careful coding agent.")


def user(text: str) -> Message:
    return Message.of("user", text)


def said(text: str) -> Message:
    return Message.of("assistant", text)


def calls(*ids: str, text: str | None = None) -> Message:
    parts: list[Part] = [Text(text)] if text else []
    parts += [ToolCall(i, "read_file", json.dumps({"path": f"/src/{i}.py"})) for i in ids]
    return Message("assistant", parts)


def result(call_id: str, content: str | None = None) -> Message:
    return Message("tool", [ToolResult(call_id, content or f"output of {call_id}")])


def stub(call_id: str, name: str = "read_file") -> Message:
    return Message(
        "tool",
        [ToolResult(call_id, NO_RESULT_TEXT, name=name)],
        metadata={"precis_repair": "add-missing-result"},
    )


def actions(repairs: list[Repair]) -> list[tuple[int, str | None, str]]:
    return [(r.index, r.call_id, r.action) for r in repairs]


def assert_exports_valid(messages: list[Message]) -> None:
    assert openai_errors(to_openai(messages)) == []
    assert anthropic_errors(to_anthropic(messages)) == []


# -- repair: lists that are already valid ------------------------------------------------


def test_valid_list_comes_back_equal_without_repairs() -> None:
    messages = [
        SYSTEM,
        user("Fix the failing test."),
        calls("call_a", "call_b", text="Reading both files."),
        result("call_a"),
        result("call_b"),
        said("The bug is in b.py line 12."),
        user("Go ahead."),
    ]
    out, repairs = repair(messages)
    assert out == messages
    assert repairs == []
    assert all(o is not m for o, m in zip(out, messages))  # new objects, never the input's
    assert_exports_valid(out)


def test_results_in_one_message_in_any_order_are_valid_as_they_are() -> None:
    # Anthropic-style: both results in one user turn, the second call answered first.
    both = Message("tool", [ToolResult("b", "2"), ToolResult("a", "1")])
    messages = [user("sum?"), calls("a", "b"), both, said("3")]
    out, repairs = repair(messages)
    assert (out, repairs) == (messages, [])


def test_repair_never_mutates_its_input() -> None:
    messages = [
        said("hello"),
        Message("user", [Text("q"), ToolCall("x", "grep")]),
        result("x"),
        result("ghost"),
    ]
    before = copy.deepcopy(messages)
    repair(messages)
    assert messages == before


# -- repair: tool results ---------------------------------------------------------------


def test_orphan_result_is_removed_and_recorded_with_its_text() -> None:
    orphan = ToolResult("call_gone", "stack trace: KeyError 'user_id'")
    messages = [user("why?"), Message("tool", [orphan]), said("A KeyError.")]
    out, repairs = repair(messages)
    assert out == [user("why?"), said("A KeyError.")]
    assert actions(repairs) == [(1, "call_gone", "drop-orphan-result")]
    assert repairs[0].parts == (orphan,)
    assert str(repairs[0]).startswith("message 1: tool result for call 'call_gone'")


def test_result_before_its_call_is_an_orphan_and_the_call_gets_a_stub() -> None:
    messages = [user("go"), result("a"), calls("a")]
    out, repairs = repair(messages)
    assert out == [user("go"), calls("a"), stub("a")]
    assert actions(repairs) == [(1, "a", "drop-orphan-result"), (2, "a", "add-missing-result")]


def test_missing_result_gets_a_synthetic_one_right_after_the_call() -> None:
    messages = [user("list files"), calls("a", "b", text="Two reads."), result("b"), said("ok")]
    out, repairs = repair(messages)
    assert out == [
        user("list files"),
        calls("a", "b", text="Two reads."),
        result("b"),
        stub("a"),
        said("ok"),
    ]
    assert actions(repairs) == [(1, "a", "add-missing-result")]
    assert repairs[0].parts == (ToolResult("a", NO_RESULT_TEXT, name="read_file"),)
    assert_exports_valid(out)


def test_missing_result_text_is_a_parameter() -> None:
    out, _ = repair([user("x"), calls("a")], missing_result_text="(cut off)")
    assert out[-1].parts == [ToolResult("a", "(cut off)", name="read_file")]


def test_separated_results_move_up_to_their_call_before_anything_else() -> None:
    messages = [
        user("check a and b"),
        calls("a", "b"),
        result("a"),
        user("also, hurry"),
        result("b"),
        said("done"),
    ]
    out, repairs = repair(messages)
    assert out == [
        user("check a and b"),
        calls("a", "b"),
        result("a"),
        result("b"),
        user("also, hurry"),
        said("done"),
    ]
    assert actions(repairs) == [(4, "b", "move-result")]
    assert_exports_valid(out)


def test_moved_and_synthetic_results_follow_in_call_order() -> None:
    messages = [user("q"), calls("a", "b", "c", "d"), result("c"), said("x"), result("b")]
    out, _ = repair(messages)
    tail = [m.parts[0] for m in out[2:6]]
    assert [(p.call_id, p.content) for p in tail if isinstance(p, ToolResult)] == [
        ("c", "output of c"),  # already in place: stays first
        ("a", NO_RESULT_TEXT),
        ("b", "output of b"),
        ("d", NO_RESULT_TEXT),
    ]
    assert out[6] == said("x")


def test_duplicate_result_keeps_the_first() -> None:
    messages = [user("q"), calls("a"), result("a", "first"), result("a", "again"), said("ok")]
    out, repairs = repair(messages)
    assert out == [user("q"), calls("a"), result("a", "first"), said("ok")]
    assert actions(repairs) == [(3, "a", "drop-duplicate-result")]
    assert repairs[0].parts == (ToolResult("a", "again"),)


# -- repair: call ids -------------------------------------------------------------------


def test_ids_reused_across_turns_are_renamed_with_their_results() -> None:
    # Some providers number calls 0, 1, ... in every turn.
    messages = [
        user("q"),
        calls("0"),
        result("0", "first run"),
        calls("0"),
        result("0", "second run"),
    ]
    out, repairs = repair(messages)
    assert out == [
        user("q"),
        calls("0"),
        result("0", "first run"),
        Message("assistant", [ToolCall("0_2", "read_file", json.dumps({"path": "/src/0.py"}))]),
        result("0_2", "second run"),
    ]
    assert actions(repairs) == [(3, "0", "rename-call")]
    assert_exports_valid(out)


def test_repeated_id_within_one_message_pairs_results_in_order() -> None:
    message = Message("assistant", [ToolCall("x", "grep"), ToolCall("x", "run")])
    messages = [user("q"), message, result("x", "grep out"), result("x", "run out")]
    out, repairs = repair(messages)
    assert out[1].parts == [ToolCall("x", "grep"), ToolCall("x_2", "run")]
    assert out[2:] == [result("x", "grep out"), result("x_2", "run out")]
    assert actions(repairs) == [(1, "x", "rename-call")]


def test_ids_the_apis_reject_are_rewritten() -> None:
    long_id = "toolu_" + "9" * 44  # 50 characters: OpenAI takes at most 40
    messages = [
        user("q"),
        Message("assistant", [ToolCall("functions.read:0", "read"), ToolCall(long_id, "ls")]),
        Message("tool", [ToolResult("functions.read:0", "r"), ToolResult(long_id, "l")]),
    ]
    out, repairs = repair(messages)
    assert out[1].parts == [ToolCall("functions_read_0", "read"), ToolCall(long_id[:40], "ls")]
    assert out[2] == Message(
        "tool", [ToolResult("functions_read_0", "r"), ToolResult(long_id[:40], "l")]
    )
    assert [r.action for r in repairs] == ["rename-call", "rename-call"]
    assert_exports_valid(out)


def test_renamed_id_never_collides_with_an_existing_one() -> None:
    messages = [
        user("q"),
        calls("a"),
        result("a"),
        calls("a"),
        result("a"),
        calls("a_2"),
        result("a_2"),
    ]
    out, _ = repair(messages)
    ids = [p.id for m in out for p in m.parts if isinstance(p, ToolCall)]
    assert ids == ["a", "a_3", "a_2"]


# -- repair: parts on the wrong role ----------------------------------------------------


def test_call_on_a_user_message_is_split_into_an_assistant_message() -> None:
    call = ToolCall("c1", "grep", '{"q": "TODO"}')
    messages = [user("hi"), Message("user", [Text("search TODO"), call], id="m1"), result("c1")]
    out, repairs = repair(messages)
    assert out == [
        user("hi"),
        Message("user", [Text("search TODO")], id="m1"),
        Message("assistant", [call], id="m1#1"),
        result("c1"),
    ]
    assert actions(repairs) == [(1, "c1", "split-message")]
    assert_exports_valid(out)


def test_result_inside_an_assistant_message_becomes_a_tool_message() -> None:
    messages = [
        user("q"),
        Message("assistant", [ToolCall("a", "run"), ToolResult("a", "exit 0"), Text("Passed.")]),
    ]
    out, repairs = repair(messages)
    assert out == [
        user("q"),
        Message("assistant", [ToolCall("a", "run")]),
        Message("tool", [ToolResult("a", "exit 0")]),
        Message("assistant", [Text("Passed.")]),
    ]
    assert actions(repairs) == [(1, "a", "split-message")]


def test_text_in_a_tool_message_goes_after_the_whole_result_block() -> None:
    messages = [
        user("q"),
        calls("a", "b"),
        Message("tool", [ToolResult("a", "1"), Text("note from the harness")]),
        Message("tool", [ToolResult("b", "2")]),
    ]
    out, repairs = repair(messages)
    assert out == [
        user("q"),
        calls("a", "b"),
        Message("tool", [ToolResult("a", "1")]),
        Message("tool", [ToolResult("b", "2")]),
        Message("user", [Text("note from the harness")], id=None),
    ]
    assert actions(repairs) == [(2, None, "split-message"), (3, "b", "move-result")]
    assert_exports_valid(out)


def test_call_in_a_system_message_leaves_the_system_text() -> None:
    messages = [Message("system", [Text("rules"), ToolCall("s", "init")]), result("s"), user("hi")]
    out, repairs = repair(messages)
    assert out == [
        Message("system", [Text("rules")]),
        Message("user", [Text(OPENING_TEXT)], metadata={"precis_repair": "insert-opening"}),
        Message("assistant", [ToolCall("s", "init")]),
        result("s"),
        user("hi"),
    ]
    assert [r.action for r in repairs] == ["split-message", "insert-opening"]


# -- repair: empty messages and the opening ---------------------------------------------


def test_empty_messages_are_dropped_except_system() -> None:
    empty_system = Message("system", [])
    messages = [
        empty_system,
        user("q"),
        Message("user", []),
        Message("user", [Text("  \n")]),
        Message("assistant", [Thinking("hmm", signature="sig")]),
        Message("assistant", [Text("answer"), Text(" ")]),
    ]
    out, repairs = repair(messages)
    assert out == [empty_system, user("q"), said("answer")]
    assert actions(repairs) == [
        (2, None, "drop-empty"),
        (3, None, "drop-empty"),
        (4, None, "drop-empty"),
        (5, None, "drop-blank-text"),
    ]
    assert repairs[2].parts == (Thinking("hmm", signature="sig"),)


def test_image_only_user_message_is_kept() -> None:
    messages = [Message("user", [Image(url="https://example.com/a.png")]), said("a cat")]
    assert repair(messages) == (messages, [])


def test_conversation_opening_with_the_assistant_gets_a_user_message_first() -> None:
    messages = [SYSTEM, said("Summary so far: ..."), user("continue")]
    out, repairs = repair(messages)
    opening = Message("user", [Text(OPENING_TEXT)], metadata={"precis_repair": "insert-opening"})
    assert out == [SYSTEM, opening, said("Summary so far: ..."), user("continue")]
    assert actions(repairs) == [(1, None, "insert-opening")]
    assert_exports_valid(out)


def test_opening_text_is_a_parameter_and_must_not_be_blank() -> None:
    out, _ = repair([said("hi")], opening_text="(context)")
    assert out[0].parts == [Text("(context)")]
    with pytest.raises(ConfigError, match="opening_text"):
        repair([said("hi")], opening_text=" ")
    with pytest.raises(ConfigError, match="missing_result_text"):
        repair([said("hi")], missing_result_text="")


def test_list_without_conversation_is_left_as_it_is() -> None:
    assert repair([]) == ([], [])
    assert repair([SYSTEM]) == ([SYSTEM], [])
    out, repairs = repair([SYSTEM, result("x")])
    assert out == [SYSTEM]
    assert actions(repairs) == [(1, "x", "drop-orphan-result")]


# -- window_start -----------------------------------------------------------------------

EXCHANGE = [
    SYSTEM,  # 0
    user("fix it"),  # 1
    calls("a", "b"),  # 2
    result("a"),  # 3
    result("b"),  # 4
    said("fixed"),  # 5
    user("thanks"),  # 6
]


@pytest.mark.parametrize(
    ("start", "expected"),
    [(0, 1), (1, 1), (2, 2), (3, 2), (4, 2), (5, 5), (6, 6), (7, 7), (99, 7)],
)
def test_window_start_takes_in_the_calling_message(start: int, expected: int) -> None:
    assert window_start(EXCHANGE, start) == expected


def test_window_start_follows_chained_exchanges() -> None:
    # The result at 4 answers a call at 2, the result at 5 one at 3: a tail at 5 needs 3,
    # which needs 2.
    messages = [user("q"), said("plan"), calls("a"), calls("b"), result("a"), result("b")]
    assert window_start(messages, 5) == 2
    # Back-to-back exchanges: the tail may start at either assistant message.
    messages = [user("q"), calls("a"), result("a"), calls("b"), result("b")]
    assert [window_start(messages, s) for s in range(6)] == [0, 1, 1, 3, 3, 5]


def test_window_start_pairs_reused_ids_with_the_nearest_call() -> None:
    messages = [user("q"), calls("0"), result("0"), user("again"), calls("0"), result("0")]
    assert window_start(messages, 5) == 4


def test_window_start_moves_past_the_exchange_when_the_call_is_below_the_floor() -> None:
    messages = [Message("system", [ToolCall("s", "init")]), result("s"), user("hi")]
    assert window_start(messages, 1) == 2
    assert window_start(EXCHANGE, 4, floor=3) == 5
    assert window_start(EXCHANGE, 4, floor=2) == 2


def test_window_start_ignores_orphans_and_unanswered_calls() -> None:
    messages = [user("q"), calls("a"), said("no result came"), result("ghost"), user("next")]
    assert [window_start(messages, s) for s in range(6)] == [0, 1, 2, 3, 4, 5]


# -- property tests ---------------------------------------------------------------------

TOOL_NAMES = ("read_file", "grep", "run_tests")
API_ID = re.compile(r"[A-Za-z0-9_-]{1,40}")


def _mutate_call_in_user(messages: list[Message], at: int) -> None:
    messages.insert(at, Message("user", [Text("run it"), ToolCall(f"u{at}", "run_tests")]))


def _mutate_result_in_assistant(messages: list[Message], at: int) -> None:
    call = ToolCall(f"in{at}", "grep", "{}")
    messages.insert(at, Message("assistant", [call, ToolResult(call.id, "3 hits"), Text("Found.")]))


def _mutate_blank(messages: list[Message], at: int) -> None:
    messages.insert(at, Message("user", [Text(" ")]))


def _mutate_thinking_only(messages: list[Message], at: int) -> None:
    messages.insert(at, Message("assistant", [Thinking("...", signature="s1")]))


def _mutate_duplicate(messages: list[Message], at: int) -> None:
    tools = [m for m in messages[:at] if m.role == "tool"]
    if tools:
        messages.insert(at, copy.deepcopy(tools[-1]))


def _mutate_bad_id(messages: list[Message], at: int) -> None:
    messages.insert(at, Message("assistant", [ToolCall(f"functions.grep:{at}", "grep")]))
    messages.insert(at + 1, Message("tool", [ToolResult(f"functions.grep:{at}", "none")]))


def _mutate_assistant_first(messages: list[Message], at: int) -> None:
    del at
    first = next((i for i, m in enumerate(messages) if m.role != "system"), len(messages))
    messages.insert(first, said("(resumed)"))


MUTATIONS: tuple[Callable[[list[Message], int], None], ...] = (
    _mutate_call_in_user,
    _mutate_result_in_assistant,
    _mutate_blank,
    _mutate_thinking_only,
    _mutate_duplicate,
    _mutate_bad_id,
    _mutate_assistant_first,
)


@st.composite
def histories(draw: st.DrawFn, *, unique_ids: bool = False) -> list[Message]:
    """An agent session, cut at a random point, with random deletions.

    Assistant turns make 0-4 parallel calls; results come in order or shuffled, one per
    message or all in one, sometimes with user text between them; some are missing, some
    are orphans. Unless ``unique_ids``, call ids may restart in every turn, and rare
    mutations put parts on the wrong role, add empty or duplicated messages.
    """
    per_turn_ids = not unique_ids and draw(st.integers(0, 4)) == 0
    counter = 0
    messages: list[Message] = []
    if draw(st.booleans()):
        messages.append(SYSTEM)
    for turn in range(draw(st.integers(1, 4))):
        messages.append(user(f"task {turn}: fix module {turn}"))
        for step in range(draw(st.integers(0, 3))):
            width = draw(st.integers(0, 4))
            if per_turn_ids:
                ids = [str(n) for n in range(width)]
            else:
                ids = [f"call_{counter + n}" for n in range(width)]
                counter += width
            tool_calls = [
                ToolCall(i, draw(st.sampled_from(TOOL_NAMES)), json.dumps({"step": step}))
                for i in ids
            ]
            parts: list[Part] = []
            if draw(st.booleans()):
                parts.append(Thinking("plan the next step", signature="sig"))
            if not tool_calls or draw(st.booleans()):
                parts.append(Text(f"step {turn}.{step}"))
            messages.append(Message("assistant", [*parts, *tool_calls]))
            answered = [c for c in tool_calls if draw(st.integers(0, 7)) > 0]
            if draw(st.booleans()):
                answered = draw(st.permutations(answered))
            results: list[Part] = [
                ToolResult(c.id, f"{c.name} -> {c.id}", is_error=draw(st.booleans()), name=c.name)
                for c in answered
            ]
            grouping = draw(st.sampled_from(("each", "together", "interrupted")))
            if grouping == "together" and results:
                messages.append(Message("tool", results))
            else:
                for r in results:
                    messages.append(Message("tool", [r]))
                    if grouping == "interrupted" and draw(st.booleans()):
                        messages.append(user("(user typed while tools ran)"))
            if draw(st.integers(0, 7)) == 0:
                counter += 1
                messages.append(Message("tool", [ToolResult(f"lost_{counter}", "stale output")]))
        messages.append(said(f"turn {turn} done"))
    if not unique_ids:
        for mutation in draw(st.lists(st.sampled_from(MUTATIONS), max_size=2)):
            mutation(messages, draw(st.integers(0, len(messages))))
    cut = draw(st.integers(0, len(messages)))
    tail = messages[cut:]
    if cut and messages[0] is SYSTEM and draw(st.booleans()):
        tail.insert(0, SYSTEM)
    if tail:
        gone = draw(st.sets(st.integers(0, len(tail) - 1), max_size=3))
        tail = [m for i, m in enumerate(tail) if i not in gone]
    return tail


def _valid_pairs(messages: list[Message]) -> list[tuple[ToolCall, ToolResult]]:
    """Pairs the input already has right: a call in an assistant message whose id is
    usable and unique, answered by exactly one result, in a tool message after it."""
    all_calls = [p for m in messages for p in m.parts if isinstance(p, ToolCall)]
    pairs = []
    for i, message in enumerate(messages):
        if message.role != "assistant":
            continue
        for call in message.tool_calls:
            if not API_ID.fullmatch(call.id) or sum(c.id == call.id for c in all_calls) != 1:
                continue
            answers = [
                (j, p)
                for j, m in enumerate(messages)
                for p in m.parts
                if isinstance(p, ToolResult) and p.call_id == call.id
            ]
            if len(answers) == 1 and answers[0][0] > i and messages[answers[0][0]].role == "tool":
                pairs.append((call, answers[0][1]))
    return pairs


def _where(messages: list[Message], part: Part, role: str) -> list[int]:
    return [i for i, m in enumerate(messages) if m.role == role and part in m.parts]


FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(histories())
def test_repair_makes_any_history_valid_for_both_apis(messages: list[Message]) -> None:
    before = copy.deepcopy(messages)
    out, repairs = repair(messages)
    assert messages == before  # the input is not touched

    if any(m.role != "system" for m in out):
        openai_payload: list[dict[str, Any]] = to_openai(out)
        assert openai_errors(openai_payload) == [], openai_payload
        anthropic_payload = to_anthropic(out)
        assert anthropic_errors(anthropic_payload) == [], anthropic_payload
    else:
        # nothing conversational survived: each such input message was dropped, and said so
        reported = {r.index for r in repairs}
        assert all(i in reported for i, m in enumerate(messages) if m.role != "system")

    assert repair(out) == (out, [])  # idempotent

    for call, answer in _valid_pairs(messages):
        [at] = _where(out, call, "assistant")
        [answered_at] = _where(out, answer, "tool")
        assert at < answered_at
        assert all(m.role == "tool" for m in out[at + 1 : answered_at])

    # Nothing silently lost: every input result is in the output or in a repair record.
    given_results = sum(isinstance(p, ToolResult) for m in messages for p in m.parts)
    kept = sum(
        isinstance(p, ToolResult)
        for m in out
        if m.metadata.get("precis_repair") != "add-missing-result"
        for p in m.parts
    )
    dropped = sum(
        len(r.parts) for r in repairs if r.action in ("drop-orphan-result", "drop-duplicate-result")
    )
    assert kept + dropped == given_results


def _spans(messages: list[Message]) -> list[tuple[int, int]]:
    """(call message, first result message) for each call id (ids are unique here)."""
    where_called = {
        p.id: i for i, m in enumerate(messages) for p in m.parts if isinstance(p, ToolCall)
    }
    spans: dict[str, tuple[int, int]] = {}
    for j, message in enumerate(messages):
        for p in message.parts:
            if isinstance(p, ToolResult) and p.call_id not in spans:
                i = where_called.get(p.call_id)
                if i is not None and i < j:
                    spans[p.call_id] = (i, j)
    return list(spans.values())


@FAST
@given(histories(unique_ids=True), st.data())
def test_window_start_never_splits_an_exchange(
    messages: list[Message], data: st.DataObject
) -> None:
    spans = _spans(messages)

    def splits(s: int) -> bool:
        return any(i < s <= j for i, j in spans)

    floor = next((i for i, m in enumerate(messages) if m.role != "system"), len(messages))
    start = data.draw(st.integers(0, len(messages) + 1))
    got = window_start(messages, start)
    proposed = min(max(start, floor), len(messages))
    assert floor <= got <= len(messages)
    assert not splits(got)
    if got <= proposed:  # the nearest valid start at or below the proposal
        assert all(splits(s) for s in range(got + 1, proposed + 1))
    else:  # none at or above the floor: the nearest one above
        assert all(splits(s) for s in range(floor, got))
