"""``precis._gc.collector_paused``: the collector is off inside and as it was after."""

from __future__ import annotations

import gc

import pytest

from precis._gc import collector_paused
from precis.compact import compress
from precis.model import Message, Text


def test_the_collector_is_paused_inside_and_restored_after_even_on_error() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError), collector_paused():
        raise ValueError("boom")
    assert gc.isenabled()


def test_a_caller_that_disabled_the_collector_keeps_it_disabled() -> None:
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_compress_leaves_the_collector_as_it_found_it() -> None:
    messages = [Message(role="user" if i % 2 == 0 else "assistant",
                        parts=[Text(f"message {i} about the deploy of service {i}")])
                for i in range(30)]
    result = compress(messages, level="heavy")
    assert result.summary is not None
    assert gc.isenabled()
