"""Properties over generated text and conversations: no errors, exact spans, nothing lost."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from precis.model import Conversation, Image, Message, Part, Text, Thinking, ToolCall, ToolResult
from precis.segment import segment, split_text

# Pieces that exercise the rules, mixed with arbitrary characters (CJK, emoji, controls).
TOKENS = [
    "```",
    "```python\n",
    "~~~",
    "````",
    "`",
    "``",
    "\n",
    "\n\n",
    "\r\n",
    "    ",
    "\t",
    " ",
    "- ",
    "* ",
    "1. ",
    "2) ",
    "(a) ",
    "一、",
    "（一）",
    "①",
    "# ",
    "## ",
    "===",
    "---",
    "|",
    "| a | b |\n|---|---|\n",
    "。",
    "！",
    "？",
    "；",
    "…",
    "……",
    ".",
    "...",
    "! ",
    "? ",
    ". ",
    "“",
    "”",
    "（",
    "）",
    '"',
    "'",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ":",
    "：",
    ";",
    "SELECT * FROM t",
    "select a, b from t where x = 1;",
    "INSERT INTO t (a) VALUES (1);",
    "def f(x):",
    "import os",
    "x = 1",
    "$ ls",
    "e.g. ",
    "Mr. ",
    "U.S. ",
    "3.14",
    "v1.2.3",
    "https://x.y/z.html",
    "src/app/main.py",
    r"C:\dir\file.txt",
    "me@x.org",
    '{"a": [1, 2]}',
    "[1, 2]",
    "Traceback (most recent call last):",
    "ValueError: x",
    "中文句子",
    "English words",
    "Word",
    "word",
    "😀",
    "\x00",
    "\x1c",
    "\u2028",
    "\u3000",
    "\x85",
]
pieces = st.one_of(st.sampled_from(TOKENS), st.text(max_size=6))
texts = st.lists(pieces, max_size=40).map("".join)


def check_spans(text: str, spans: list[tuple[int, int]]) -> None:
    """In order, non-overlapping, stripped, non-empty, and covering every visible char."""
    prev_end = 0
    covered = bytearray(len(text))
    for s, e in spans:
        assert prev_end <= s < e <= len(text)
        piece = text[s:e]
        assert piece == piece.strip()
        covered[s:e] = b"\x01" * (e - s)
        prev_end = e
    lost = [i for i, ch in enumerate(text) if not covered[i] and not ch.isspace()]
    assert lost == [], f"characters not in any fragment: {[text[i] for i in lost]}"


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_split_text_spans_are_exact_ordered_and_complete(text: str) -> None:
    spans = split_text(text)
    for kind, _, _, hint in spans:
        assert isinstance(kind, str)
        assert hint is None or isinstance(hint, str)
    check_spans(text, [(s, e) for _, s, e, _ in spans])


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300))
def test_split_text_on_arbitrary_unicode(text: str) -> None:
    check_spans(text, [(s, e) for _, s, e, _ in split_text(text)])


def part_strategy() -> st.SearchStrategy[Part]:
    return st.one_of(
        texts.map(Text),
        texts.map(Thinking),
        st.builds(Thinking, texts, redacted=st.booleans()),
        st.builds(ToolCall, st.just("c1"), st.just("tool"), texts),
        st.builds(ToolResult, st.just("c1"), st.lists(pieces, max_size=400).map("".join)),
        st.builds(Image, caption=st.one_of(st.none(), texts)),
    )


messages = st.builds(
    Message,
    role=st.sampled_from(["system", "user", "assistant", "tool"]),
    parts=st.lists(part_strategy(), max_size=4),
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(messages, max_size=6))
def test_segment_invariants(msgs: list[Message]) -> None:
    conv = Conversation(messages=msgs)
    seg = segment(conv)

    # rounds: every message in exactly one round, in order, roles alternate between rounds
    flat = [m for r in seg.rounds for m in r.messages]
    assert flat == list(range(len(msgs)))
    for i, r in enumerate(seg.rounds):
        assert r.index == i
        assert all(msgs[m].role == r.role for m in r.messages)
        if i:
            assert seg.rounds[i - 1].role != r.role

    # fragments: ids in order, provenance reproduces the text, round and role agree
    by_part: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for n, f in enumerate(seg.fragments, 1):
        p = f.provenance
        assert f.id == f"S{n}"
        assert conv.messages[p.message].parts[p.part].text[p.start : p.end] == f.text
        assert p.message in seg.rounds[p.round].messages
        assert f.role == conv.messages[p.message].role
        assert f.language in {"zh", "en", "mixed", "none", "code"}
        by_part.setdefault((p.message, p.part), []).append((p.start, p.end))
    order = [(f.provenance.message, f.provenance.part, f.provenance.start) for f in seg.fragments]
    assert order == sorted(order)

    # nothing lost: every visible character of every part is in a fragment
    for mi, m in enumerate(msgs):
        for pi, part in enumerate(m.parts):
            check_spans(part.text, by_part.get((mi, pi), []))
