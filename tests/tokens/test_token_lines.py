"""Counting long texts line by line (``precis.tokens.lines.LineMemo``) gives the real count."""

from __future__ import annotations

from pathlib import Path

import pytest

import precis
from precis.model import ToolResult
from precis.tokens import TiktokenCounter, get_counter
from precis.tokens.lines import LineMemo

SOURCES = [
    "claude-code/python-to-rust-port.transcript.jsonl",
    "openai/swe-agent-marshmallow-1867.traj",
    "anthropic/bashkit-eval-claude-opus-4-7.json",
    "openai/openhands-multi-swe-bench.output.jsonl",
    "zh/sharegpt-zh-first500.jsonl",
]


def _texts(shared_data: Path) -> list[str]:
    """Real multi-line texts: tool output, code and prose of agent sessions, and the
    summaries precis writes of them (bullets, headings, citations)."""
    from precis.compact import compress

    texts: list[str] = []
    for name in SOURCES:
        path = shared_data / "transcripts" / name
        if not path.is_file():
            pytest.skip(f"{path} not found")
        found = precis.load_all(path)
        for conv in (found.pick(k) for k in range(min(5, len(found)))):
            texts.extend(t for m in conv.messages for t in (
                m.text, *(p.content for p in m.parts if isinstance(p, ToolResult)))
                if t.count("\n") > 3)
            result = compress(conv, level="light")
            if result.summary is not None:
                texts.append(result.summary.render())
    joined = "\n\n".join(texts)  # one long text, every kind of line meeting every other
    return [*texts, joined, joined.replace("\n", "\n\n\n"), joined.replace("\n", " \n")]


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_line_sums_equal_whole_counts_on_real_text(shared_data: Path, encoding: str) -> None:
    path = shared_data / "tokenizers" / f"{encoding}.tiktoken"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    counter = TiktokenCounter(encoding, path=path)
    assert counter.lines_add_up
    memo = LineMemo(counter)
    texts = _texts(shared_data)
    assert sum(len(t) for t in texts) > 200_000
    long = [t for t in texts if len(t) >= 2000]
    assert long
    for text in texts:
        assert memo(text) == counter.count(text)
    # counted again, a text is summed from remembered lines: the same figure
    assert [memo(t) for t in long] == [counter.count(t) for t in long]


@pytest.mark.parametrize("text", [
    "ok.\n/usr/bin/env python\n" * 200,  # o200k: "/" after punctuation and a line break
    "a\n  indented\n\tcode\n" * 300,
    "第一行\n第二行\n- 列表\n" * 300,
])
def test_lines_that_could_join_the_line_before_are_not_cut(shared_data: Path,
                                                           text: str) -> None:
    path = shared_data / "tokenizers" / "o200k_base.tiktoken"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    counter = TiktokenCounter("o200k_base", path=path)
    assert LineMemo(counter)(text) == counter.count(text)


def test_a_counter_whose_lines_may_not_add_up_counts_whole_texts() -> None:
    counter = get_counter("estimate")
    assert not counter.lines_add_up
    text = "- an item [S1]\n" * 500
    assert LineMemo(counter)(text) == counter.count(text)
