"""Segmentation of the real public sessions in ../shared/data (skipped when absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

import precis
from precis.segment import segment

pytestmark = pytest.mark.data

FILES = [
    "anthropic/bashkit-eval-claude-opus-4-7.json",
    "anthropic/python-to-rust-port.messages.json",
    "claude-code/marot-spotter.subagent-aa84377.jsonl",
    "claude-code/python-to-rust-port.transcript.jsonl",
    "openai/openhands-multi-swe-bench.output.jsonl",
    "openai/swe-agent-marshmallow-1867.traj",
    "openai/tau-bench-gpt-4o-airline-first100.json",
    "zh/sharegpt-zh-first500.jsonl",
]


@pytest.mark.parametrize("name", FILES)
def test_real_sessions_segment_exactly(shared_data: Path, name: str) -> None:
    collection = precis.load_all(shared_data / "transcripts" / name)
    total = 0
    for conv in collection.conversations:
        seg = segment(conv)
        covered: dict[tuple[int, int], bytearray] = {}
        for n, f in enumerate(seg.fragments, 1):
            p = f.provenance
            text = conv.messages[p.message].parts[p.part].text
            assert f.id == f"S{n}"
            assert text[p.start : p.end] == f.text
            mask = covered.setdefault((p.message, p.part), bytearray(len(text)))
            assert not any(mask[p.start : p.end])  # no overlap
            mask[p.start : p.end] = b"\x01" * (p.end - p.start)
        for mi, message in enumerate(conv.messages):
            for pi, part in enumerate(message.parts):
                mask = covered.get((mi, pi), bytearray(len(part.text)))
                assert all(mask[i] or ch.isspace() for i, ch in enumerate(part.text))
        total += len(seg.fragments)
    assert total > 0


def test_real_chinese_chat_is_mostly_chinese_sentences(shared_data: Path) -> None:
    collection = precis.load_all(shared_data / "transcripts" / "zh" / "sharegpt-zh-first500.jsonl")
    frags = [f for conv in collection.conversations[:50] for f in segment(conv).fragments]
    zh_sentences = [f for f in frags if f.kind == "sentence" and f.language == "zh"]
    assert len(zh_sentences) > len(frags) / 2
    # Chinese sentences end at Chinese punctuation, never in the middle of a number
    assert all(not f.text.endswith(("0.", "1.", "2.", "3.")) for f in zh_sentences)
