"""Reading conversations: detect the format, parse, select one from a collection.

``load(source)`` gives one :class:`~precis.model.Conversation`; ``load_all(source)`` gives
every conversation a file holds (a :class:`Collection`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from precis.errors import SelectionError, UnknownFormatError
from precis.formats._checks import check_tool_pairs
from precis.formats._reader import Document, read_document
from precis.formats.base import ConversationFormat, formats, get_format, register_format
from precis.model import Conversation, ConversationInfo

__all__ = [
    "Collection",
    "ConversationFormat",
    "Document",
    "detect_format",
    "formats",
    "get_format",
    "load",
    "load_all",
    "read_document",
    "register_format",
]

@dataclass
class Collection:
    """Every conversation in one input, with the format that read them."""

    source: str
    format: str
    conversations: list[Conversation]

    def __len__(self) -> int:
        return len(self.conversations)

    def infos(self) -> list[ConversationInfo]:
        return [
            ConversationInfo(index=i, id=c.id, title=c.title, message_count=len(c),
                             preview=_preview(c))
            for i, c in enumerate(self.conversations)
        ]

    def pick(self, selector: int | str | None) -> Conversation:
        """One conversation: by 0-based index, or by id (an exact id match wins).

        With ``selector=None`` the input must hold exactly one conversation.
        """
        return self.conversations[self.resolve(selector)]

    def resolve(self, selector: int | str | None, *, option: str = "pick=",
                lister: str = "`precis inspect FILE`") -> int:
        """The 0-based index :meth:`pick` selects (raises :class:`SelectionError`).
        ``option`` is how the caller's user gives a selector (``"--pick "`` on the
        command line) and ``lister`` what lists the conversations, for the error message."""
        convs = self.conversations
        if selector is None:
            if len(convs) == 1:
                return 0
            ids = [c.id or str(i) for i, c in enumerate(convs[:5])]
            raise SelectionError(
                f"holds {len(convs)} conversations; choose one with {option}N (0-based "
                f"index) or {option}ID (e.g. {', '.join(ids)}{', ...' if len(convs) > 5 else ''}); "
                f"{lister} lists them",
                where=self.source,
            )
        if isinstance(selector, str):
            for index, conv in enumerate(convs):
                if conv.id == selector:
                    return index
            if not selector.strip().lstrip("-").isdigit():
                raise SelectionError(
                    f"no conversation has id {selector!r}", where=self.source
                )
            selector = int(selector)
        if isinstance(selector, bool) or not isinstance(selector, int):
            raise SelectionError(
                f"pick must be an index or an id, got {type(selector).__name__}",
                where=self.source,
            )
        if not 0 <= selector < len(convs):
            raise SelectionError(
                f"pick {selector} is out of range: the input holds {len(convs)} "
                f"conversation{'s' if len(convs) != 1 else ''} (0 to {len(convs) - 1})",
                where=self.source,
            )
        return selector


def _preview(conv: Conversation, chars: int = 80) -> str:
    """The first user message's text on one line, cut to ``chars`` characters."""
    for message in conv.messages:
        text = " ".join(message.text.split()) if message.role == "user" else ""
        if text:
            return text if len(text) <= chars else text[: chars - 1] + "…"
    return ""


def detect_format(doc: Document) -> ConversationFormat:
    """The registered format most sure that ``doc`` is its own."""
    best: tuple[float, ConversationFormat] | None = None
    for fmt in formats().values():
        score = fmt.sniff(doc)
        if score > 0 and (best is None or score > best[0]):
            best = (score, fmt)
    if best is None:
        names = ", ".join(sorted(formats()))
        shape = {"json": "JSON", "jsonl": "JSON Lines", "text": "text", "data": "data"}
        raise UnknownFormatError(
            f"{shape[doc.kind]} input in no known conversation format (tried: {names}); "
            "force one with --format / format=",
            where=doc.source,
        )
    return best[1]


def load_all(
    source: Any, format: str | None = None, *, name: str | None = None
) -> Collection:
    """Read every conversation in ``source`` (a path, bytes, stream, or list/dict data)."""
    doc = read_document(source, name=name)
    fmt = get_format(format) if format else detect_format(doc)
    conversations = fmt.parse(doc)
    if not conversations:
        raise UnknownFormatError(
            f"no conversation found in this {fmt.name} input", where=doc.source
        )
    for conv in conversations:
        conv.source_format = conv.source_format or fmt.name
        conv.warnings.extend(check_tool_pairs(conv))
    return Collection(source=doc.source, format=fmt.name, conversations=conversations)


def load(
    source: Any,
    pick: int | str | None = None,
    format: str | None = None,
    *,
    name: str | None = None,
) -> Conversation:
    """Read one conversation from ``source``.

    ``source`` is a path (``str`` / ``Path``), ``bytes``, a binary stream, or already-parsed
    data (a list of messages or a dict). ``pick`` selects one conversation from a file that
    holds several (0-based index or id). ``format`` forces a format by name instead of
    detecting it. Raises :class:`~precis.errors.InputError` subclasses on bad input.
    """
    return load_all(source, format, name=name).pick(pick)
