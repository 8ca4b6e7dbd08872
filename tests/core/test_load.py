"""precis.load / load_all: detection, collections and selection across formats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import precis
from precis.errors import ConfigError, SelectionError, UnknownFormatError


def _write(tmp_path: Path, name: str, value: object) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
    return path


def test_load_from_python_data() -> None:
    conv = precis.load([{"role": "user", "content": "hi"},
                        {"role": "assistant", "content": "hello"}])
    assert [m.role for m in conv] == ["user", "assistant"]
    assert conv.source_format == "openai"


def test_collection_requires_pick(tmp_path: Path) -> None:
    lines = [{"id": f"c{i}", "messages": [{"role": "user", "content": f"question {i}"}]}
             for i in range(3)]
    path = tmp_path / "many.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    coll = precis.load_all(path)
    assert len(coll) == 3
    assert [i.id for i in coll.infos()] == ["c0", "c1", "c2"]
    with pytest.raises(SelectionError, match="holds 3 conversations"):
        precis.load(path)
    assert precis.load(path, pick=1)[0].text == "question 1"
    assert precis.load(path, pick="c2")[0].text == "question 2"
    assert precis.load(path, pick="0")[0].text == "question 0"
    with pytest.raises(SelectionError, match="out of range"):
        precis.load(path, pick=3)
    with pytest.raises(SelectionError, match="no conversation has id 'zz'"):
        precis.load(path, pick="zz")


def test_forced_format(tmp_path: Path) -> None:
    path = _write(tmp_path, "x.json", [{"role": "user", "content": "hi"}])
    assert precis.load(path, format="openai")[0].text == "hi"
    with pytest.raises(UnknownFormatError, match="unknown format 'nope'"):
        precis.load(path, format="nope")


def test_json_in_no_known_format(tmp_path: Path) -> None:
    path = _write(tmp_path, "x.json", {"hello": [1, 2, 3]})
    with pytest.raises(UnknownFormatError, match="no known conversation format"):
        precis.load(path)


def test_text_in_no_known_format(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("just some notes\nwith no speakers\n", encoding="utf-8")
    with pytest.raises(UnknownFormatError):
        precis.load(path)


def test_cut_history_loads_with_warnings() -> None:
    conv = precis.load([
        {"role": "tool", "tool_call_id": "call_gone", "content": "42"},
        {"role": "user", "content": "go on"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_new", "type": "function",
             "function": {"name": "run", "arguments": "{}"}}]},
    ])
    assert len(conv) == 3
    assert any("call_gone" in w and "message 0" in w for w in conv.warnings)
    assert any("call_new" in w and "no result" in w for w in conv.warnings)


def test_bundled_example_loads() -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "coding_session.json"
    conv = precis.load(example)
    assert conv.source_format == "openai"
    assert conv[0].role == "system"
    assert conv.warnings == []
    calls = [c for m in conv for c in m.tool_calls]
    assert [c.name for c in calls] == ["read_file", "run_sql", "write_file", "run", "run"]


def test_third_party_format_registration() -> None:
    from precis.formats import ConversationFormat, Document, formats, register_format
    from precis.model import Conversation, Message

    class Lines(ConversationFormat):
        name = "test-lines"
        description = "one user message per line (test format)"

        def sniff(self, doc: Document) -> float:
            return 0.0  # only when forced

        def parse(self, doc: Document) -> list[Conversation]:
            return [Conversation([Message.of("user", x) for x in doc.text.splitlines() if x])]

    register_format(Lines(), replace=True)
    assert "test-lines" in formats() and "openai" in formats()
    conv = precis.load(b"first\nsecond\n", format="test-lines")
    assert [m.text for m in conv] == ["first", "second"]
    with pytest.raises(ConfigError, match="already registered"):
        register_format(Lines())
    original = formats()["openai"]
    with pytest.raises(ConfigError, match="'openai' is already registered"):
        register_format(type("Fake", (Lines,), {"name": "openai"})())
    assert formats()["openai"] is original
