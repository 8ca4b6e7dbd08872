"""Bad and odd inputs at the reading stage: each gets a typed error naming the place."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from precis.errors import (
    EmptyInputError,
    EncodingError,
    FormatError,
    InputNotFoundError,
    InputTooLargeError,
    JSONSyntaxError,
    NestingTooDeepError,
)
from precis.formats import read_document


def write(tmp_path: Path, name: str, data: bytes | str) -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def test_json_document(tmp_path: Path) -> None:
    doc = read_document(write(tmp_path, "a.json", '[{"role": "user", "content": "hi"}]'))
    assert doc.kind == "json"
    assert doc.value == [{"role": "user", "content": "hi"}]


def test_jsonl_records_keep_their_line_numbers(tmp_path: Path) -> None:
    text = '{"a": 1}\n\n{"a": 2}\n{"a": 3}\n'
    doc = read_document(write(tmp_path, "a.jsonl", text))
    assert doc.kind == "jsonl"
    assert doc.value == [{"a": 1}, {"a": 2}, {"a": 3}]
    assert doc.line_numbers == [1, 3, 4]
    assert doc.where(1).endswith("a.jsonl line 3")


def test_text_document(tmp_path: Path) -> None:
    doc = read_document(write(tmp_path, "t.txt", "User: hi\nAssistant: hello\n"))
    assert doc.kind == "text"
    assert doc.text.startswith("User: hi")


def test_utf8_bom_is_dropped(tmp_path: Path) -> None:
    doc = read_document(write(tmp_path, "bom.json", b"\xef\xbb\xbf[1]"))
    assert doc.value == [1]


def test_malformed_json_reports_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.json", '[\n  {"role": "user",\n   "content": "x",}\n]')
    with pytest.raises(JSONSyntaxError) as info:
        read_document(path)
    err = info.value
    assert (err.line, err.column) == (3, 19)
    assert str(err).startswith(f"{path}:3:19: malformed JSON")


def test_malformed_jsonl_line_reports_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.jsonl", '{"a": 1}\n{"a": 2}\n{"a": oops}\n')
    with pytest.raises(JSONSyntaxError) as info:
        read_document(path)
    assert info.value.line == 3


def test_non_utf8_bytes_name_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, "latin1.txt", b"User: ok\nUser: caf\xe9\n")
    with pytest.raises(EncodingError, match=r"byte 0xe9 at line 2, column 10"):
        read_document(path)


def test_binary_file_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "blob.bin", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(EncodingError, match="binary"):
        read_document(path)


@pytest.mark.parametrize("content", ["", "   \n\t\n"])
def test_empty_input(tmp_path: Path, content: str) -> None:
    with pytest.raises(EmptyInputError):
        read_document(write(tmp_path, "empty.json", content))


def test_empty_data() -> None:
    with pytest.raises(EmptyInputError):
        read_document([])


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(InputNotFoundError, match="no such file"):
        read_document(tmp_path / "nope.json")
    with pytest.raises(InputNotFoundError, match="not a regular file"):
        read_document(tmp_path)


def test_500_mb_file_is_refused_before_reading(tmp_path: Path) -> None:
    # A sparse file: 500 MiB by size, no disk used. It must be refused from its size alone.
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as fh:
        fh.truncate(500 * 1024 * 1024)
    with pytest.raises(InputTooLargeError, match=r"500\.0 MiB, over the limit of 256\.0 MiB"):
        read_document(path)


def test_size_limit_is_configurable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRECIS_MAX_INPUT_BYTES", "10")
    with pytest.raises(InputTooLargeError):
        read_document(write(tmp_path, "a.json", '[{"role": "user"}]'))
    with pytest.raises(InputTooLargeError):
        read_document(io.BytesIO(b"[1, 2, 3, 4, 5, 6]"))


def test_stream_input() -> None:
    doc = read_document(io.BytesIO(b'{"messages": []}'), name="<stdin>")
    assert doc.source == "<stdin>"
    assert doc.value == {"messages": []}


def test_deeply_nested_json(tmp_path: Path) -> None:
    path = write(tmp_path, "deep.json", "[" * 100_000 + "]" * 100_000)
    with pytest.raises(NestingTooDeepError):
        read_document(path)


def test_deep_but_reasonable_json_is_fine(tmp_path: Path) -> None:
    value: object = "leaf"
    for _ in range(50):
        value = {"k": value}
    doc = read_document(write(tmp_path, "ok.json", json.dumps(value)))
    assert doc.kind == "json"


def test_lone_surrogate_escapes_become_replacement_characters(tmp_path: Path) -> None:
    # "\ud83d" cut from an emoji is valid JSON but not printable text.
    raw = '[{"role": "user", "content": "ok \\ud83d", "x": "\\ud83d\\ude00"}]'
    path = write(tmp_path, "cut.json", raw)
    value = read_document(path).value
    assert value[0]["content"] == "ok \ufffd"
    assert value[0]["x"] == "\U0001f600"  # a complete pair is kept
    value[0]["content"].encode("utf-8")  # printable / encodable


def test_huge_integer_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="cannot be read"):
        read_document(write(tmp_path, "big.json", "[" + "1" * 5000 + "]"))
    with pytest.raises(FormatError, match=r"\(line 2\)"):
        read_document(write(tmp_path, "big.jsonl", '{"a": 1}\n{"a": ' + "1" * 5000 + "}\n"))
