"""Adversarial inputs of about a megabyte finish quickly: no quadratic regex or loop.

A quadratic pass over 10**6 characters takes minutes; the linear one takes well under a
second, so a generous bound cannot flake and still catches a regression.
"""

from __future__ import annotations

import time

import pytest

from precis.model import Conversation, Message
from precis.segment import segment, split_text

SECONDS = 5.0

CASES = {
    "one long line": "a" * 1_000_000,
    "one long line of words": "word " * 200_000,
    "dots": "." * 1_000_000,
    "dotted token": "a." * 500_000,
    "dot space": ". " * 500_000,
    "ellipses": "… " * 300_000,
    "backticks": "`" * 1_000_000,
    "quotes": '"' * 1_000_000,
    "fence lines": "```\n" * 250_000,
    "unclosed fences": "```a\n" * 200_000,
    "list marker line": "- " * 500_000,
    "code-ish if": "if (" + "a." * 500_000,
    "code-ish import": "import " + "a." * 500_000,
    "pipes": "| " * 500_000,
    "select": "SELECT " * 200_000,
    "spaces then text": " " * 1_000_000 + "x",
    "blank lines": "\n" * 1_000_000,
    "abbreviations": "e.g. " * 200_000,
    "deep json": "[" * 500_000 + "]" * 500_000,
    "code lines": "x = 1;\n" * 150_000,
    "table rows": "|a|b|\n" * 200_000,
    "chinese colon sql": "：SELECT " * 100_000,
}


@pytest.mark.parametrize("name", list(CASES))
def test_adversarial_text_is_fast(name: str) -> None:
    text = CASES[name]
    start = time.perf_counter()
    spans = split_text(text)
    elapsed = time.perf_counter() - start
    assert elapsed < SECONDS, f"{name}: {elapsed:.1f}s"
    assert all(text[s:e].strip() == text[s:e] for _, s, e, _ in spans[:100])


@pytest.mark.parametrize(
    "sentence", ["This is a sentence. ", "这是一个句子。"], ids=["english", "chinese"]
)
def test_hundred_thousand_sentences(sentence: str) -> None:
    conv = Conversation(messages=[Message.of("user", sentence * 100_000)])
    start = time.perf_counter()
    seg = segment(conv)
    elapsed = time.perf_counter() - start
    assert len(seg.fragments) == 100_000
    assert seg.fragments[-1].id == "S100000"
    assert elapsed < SECONDS, f"{elapsed:.1f}s"
