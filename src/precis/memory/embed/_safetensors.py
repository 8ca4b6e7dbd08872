"""Read a ``.safetensors`` file into numpy arrays, without the ``safetensors`` package.

Layout: an 8-byte little-endian header length ``n``, ``n`` bytes of JSON
(``{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}``), then
the raw little-endian tensor data (offsets are relative to its start). The file is memory-
mapped: tensors are read-only views, loaded from disk when touched.
"""

from __future__ import annotations

import json
import mmap
import struct
from collections.abc import Iterable
from math import prod
from pathlib import Path
from typing import Any

import numpy as np

from precis.errors import EmbeddingError

__all__ = ["read_safetensors"]

_DTYPES = {
    "F64": "<f8", "F32": "<f4", "F16": "<f2",
    "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "i1", "U8": "u1", "BOOL": "?",
}
_MAX_HEADER = 100 * 1024 * 1024


def read_safetensors(
    path: Path, names: Iterable[str] | None = None
) -> dict[str, np.ndarray[Any, Any]]:
    """The tensors of ``path`` (only ``names`` if given), as read-only arrays.

    Raises :class:`~precis.errors.EmbeddingError` naming the file for anything malformed.
    """
    where = str(path)
    try:
        with path.open("rb") as handle:
            buffer: bytes | mmap.mmap = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except ValueError:  # an empty file cannot be mapped
        buffer = b""
    except OSError as exc:
        problem = exc.strerror or str(exc)
        raise EmbeddingError(f"cannot read model weights: {problem}", where=where) from None
    if len(buffer) < 8:
        raise EmbeddingError("not a safetensors file (shorter than its header)", where=where)
    (size,) = struct.unpack("<Q", buffer[:8])
    if size > min(_MAX_HEADER, len(buffer) - 8):
        raise EmbeddingError(f"not a safetensors file (header length {size})", where=where)
    try:
        header = json.loads(bytes(buffer[8 : 8 + size]))
    except (UnicodeDecodeError, ValueError):
        raise EmbeddingError("not a safetensors file (header is not JSON)", where=where) from None
    if not isinstance(header, dict):
        raise EmbeddingError("not a safetensors file (header is not an object)", where=where)
    start = 8 + size
    wanted = set(header) - {"__metadata__"} if names is None else set(names)
    tensors: dict[str, np.ndarray[Any, Any]] = {}
    for name in sorted(wanted):
        if name not in header:
            raise EmbeddingError(f"tensor {name!r} is missing", where=where)
        tensors[name] = _tensor(buffer, start, name, header[name], where)
    return tensors


def _tensor(
    buffer: bytes | mmap.mmap, start: int, name: str, info: Any, where: str
) -> np.ndarray[Any, Any]:
    try:
        dtype = np.dtype(_DTYPES[info["dtype"]])
        if not isinstance(info["shape"], list):
            raise TypeError
        shape = tuple(int(n) for n in info["shape"])
        begin, end = (int(n) for n in info["data_offsets"])
    except (KeyError, TypeError, ValueError):
        raise EmbeddingError(f"tensor {name!r} has a malformed header entry", where=where) from None
    count = prod(shape)
    if (
        any(n < 0 for n in shape)
        or not 0 <= begin <= end
        or end - begin != count * dtype.itemsize
        or start + end > len(buffer)
    ):
        raise EmbeddingError(
            f"tensor {name!r}: offsets {begin}..{end} do not fit shape {list(shape)} "
            f"of {info['dtype']} in a file of {len(buffer)} bytes",
            where=where,
        )
    return np.frombuffer(buffer, dtype=dtype, count=count, offset=start + begin).reshape(shape)
