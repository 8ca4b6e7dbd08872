"""The fast paths of ``precis.tokens.lines``: cutting a text into its lines by splitting at
line breaks gives the pieces the zero-width cut gave, and ``LineMemo.count_messages`` gives
the counter's own figure for a message list."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import pytest

import precis
from precis.model import Message, Text, ToolCall, ToolResult
from precis.tokens import TiktokenCounter, TokenCounter, get_counter
from precis.tokens.lines import LineMemo, _pieces

# the cut as a zero-width split: after a line break, before a letter, digit or - # [ * ` (
_ZERO_WIDTH_CUT = re.compile(r"(?<=\n)(?=[^\W_]|[-#\[*`(])")


@pytest.mark.parametrize("text", [
    "",
    "one line",
    "\n",
    "\n\n",
    "ends with a break\n",
    "\nstarts with a break",
    "- a\n- b\n\n## Title\n- c [S1]\n",
    "a\n  indented\n\tcode\n_private\n/usr/bin\n(x)\n`y`\n*z*\n[1]\n#h\n",
    "第一行\n第二行\n（括号）\n- 列表\n",
    "\r\nwindows\r\nlines\r\n",
    "x\n\n\n\ny",
])
def test_pieces_are_the_zero_width_cut(text: str) -> None:
    assert _pieces(text) == _ZERO_WIDTH_CUT.split(text)
    assert "".join(_pieces(text)) == text


def test_pieces_keep_their_line_break() -> None:
    # by hand: cut before "b" and "## T"; not before the space of "  c" nor the break
    assert _pieces("a\nb\n  c\n\n## T") == ["a\n", "b\n  c\n\n", "## T"]


def _o200k(shared_data: Path) -> TiktokenCounter:
    path = shared_data / "tokenizers" / "o200k_base.tiktoken"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return TiktokenCounter("o200k_base", path=path)


def _summary_message(lines: Iterable[str]) -> Message:
    return Message("user", [Text("\n".join(lines))], metadata={"precis": "summary"})


def test_count_messages_matches_the_counter_on_real_messages(shared_data: Path) -> None:
    counter = _o200k(shared_data)
    path = shared_data / "transcripts" / "claude-code" / "python-to-rust-port.transcript.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    messages = precis.load(path).messages[:200]
    results = [p.content for m in messages for p in m.parts if isinstance(p, ToolResult)]
    assert any(len(r) >= 2000 for r in results)  # long texts go line by line
    long = _summary_message(f"- item {n}: `src/mod_{n}.rs` builds [S{n}]" for n in range(400))
    memo = LineMemo(counter)
    for batch in (messages, [long], [*messages[:20], long, *messages[20:40]], []):
        assert memo.count_messages(batch) == counter.count_messages(batch)
    # counted again: from the remembered lines, the same figure
    assert memo.count_messages([long]) == counter.count_messages([long])


def test_count_messages_counts_names_calls_and_results(shared_data: Path) -> None:
    counter = _o200k(shared_data)
    messages = [
        Message("user", [Text("run it\n" * 400)], name="alice"),
        Message("assistant", [ToolCall("c1", "bash", '{"command": "ls -la"}')]),
        Message("tool", [ToolResult("c1", "a.py\nb.py\n" * 300)]),
    ]
    assert LineMemo(counter).count_messages(messages) == counter.count_messages(messages)


class _Words(TokenCounter):
    """One token per word; says its lines add up, and frames every list with 100 tokens."""

    name = "words"
    lines_add_up = True

    def count(self, text: str) -> int:
        return len(text.split())

    def count_messages(self, messages: Iterable[Message]) -> int:
        return 100 + sum(self.count(m.text) for m in messages)


def test_a_counter_with_its_own_count_messages_is_asked_itself() -> None:
    counter = _Words()
    messages = [Message.of("user", "three short words"), Message.of("assistant", "two more")]
    assert LineMemo(counter).count_messages(messages) == 100 + 3 + 2


def test_a_counter_whose_lines_may_not_add_up_counts_the_list_itself() -> None:
    counter = get_counter("estimate")
    messages = [_summary_message(f"- line {n} [S{n}]" for n in range(300))]
    assert LineMemo(counter).count_messages(messages) == counter.count_messages(messages)
