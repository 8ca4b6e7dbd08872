"""Hostile values in input data: a list or an object where a name is expected, a lone
surrogate in Python data. precis reads the input or refuses it with a PrecisError; it never
crashes (issue 18, item 1), and text handed over as Python data is cleaned of lone
surrogates the way JSON text is."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

import precis
from precis.cli import main
from precis.compact import compress

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
import _fault_parsers as faults  # noqa: E402


def test_the_reproducer_of_the_issue_reads() -> None:
    conv = precis.load(b'[{"role":"user","content":"hi","type":[]}]')
    assert [(m.role, m.text) for m in conv] == [("user", "hi")]


@pytest.mark.parametrize("doc", [
    # openai.py's sniffing: a message "type" and a content part "type"
    [{"role": "user", "content": "hi", "type": []}],
    {"messages": [{"role": "user", "content": [{"type": {}, "text": "x"}]}]},
    [{"role": "user", "content": [{"type": ["text"], "text": "x"}]}],
    # nested.py: a block type inside a message list nested in an eval report
    {"results": [{"trace": {"messages": [
        {"role": "user", "content": [{"type": [], "text": "x"}]},
        {"role": "assistant", "content": "y"}]}}]},
    # claude_code.py: an entry type
    [{"type": [], "uuid": "u1", "sessionId": "s", "message": {"role": "user", "content": "x"}},
     {"type": "user", "uuid": "u2", "sessionId": "s", "message": {"role": "user",
                                                                  "content": "y"}}],
    # langchain.py: the class of a dumpd constructor
    [{"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", []],
      "kwargs": {"content": "hi"}}],
])
def test_a_list_or_object_where_a_name_is_expected(doc: Any) -> None:
    try:
        conv = precis.load(doc)
        precis.segment(conv)
        compress(conv, budget=200)
    except precis.PrecisError:
        pass


def test_the_runtime_takes_a_message_with_a_list_as_block_type() -> None:
    from precis.runtime import ContextMemory

    memory = ContextMemory(max_tokens=1000)
    memory.add({"role": "user", "content": [{"type": [], "text": "x"}, "y"]})
    assert memory.messages()[0].text == "y"


def test_the_cli_reads_the_reproducer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "typed.json"
    path.write_text('[{"role":"user","content":"hi","type":[]}]', encoding="utf-8")
    assert main(["inspect", str(path)]) == 0
    assert main(["compress", str(path), "-O", "openai"]) == 0
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    assert json.loads(out[out.index("["):]) == [{"role": "user", "content": "hi"}]


def test_lone_surrogates_in_python_data_become_replacement_characters() -> None:
    conv = precis.load([{"role": "user", "content": "cut \ud83d emoji"},
                        {"role": "assistant", "content": "pair \ud83d\ude00 joined"}])
    assert conv[0].text == "cut \ufffd emoji"
    assert conv[1].text == "pair \U0001f600 joined"
    conv[0].text.encode("utf-8")
    # as JSON text gets them: the same conversation either way
    text = json.dumps([{"role": "user", "content": "cut \ud83d emoji"}])
    assert precis.load(text.encode()).messages[0].text == conv[0].text


def test_a_conversation_of_empty_messages_is_refused_not_compacted_to_nothing() -> None:
    conv = precis.load([{"role": "user", "content": ""}])
    with pytest.raises(precis.EmptyInputError):
        compress(conv)


def test_every_field_of_every_fixture_made_hostile() -> None:
    """Each field of every format's fixtures replaced by one hostile value (each value
    taken in turn): load, segment and both exporters read it or raise a PrecisError."""
    pool = faults.seeds()
    bugs: list[str] = []
    cases = 0
    for name, value in pool:
        for n, path in enumerate(faults.field_paths(value)):
            hostile = faults.HOSTILE[n % len(faults.HOSTILE)]
            doc = faults.mutate(value, [(path, hostile)])
            outcome, detail = faults.check_document(doc, budget=None)
            cases += 1
            if outcome == "bug":
                bugs.append(f"{name} {path} <- {hostile!r:.20}: {detail}")
    assert cases > 1500
    assert bugs == []
