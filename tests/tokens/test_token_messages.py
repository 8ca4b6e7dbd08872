"""The message overhead model: framing per message, name, tool calls, images, priming."""

from __future__ import annotations

from pathlib import Path

import pytest

from precis.errors import TokenizerError
from precis.model import Conversation, Image, Message, Text, Thinking, ToolCall, ToolResult
from precis.tokens import (
    OPENAI_OVERHEAD,
    EstimatorCounter,
    MessageOverhead,
    TiktokenCounter,
    TokenCounter,
)


class CharCounter(TokenCounter):
    """A real (if silly) counter: one token per character. Makes the arithmetic visible."""

    name = "chars"

    def count(self, text: str) -> int:
        return len(text)


def test_published_openai_constants() -> None:
    # OpenAI Cookbook, "How to count tokens with tiktoken": 3 per message, 1 per name,
    # 3 to prime the reply; role names are one token each.
    assert OPENAI_OVERHEAD.per_message == 3
    assert OPENAI_OVERHEAD.per_name == 1
    assert OPENAI_OVERHEAD.reply_priming == 3
    assert OPENAI_OVERHEAD.per_role == 1


def test_text_message_arithmetic() -> None:
    counter = CharCounter()
    message = Message.of("user", "hello")  # 5 characters
    assert counter.count_message(message) == 3 + 1 + 5
    assert counter.count_messages([message]) == 3 + 1 + 5 + 3
    assert counter.count_messages([message, message]) == 2 * (3 + 1 + 5) + 3
    assert counter.count_messages([]) == 3


def test_a_name_costs_its_tokens_plus_exactly_one() -> None:
    counter = CharCounter()
    plain = Message.of("user", "hello")
    named = Message.of("user", "hello", name="bob")
    assert counter.count_message(named) - counter.count_message(plain) == len("bob") + 1


def test_every_part_kind_is_counted() -> None:
    counter = CharCounter()
    message = Message(
        role="assistant",
        parts=[
            Text("abc"),  # 3
            Thinking("think"),  # 5
            ToolCall(id="call_1", name="ls", arguments='{"a":1}'),  # 2 + 7 + 3 framing
            Image(url="https://example.com/cat.png", caption="a cat"),  # fixed 765
        ],
    )
    assert counter.count_message(message) == 3 + 1 + 3 + 5 + (2 + 7 + 3) + 765
    result = Message(role="tool", parts=[ToolResult(call_id="call_1", content="out")])
    assert counter.count_message(result) == 3 + 1 + 3


def test_overhead_can_be_replaced() -> None:
    chatml = MessageOverhead(per_message=4, per_role=1, reply_priming=3)
    counter = CharCounter()
    counter.overhead = chatml
    assert counter.count_message(Message.of("user", "hi")) == 4 + 1 + 2


def test_a_conversation_counts_like_its_messages() -> None:
    counter = EstimatorCounter()
    messages = [Message.of("system", "你是一个助手。"), Message.of("user", "Summarise this log.")]
    conv = Conversation(messages=messages)
    assert counter.count_messages(conv) == counter.count_messages(messages)
    assert counter.count_messages(messages) == sum(map(counter.count_message, messages)) + 3


def test_real_tokenizer_message_counts(shared_data: Path) -> None:
    file = shared_data / "tokenizers" / "cl100k_base.tiktoken"
    if not file.is_file():
        pytest.skip(f"{file} not found")
    counter = TiktokenCounter("cl100k_base", path=file)
    message = Message.of("user", "hello world")  # "hello", " world"
    assert counter.count_message(message) == 3 + 1 + 2
    assert counter.count_messages([message]) == 3 + 1 + 2 + 3
    named = Message.of("user", "hello world", name="example_user")
    assert counter.count_message(named) == counter.count_message(message) + counter.count(
        "example_user"
    ) + 1


def test_bad_message_contents_raise_tokenizer_errors() -> None:
    counter = CharCounter()
    with pytest.raises(TokenizerError, match="expected a precis Message"):
        counter.count_messages([{"role": "user", "content": "hi"}])  # type: ignore[list-item]
    broken = Message(role="user", parts=[Text(None)])  # type: ignore[arg-type]
    with pytest.raises(TokenizerError, match="message 1") as info:
        counter.count_messages([Message.of("user", "ok"), broken])
    assert "part 0 text is a NoneType" in str(info.value)
    with pytest.raises(TokenizerError, match="cannot count"):
        counter.count_message(Message(role="user", parts=["raw string"]))  # type: ignore[list-item]
    with pytest.raises(TokenizerError, match="cannot count tokens of a int"):
        EstimatorCounter().count(42)  # type: ignore[arg-type]


class RecordingCounter(CharCounter):
    """One token per character, and a record of every text it was asked to count."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def count(self, text: str) -> int:
        self.seen.append(text)
        return len(text)


def _repeated_messages() -> list[Message]:
    output = "line one\nline two\n" * 20  # 360 characters, read twice
    return [
        Message.of("user", "run it"),
        Message(role="assistant", parts=[ToolCall("c1", "bash", '{"cmd": "cat a.txt"}')]),
        Message(role="tool", parts=[ToolResult("c1", output)]),
        Message.of("user", "run it"),
        Message(role="assistant", parts=[ToolCall("c2", "bash", '{"cmd": "cat a.txt"}')]),
        Message(role="tool", parts=[ToolResult("c2", output)]),
        Message.of("assistant", "done", name="bot"),
    ]


def test_count_each_is_count_message_of_every_message() -> None:
    messages = _repeated_messages()
    # by hand: framing 3 + role 1 per message; a tool call adds 3; a name adds 1
    expected = [4 + 6, 4 + 3 + 4 + 20, 4 + 360, 4 + 6, 4 + 3 + 4 + 20, 4 + 360, 4 + 4 + 3 + 1]
    assert CharCounter().count_each(messages) == expected
    assert [CharCounter().count_message(m) for m in messages] == expected
    assert CharCounter().count_messages(messages) == sum(expected) + 3
    assert CharCounter().count_each([]) == []


def test_a_text_repeated_in_one_call_is_counted_once() -> None:
    messages = _repeated_messages()
    counter = RecordingCounter()
    counter.count_each(messages)
    assert sorted(counter.seen) == sorted(
        {"run it", "bash", '{"cmd": "cat a.txt"}', "line one\nline two\n" * 20, "done", "bot"})
    counter.seen.clear()
    assert counter.count_messages(messages) == sum(CharCounter().count_each(messages)) + 3
    assert len(counter.seen) == 6  # 11 texts, 6 distinct


def test_count_each_names_the_bad_message() -> None:
    broken = Message(role="user", parts=[Text(None)])  # type: ignore[arg-type]
    with pytest.raises(TokenizerError, match="message 1"):
        CharCounter().count_each([Message.of("user", "ok"), broken])


def test_real_tokenizer_counts_each_message_alike(shared_data: Path) -> None:
    file = shared_data / "tokenizers" / "o200k_base.tiktoken"
    if not file.is_file():
        pytest.skip(f"{file} not found")
    counter = TiktokenCounter("o200k_base", path=file)
    messages = _repeated_messages() * 40  # a batch large enough for any batching path
    each = counter.count_each(messages)
    assert each == [counter.count_message(m) for m in messages]
    assert counter.count_messages(messages) == sum(each) + 3
    texts = [p.text for m in messages for p in m.parts if isinstance(p, Text)] + ["你好，世界"]
    assert counter.count_batch(texts) == [counter.count(t) for t in texts]
    with pytest.raises(TokenizerError, match="cannot count tokens of a int"):
        counter.count_batch(["ok", 42])  # type: ignore[list-item]
