"""Plain-text transcript reader: prefixes, exact text, preamble, fences, detection."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import precis
from precis.errors import FormatError, PrecisError, UnknownFormatError
from precis.formats import Document, read_document
from precis.formats.transcript import TranscriptFormat

FMT = TranscriptFormat()


def _text_doc(text: str) -> Document:
    return Document(source="<t>", kind="text", value=None, text=text)


def _parse(text: str) -> precis.Conversation:
    [conv] = FMT.parse(_text_doc(text))
    return conv


def test_english_transcript_with_preamble(fixtures: Path) -> None:
    doc = read_document(fixtures / "transcript" / "chat.txt")
    assert FMT.sniff(doc) == pytest.approx(0.8)
    [conv] = FMT.parse(doc)
    assert conv.title == "Planning the launch"
    assert [m.role for m in conv] == ["system", "user", "assistant", "user"]
    assert conv[0].text == "# Planning the launch"
    assert conv[0].metadata == {"preamble": True}
    assert conv[1].text == "Can you draft the launch checklist?\nIt should cover:\n\n- DNS\n- TLS"
    assert conv[2].text == (
        "Sure. Here is a draft:\n\n"
        "1. Point DNS at the load balancer.\n"
        "2. Renew the TLS certificate."
    )
    assert conv[3].text == "Thanks!"  # no space after the colon; case-insensitive prefix
    assert conv[3].metadata["speaker"] == "USER"


def test_chinese_prefixes_both_colons(fixtures: Path) -> None:
    conv = precis.load(fixtures / "transcript" / "zh.txt")
    assert conv.source_format == "transcript"
    assert [(m.role, m.text) for m in conv] == [
        ("system", "你是一个乐于助人的助手。"),
        ("user", "帮我把这句话翻译成英文：今天天气很好。"),
        ("assistant", "The weather is nice today."),
        ("user", "谢谢"),  # "用户： 谢谢": the one space after the colon is removed
    ]


def test_markdown_bold_fences_tool_and_timestamps(fixtures: Path) -> None:
    conv = precis.load(fixtures / "transcript" / "markdown.md")
    assert [m.role for m in conv] == ["user", "assistant", "tool", "user", "assistant"]
    assert conv[0].text == "How do I list files?"
    # the "User:" line inside the code block stays part of the assistant's message
    assert conv[1].text == (
        "Use `ls`. For example:\n\n```\nUser: this line is inside a code block\nls -la\n```"
    )
    assert conv[2].text == "total 0"
    assert conv[2].tool_results == []  # no call ids in plain text: kept as text
    assert conv[3].timestamp == "2024-05-01T10:00:00"
    assert conv[3].metadata == {"speaker": "Human", "raw_timestamp": "2024-05-01 10:00"}
    assert conv[4].text == "`ls -a` shows them too."
    assert conv[4].timestamp is None  # a time without a date is not a timestamp...
    assert conv[4].metadata["raw_timestamp"] == "10:02"  # ...but it is kept
    assert conv.warnings == []


def test_crlf_line_endings(fixtures: Path) -> None:
    conv = precis.load(fixtures / "transcript" / "crlf.txt")
    assert [(m.role, m.text) for m in conv] == [
        ("user", "Hello\r\nthere"),
        ("assistant", "Hi!"),
    ]


def test_named_speakers_are_not_a_transcript(fixtures: Path) -> None:
    path = fixtures / "transcript" / "no_speakers.txt"
    assert FMT.sniff(read_document(path)) == 0.0
    with pytest.raises(UnknownFormatError):
        precis.load(path)
    with pytest.raises(FormatError, match="no line starts with a known speaker prefix") as info:
        precis.load(path, format="transcript")
    assert info.value.where == str(path)


def test_only_one_following_space_is_removed() -> None:
    conv = _parse("User:   indented\n  code\nAssistant:\tok")
    assert conv[0].text == "  indented\n  code"
    assert conv[1].text == "\tok"


def test_leading_and_trailing_blank_lines_trimmed_inner_kept() -> None:
    conv = _parse("Assistant:\n\n  \nfirst\n\n\nsecond\n\n   \n\nUser: x")
    assert conv[0].text == "first\n\n\nsecond"
    assert conv[1].text == "x"


def test_empty_message_has_no_parts() -> None:
    conv = _parse("User:\nAssistant: hi")
    assert conv[0].parts == []
    assert conv[1].text == "hi"


def test_prefix_must_start_the_line() -> None:
    conv = _parse("User: the log said\n  Assistant: not a turn\nand User: neither")
    assert len(conv) == 1
    assert conv[0].text == "the log said\n  Assistant: not a turn\nand User: neither"


def test_unclosed_fence_does_not_swallow_the_rest() -> None:
    conv = _parse("User: ```\nstray fence\nAssistant: still a turn")
    assert [(m.role, m.text) for m in conv] == [
        ("user", "```\nstray fence"),
        ("assistant", "still a turn"),
    ]


def test_inline_triple_backticks_are_not_a_fence() -> None:
    conv = _parse("User: see\n```x``` inline\nAssistant: ok")
    assert [m.role for m in conv] == ["user", "assistant"]


def test_bold_outside_colon_and_ai_human() -> None:
    conv = _parse("**Human**: q\n**AI**：a")
    assert [(m.role, m.text, m.metadata["speaker"]) for m in conv] == [
        ("user", "q", "Human"),
        ("assistant", "a", "AI"),
    ]


def test_sniff_scores() -> None:
    assert FMT.sniff(_text_doc("User: just one speaker\nmore")) == pytest.approx(0.4)
    assert FMT.sniff(_text_doc("plain prose\nwith Users: 3")) == 0.0
    assert FMT.sniff(read_document([{"role": "user", "content": "User: hi"}])) == 0.0


def test_json_document_is_refused() -> None:
    with pytest.raises(FormatError, match="expected a plain-text transcript"):
        FMT.parse(read_document({"x": 1}))


_PREFIXES = st.sampled_from(
    [
        "", "", "User:", "user: ", "Assistant:", "**User:** ", "**AI**:", "System:", "Tool:",
        "Human:", "用户：", "助手:", "系统：", "[2024-05-01 10:00] User: ", "[x1] AI:", "Alice:",
    ]
)
_PIECES = st.sampled_from(
    ["```", "~~~", "\r", " ", "\t", "hello", "你好", "# Title", ":", "：", "*", "User:", "[1]"]
)
_LINE = st.tuples(
    _PREFIXES, st.lists(st.one_of(_PIECES, st.text(max_size=6)), max_size=5).map("".join)
).map("".join)
_TEXT = st.lists(_LINE, max_size=12).map("\n".join)


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_any_text_parses_or_raises_precis_error(text: str) -> None:
    try:
        conversations = FMT.parse(_text_doc(text))
    except PrecisError:
        return
    [conv] = conversations
    assert len(conv) >= 1
    for message in conv:
        assert message.role in ("system", "user", "assistant", "tool")
        for part in message.parts:
            assert part.text
            assert part.text in text


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=64) | _TEXT.map(lambda t: t.encode("utf-8")))
@example(b"User: hi\nAssistant: hello\n")
def test_any_bytes_load_or_raise_precis_error(data: bytes) -> None:
    try:
        conv = precis.load(data, format="transcript")
    except PrecisError:
        return
    assert len(conv) >= 1
    assert conv.source_format == "transcript"
    text = data.decode("utf-8")
    assert all(part.text in text for m in conv for part in m.parts)


def test_transcript_starting_with_a_timestamp_is_not_taken_for_json() -> None:
    data = b"[2024-05-01 10:00] User: hi\n[2024-05-01 10:01] Assistant: hello\n"
    conv = precis.load(data)
    assert conv.source_format == "transcript"
    assert [(m.role, m.text, m.timestamp) for m in conv] == [
        ("user", "hi", "2024-05-01T10:00:00"),
        ("assistant", "hello", "2024-05-01T10:01:00"),
    ]
    with pytest.raises(precis.JSONSyntaxError):
        precis.load(b'[{"role": "user", "content": "x",}]')
