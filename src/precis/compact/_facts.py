"""Exact facts in a text: URLs, paths, commands, identifiers, numbers, error names.

These are what a summary must carry verbatim (the quality check counts them) and what a cut
may never split (the digest keeps them whole). One regular-expression pass per text.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["FACT_KINDS", "Fact", "facts"]

FACT_KINDS = ("url", "path", "command", "identifier", "number", "error")

_PATTERN = re.compile(
    r"(?P<url>\b(?:https?|ftp|file|s3|gs)://[^\s`'\"<>)\]}，。）]+)"
    r"|`(?P<command>[^`\s][^`\n]{0,118}[^`\s])`"
    r"|(?P<error>\b[A-Z][A-Za-z]*(?:Error|Exception|Warning)\b)"
    r"|(?P<path>(?<![\w.~@/:-])(?:~|\.{1,2})?(?:/[\w.@~+-]+){2,}/?"
    r"|(?<![\w/.-])[\w.-]+(?:/[\w.@+-]+)+\.[A-Za-z0-9]{1,6}\b"
    r"|(?<![\w/.-])[\w-]+\.(?:py|js|ts|tsx|jsx|json|jsonl|md|sql|ya?ml|toml|go|rs|java|c|h|cpp"
    r"|csv|txt|sh|ini|cfg|lock|html|css|rb|php|kt|swift|xml|env|log)\b)"
    r"|(?P<identifier>\b[0-9a-f]{7,40}\b(?=[^\w]|$)"
    r"|\b[A-Z][A-Z0-9]+-\d+\b"
    r"|\b(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{5,}\b"
    r"|(?<!\\)\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b"
    r"|(?<!\\)\b[a-z]+[A-Z][A-Za-z0-9]*\b"
    r"|(?<![\w/.-])(?=[a-z0-9-]*\d)[a-z][a-z0-9]*(?:-[a-z0-9]+)+\b"  # k8s-prod-eu, us-east-1
    r"|--[a-z][\w-]+)"
    r"|(?P<number>(?<![\w.])\d+(?:[.,:]\d+)+%?|(?<![\w.])\d{2,}%?|(?<![\w.])\d%)"
)


class Fact(NamedTuple):
    kind: str
    text: str
    start: int
    end: int


def facts(text: str) -> list[Fact]:
    """The exact facts of ``text`` in order (kinds: :data:`FACT_KINDS`)."""
    out: list[Fact] = []
    for m in _PATTERN.finditer(text):
        kind = m.lastgroup or "identifier"
        value = m.group(kind)
        if kind == "identifier" and text.startswith('":', m.end()):
            continue  # a JSON key names a field; it is not a fact
        if kind == "url":
            value = value.rstrip(".,;:!?")
        elif kind == "number" and value.endswith((",", ".", ":")):
            value = value[:-1]
        start = m.start(kind)
        out.append(Fact(kind, value, start, start + len(value)))
    return out
