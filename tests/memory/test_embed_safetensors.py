"""The safetensors reader: hand-written files, good and malformed."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")

from precis.errors import EmbeddingError  # noqa: E402
from precis.memory.embed._safetensors import read_safetensors  # noqa: E402


def write(path: Path, header: object, data: bytes) -> Path:
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + data)
    return path


def test_reads_tensors_by_offset(tmp_path: Path) -> None:
    a = struct.pack("<6f", 1, 2, 3, 4, 5, 6)
    b = struct.pack("<2q", -7, 9)
    file = write(tmp_path / "t.safetensors", {
        "__metadata__": {"format": "pt"},
        "b": {"dtype": "I64", "shape": [2], "data_offsets": [24, 40]},
        "a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
    }, a + b)
    tensors = read_safetensors(file)
    assert sorted(tensors) == ["a", "b"]
    assert tensors["a"].dtype == np.float32
    assert tensors["a"].tolist() == [[1, 2, 3], [4, 5, 6]]
    assert tensors["b"].tolist() == [-7, 9]
    assert list(read_safetensors(file, ["b"])) == ["b"]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"", "shorter than its header"),
        (b"\x05\x00", "shorter than its header"),
        (struct.pack("<Q", 1000) + b"{}", "header length 1000"),
        (struct.pack("<Q", 4) + b"abcd", "header is not JSON"),
        (struct.pack("<Q", 2) + b"[]", "header is not an object"),
    ],
)
def test_malformed_files(tmp_path: Path, content: bytes, problem: str) -> None:
    file = tmp_path / "bad.safetensors"
    file.write_bytes(content)
    with pytest.raises(EmbeddingError, match=problem) as info:
        read_safetensors(file)
    assert info.value.where == str(file)


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}, "do not fit shape"),
        ({"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}, "do not fit shape"),
        ({"dtype": "Q7", "shape": [2], "data_offsets": [0, 8]}, "malformed header entry"),
        ({"dtype": "F32", "shape": "2", "data_offsets": [0, 8]}, "malformed header entry"),
        ({"dtype": "F32", "shape": [2]}, "malformed header entry"),
    ],
)
def test_malformed_entries(tmp_path: Path, entry: dict[str, object], problem: str) -> None:
    file = write(tmp_path / "bad.safetensors", {"w": entry}, b"\x00" * 8)
    with pytest.raises(EmbeddingError, match=problem):
        read_safetensors(file)


def test_missing_tensor_is_named(tmp_path: Path) -> None:
    file = write(tmp_path / "t.safetensors", {}, b"")
    with pytest.raises(EmbeddingError, match="tensor 'w' is missing"):
        read_safetensors(file, ["w"])


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match="cannot read model weights"):
        read_safetensors(tmp_path / "absent.safetensors")
