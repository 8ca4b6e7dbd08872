"""segment(): rounds, ids, roles, provenance, languages, and the non-text parts."""

from __future__ import annotations

import importlib

import precis
from precis.model import Conversation, Image, Message, Text, Thinking, ToolCall, ToolResult
from precis.segment import (
    TOOL_RESULT_CHUNK_CHARS,
    Fragment,
    Provenance,
    Round,
    Segmentation,
    chunk_lines,
    detect_language,
    segment,
)


def conv(*messages: Message) -> Conversation:
    return Conversation(messages=list(messages))


def source_text(c: Conversation, f: Fragment) -> str:
    p = f.provenance
    return c.messages[p.message].parts[p.part].text[p.start : p.end]


def test_public_names() -> None:
    # ``precis.segment`` is the function (re-exported by precis/__init__), so reach the
    # package through importlib.
    package = importlib.import_module("precis.segment")
    assert precis.segment is segment is package.segment
    assert precis.Fragment is Fragment and precis.Provenance is Provenance
    assert precis.Round is Round and precis.Segmentation is Segmentation
    assert set(package.__all__) >= {
        "Fragment",
        "Provenance",
        "Round",
        "Segmentation",
        "segment",
        "split_text",
    }


def test_empty_conversation() -> None:
    assert segment(conv()) == Segmentation(rounds=(), fragments=())


def test_same_speaker_runs_merge_into_rounds() -> None:
    c = conv(
        Message.of("system", "Be brief."),
        Message.of("user", "第一条需求。"),
        Message.of("user", "补充一点。"),
        Message.of("user", "再补充。"),
        Message.of("assistant", "OK."),
        Message.of("assistant", "Done."),
        Message("tool", [ToolResult("c1", "ok")]),
        Message("tool", [ToolResult("c2", "ok")]),
        Message.of("user", "Thanks."),
    )
    assert segment(c).rounds == (
        Round(0, "system", (0,)),
        Round(1, "user", (1, 2, 3)),
        Round(2, "assistant", (4, 5)),
        Round(3, "tool", (6, 7)),
        Round(4, "user", (8,)),
    )


def test_messages_without_text_still_belong_to_rounds() -> None:
    c = conv(Message.of("user", "Hi."), Message.of("user", "   "), Message.of("assistant", ""))
    seg = segment(c)
    assert seg.rounds == (Round(0, "user", (0, 1)), Round(1, "assistant", (2,)))
    assert [f.text for f in seg.fragments] == ["Hi."]


def test_ids_roles_and_provenance() -> None:
    c = conv(
        Message.of("user", "First. Second."),
        Message.of("user", "  Third.  "),
        Message.of("assistant", "# Answer\n\n- one\n- two"),
    )
    seg = segment(c)
    got = [(f.id, f.kind, f.text, f.role, f.provenance) for f in seg.fragments]
    assert got == [
        ("S1", "sentence", "First.", "user", Provenance(0, 0, 0, 0, 6)),
        ("S2", "sentence", "Second.", "user", Provenance(0, 0, 0, 7, 14)),
        ("S3", "sentence", "Third.", "user", Provenance(0, 1, 0, 2, 8)),
        ("S4", "heading", "# Answer", "assistant", Provenance(1, 2, 0, 0, 8)),
        ("S5", "list_item", "- one", "assistant", Provenance(1, 2, 0, 10, 15)),
        ("S6", "list_item", "- two", "assistant", Provenance(1, 2, 0, 16, 21)),
    ]
    for f in seg.fragments:
        assert source_text(c, f) == f.text


def test_fragment_ids_follow_conversation_order_across_parts() -> None:
    c = conv(
        Message(
            "assistant", [Text("Yes. No."), ToolCall("c1", "run", '{"cmd": "ls"}'), Text("C.")]
        ),
        Message("tool", [ToolResult("c1", "file.txt")]),
    )
    seg = segment(c)
    assert [f.id for f in seg.fragments] == [f"S{i}" for i in range(1, 6)]
    order = [(f.provenance.message, f.provenance.part, f.provenance.start) for f in seg.fragments]
    assert order == sorted(order)
    assert [f.kind for f in seg.fragments] == [
        "sentence",
        "sentence",
        "tool_call",
        "sentence",
        "tool_result",
    ]


def test_tool_call_is_one_fragment_over_its_arguments() -> None:
    c = conv(Message("assistant", [ToolCall("c1", "search", ' {"q": "天气", "n": 3} ')]))
    (f,) = segment(c).fragments
    assert (f.kind, f.text, f.language) == ("tool_call", '{"q": "天气", "n": 3}', "code")
    assert f.provenance == Provenance(0, 0, 0, 1, 20)
    assert source_text(c, f) == f.text


def test_tool_call_without_arguments_gives_no_fragment() -> None:
    assert segment(conv(Message("assistant", [ToolCall("c1", "now", "")]))).fragments == ()


def test_short_tool_result_is_one_fragment() -> None:
    c = conv(Message("tool", [ToolResult("c1", "Error: file not found\n")]))
    (f,) = segment(c).fragments
    assert (f.kind, f.text, f.role, f.language) == (
        "tool_result",
        "Error: file not found",
        "tool",
        "en",
    )


def test_long_tool_result_is_chunked_at_line_breaks() -> None:
    lines = [f"line {i:04d} " + "x" * 40 for i in range(200)]  # 50 chars + newline each
    content = "\n".join(lines)
    c = conv(Message("tool", [ToolResult("c1", content)]))
    frags = segment(c).fragments
    assert len(frags) == 6  # 200 lines of 51 chars: 39 lines fit in 2000 characters
    assert all(f.kind == "tool_result" for f in frags)
    assert all(len(f.text) <= TOOL_RESULT_CHUNK_CHARS for f in frags)
    assert "\n".join(f.text for f in frags) == content  # cut only at line breaks, nothing lost
    assert frags[0].text.split("\n") == lines[:39]
    for f in frags:
        assert source_text(c, f) == f.text


def test_chunk_lines_cuts_a_long_line_at_a_space_or_hard() -> None:
    text = "word " * 1000  # one 5000-character line
    spans = chunk_lines(text, 2000)
    assert [e - s for s, e in spans] == [1999, 1999, 999]
    assert [text[s:e] for s, e in spans] == ["word " * 399 + "word"] * 2 + ["word " * 199 + "word"]
    assert chunk_lines("x" * 4500, 2000) == [(0, 2000), (2000, 4000), (4000, 4500)]
    assert chunk_lines("   \n  ", 2000) == []


def test_thinking_is_split_like_text_with_kind_thinking() -> None:
    thought = "Let me think. The user wants X.\n\n```py\nx = 1\n```\n\n- option a"
    c = conv(Message("assistant", [Thinking(thought), Text("Sure.")]))
    got = [(f.kind, f.text) for f in segment(c).fragments]
    assert got == [
        ("thinking", "Let me think."),
        ("thinking", "The user wants X."),
        ("code", "```py\nx = 1\n```"),
        ("thinking", "- option a"),
        ("sentence", "Sure."),
    ]


def test_redacted_thinking_is_one_fragment() -> None:
    c = conv(Message("assistant", [Thinking("opaque. DATA. here", redacted=True)]))
    assert [(f.kind, f.text) for f in segment(c).fragments] == [("thinking", "opaque. DATA. here")]


def test_images() -> None:
    c = conv(Message("user", [Image(url="http://x/cat.png", caption="一只猫"), Image()]))
    frags = segment(c).fragments
    assert [(f.kind, f.text, f.language) for f in frags] == [
        ("image", "[image: 一只猫]", "zh"),
        ("image", "[image]", "none"),
    ]
    for f in frags:
        assert source_text(c, f) == f.text


def test_languages() -> None:
    c = conv(
        Message.of(
            "user",
            "今天很好。\n"
            "Hello there.\n"
            "我们用 FastAPI 和 PostgreSQL 写 REST API\n"
            "使用 Python 实现。\n"
            "12345 !!!\n"
            "👍\n"
            "```\nprint(1)\n```",
        )
    )
    got = [(f.text, f.language) for f in segment(c).fragments]
    assert got == [
        ("今天很好。", "zh"),
        ("Hello there.", "en"),
        ("我们用 FastAPI 和 PostgreSQL 写 REST API", "mixed"),  # 5 Han vs 4 words * 1.5
        ("使用 Python 实现。", "zh"),  # 4 Han vs 1 word * 1.5: 0.73
        ("12345 !!!", "none"),
        ("👍", "none"),
        ("```\nprint(1)\n```", "code"),
    ]


def test_detect_language_directly() -> None:
    assert detect_language("") == "none"
    assert detect_language("Ünïcödé wörds") == "en"
    assert detect_language("The word 你好 means hello") == "en"  # 2 Han vs 4 words * 1.5
    assert detect_language("中文 and English 混合") == "mixed"  # 4 Han vs 2 words * 1.5


def test_fragments_cover_every_visible_character() -> None:
    text = '# T\n\nA. B!\n- x\n\n```\ncode\n```\n| a | b |\n|---|---|\n\n{"k": 1}\n中文。好'
    c = conv(Message.of("user", text))
    covered = [False] * len(text)
    for f in segment(c).fragments:
        p = f.provenance
        for i in range(p.start, p.end):
            covered[i] = True
    assert all(covered[i] or ch.isspace() for i, ch in enumerate(text))


def test_a_repeated_text_gives_the_same_fragments_in_its_new_place() -> None:
    text = "We use Postgres. It runs on RDS.\n\n```sql\nSELECT 1;\n```\n\n- keep backups"
    output = "ok\n" * 900  # a tool result long enough to be chunked
    c = conv(
        Message.of("user", text),
        Message(role="assistant", parts=[ToolCall("c1", "sql", '{"q": 1}')]),
        Message(role="tool", parts=[ToolResult("c1", output)]),
        Message(role="assistant", parts=[Thinking(text), Text(text)]),
        Message.of("user", text),
        Message(role="tool", parts=[ToolResult("c1", output)]),
        Message(role="assistant", parts=[Thinking(text, redacted=True)]),
    )
    seg = segment(c)
    for f in seg.fragments:
        assert source_text(c, f) == f.text
    assert [f.id for f in seg.fragments] == [f"S{n}" for n in range(1, len(seg.fragments) + 1)]

    def shape(message: int, part: int) -> list[tuple[str, str, str, str | None, int, int]]:
        return [(f.kind, f.text, f.language, f.lang_hint, f.provenance.start, f.provenance.end)
                for f in seg.fragments
                if f.provenance.message == message and f.provenance.part == part]

    first = shape(0, 0)
    assert [k for k, *_ in first] == ["sentence", "sentence", "sql", "list_item"]
    assert shape(4, 0) == first  # the same text said again
    assert shape(3, 1) == first  # ... and in an assistant message
    assert shape(5, 0) == shape(2, 0) and len(shape(2, 0)) > 1  # the same output, chunked
    thinking = shape(3, 0)  # the same text as reasoning: prose kinds become "thinking"
    assert [k for k, *_ in thinking] == ["thinking", "thinking", "sql", "thinking"]
    assert [k for k, *_ in shape(6, 0)] == ["thinking"]  # redacted: one fragment
    assert {f.role for f in seg.fragments if f.provenance.message == 4} == {"user"}
    assert {f.role for f in seg.fragments if f.provenance.message == 3} == {"assistant"}
