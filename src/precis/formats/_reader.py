"""Read an input (path, bytes, text or Python data) into a :class:`Document`, safely.

This is the only place precis touches raw input bytes. It enforces the size limit before
reading, refuses binary and non-UTF-8 data, and parses JSON or JSONL with errors that name
the line and column. Formats never see bytes, only a :class:`Document`.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal

from precis._surrogates import clean_data
from precis.errors import (
    EmptyInputError,
    EncodingError,
    FormatError,
    InputNotFoundError,
    InputTooLargeError,
    JSONSyntaxError,
    NestingTooDeepError,
)

__all__ = ["DEFAULT_MAX_INPUT_BYTES", "Document", "max_input_bytes", "read_document"]

DEFAULT_MAX_INPUT_BYTES = 256 * 1024 * 1024
"""Inputs larger than this are refused (override with ``PRECIS_MAX_INPUT_BYTES``)."""

DocumentKind = Literal["json", "jsonl", "text", "data"]

# A first line "[label] text ..." (no JSON punctuation in the brackets, text after them).
_BRACKETED_LINE = re.compile(r'\[[^\[\]{}"\n]*\][ \t]*[^\s,\]}:]')


@dataclass
class Document:
    """An input after decoding, before any format interprets it.

    ``kind`` is ``json`` (``value`` is the parsed value), ``jsonl`` (``value`` is the list of
    records and ``line_numbers`` their 1-based lines), ``text`` (``value`` is ``None``;
    read ``text``), or ``data`` (Python objects handed to :func:`precis.load`).
    """

    source: str
    kind: DocumentKind
    value: Any
    text: str = ""
    line_numbers: list[int] = field(default_factory=list)

    def where(self, record: int | None = None) -> str:
        """A location string for error messages: ``file.jsonl line 12`` or ``file.json``."""
        if record is not None and self.kind == "jsonl" and record < len(self.line_numbers):
            return f"{self.source} line {self.line_numbers[record]}"
        if record is not None:
            return f"{self.source} item {record}"
        return self.source


_BLOCK = 1 << 20


def max_input_bytes() -> int:
    raw = os.environ.get("PRECIS_MAX_INPUT_BYTES")
    if not raw:
        return DEFAULT_MAX_INPUT_BYTES
    try:
        value = int(raw)
    except ValueError:
        from precis.errors import ConfigError

        raise ConfigError(
            f"PRECIS_MAX_INPUT_BYTES must be a whole number of bytes, got {raw!r}"
        ) from None
    return value


def _human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover


def _read_limited(stream: BinaryIO, limit: int, source: str) -> bytes:
    # in blocks: one read(limit + 1) would reserve the whole limit (256 MiB) up front
    chunks: list[bytes] = []
    total = 0
    while total <= limit:
        block = stream.read(min(_BLOCK, limit + 1 - total))
        if not block:
            break
        chunks.append(block)
        total += len(block)
    data = b"".join(chunks)
    if len(data) > limit:
        raise InputTooLargeError(
            f"input is larger than the limit of {_human(limit)}; split it, or raise the "
            "limit with PRECIS_MAX_INPUT_BYTES",
            where=source,
        )
    return data


def _read_path(path: Path, limit: int) -> bytes:
    source = str(path)
    try:
        if not path.exists():
            raise InputNotFoundError("no such file", where=source)
        if not path.is_file():
            raise InputNotFoundError("not a regular file", where=source)
        size = path.stat().st_size
    except OSError as exc:  # a name too long, a path through a file, no permission ...
        raise InputNotFoundError(f"cannot read: {exc.strerror or exc}",
                                 where=source[:200]) from None
    if size > limit:
        raise InputTooLargeError(
            f"file is {_human(size)}, over the limit of {_human(limit)}; split it, or "
            "raise the limit with PRECIS_MAX_INPUT_BYTES",
            where=source,
        )
    try:
        with path.open("rb") as fh:
            return _read_limited(fh, limit, source)
    except OSError as exc:
        raise InputNotFoundError(f"cannot read: {exc.strerror or exc}", where=source) from None


def _decode(data: bytes, source: str) -> str:
    head = data[:8192]
    if b"\x00" in head:
        raise EncodingError(
            "binary data (NUL bytes): expected a UTF-8 text or JSON conversation file",
            where=source,
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise EncodingError(
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at line {line}, column {column});"
            " convert the file to UTF-8",
            where=source,
        ) from None
    return text[1:] if text.startswith("\ufeff") else text


# A UTF-16 surrogate escape without its partner ("\ud83d" cut from an emoji) is valid JSON
# but not text: Python would carry it as a lone surrogate that cannot be printed or encoded.
_LONE_SURROGATE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


def _json(text: str, source: str, line_offset: int = 0) -> Any:
    """``json.loads`` with every non-syntax failure turned into a precis error.

    Lone surrogate escapes become U+FFFD (same length, so error columns stay right).
    ``json.JSONDecodeError`` passes through: callers decide what a syntax error means.
    """
    if "\\ud" in text or "\\uD" in text:
        text = _LONE_SURROGATE.sub(r"\\ufffd", text)
    where_line = f" (line {line_offset + 1})" if line_offset else ""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise NestingTooDeepError(
            f"JSON is nested too deeply to be a conversation{where_line}", where=source
        ) from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        raise FormatError(f"JSON value cannot be read{where_line}: {exc}", where=source) from None


def _loads(text: str, source: str, line_offset: int = 0) -> Any:
    try:
        return _json(text, source, line_offset)
    except json.JSONDecodeError as exc:
        raise JSONSyntaxError(
            f"malformed JSON: {exc.msg}",
            line=exc.lineno + line_offset,
            column=exc.colno,
            source=source,
        ) from None


def _parse_jsonl(text: str, source: str) -> tuple[list[Any], list[int]]:
    records: list[Any] = []
    lines: list[int] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        records.append(_loads(line, source, line_offset=number - 1))
        lines.append(number)
    return records, lines


def _parse_text(text: str, source: str) -> Document:
    stripped = text.lstrip()
    if not stripped:
        raise EmptyInputError("input is empty", where=source)
    if stripped[0] not in "[{":
        return Document(source=source, kind="text", value=None, text=text)
    try:
        value = _json(text, source)
    except json.JSONDecodeError as exc:
        # "Extra data" after a complete first value: JSON Lines.
        if exc.msg == "Extra data" and stripped[0] == "{":
            records, lines = _parse_jsonl(text, source)
            return Document(
                source=source, kind="jsonl", value=records, text=text, line_numbers=lines
            )
        # "[2024-05-01 10:00] User: hi": a transcript with time stamps, not broken JSON.
        if _BRACKETED_LINE.match(stripped):
            return Document(source=source, kind="text", value=None, text=text)
        raise JSONSyntaxError(
            f"malformed JSON: {exc.msg}", line=exc.lineno, column=exc.colno, source=source
        ) from None
    return Document(source=source, kind="json", value=value, text=text)


def read_document(source: Any, *, name: str | None = None) -> Document:
    """Turn a path, ``bytes``, a binary stream or Python data into a :class:`Document`.

    ``str`` and :class:`os.PathLike` are paths. Lists and dicts are taken as already-parsed
    data. Raises an :class:`~precis.errors.InputError` subclass for every bad input.
    """
    limit = max_input_bytes()
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        return _parse_text(_decode(_read_path(path, limit), str(path)), str(path))
    if isinstance(source, (bytes, bytearray)):
        label = name or "<bytes>"
        if len(source) > limit:
            raise InputTooLargeError(
                f"input is {_human(len(source))}, over the limit of {_human(limit)}",
                where=label,
            )
        return _parse_text(_decode(bytes(source), label), label)
    if hasattr(source, "read"):
        label = name or getattr(source, "name", None) or "<stream>"
        data = _read_limited(source, limit, str(label))
        if isinstance(data, str):
            data = data.encode("utf-8")
        return _parse_text(_decode(data, str(label)), str(label))
    if isinstance(source, (list, dict)):
        if not source:
            raise EmptyInputError("input is empty", where=name or "<data>")
        # lone surrogates out, as JSON text gets them out in _json
        return Document(source=name or "<data>", kind="data", value=clean_data(source))
    from precis.errors import InputError

    raise InputError(
        f"cannot read a {type(source).__name__}: pass a path, bytes, a binary stream, "
        "or a list / dict of messages",
        where=name or "<data>",
    )
