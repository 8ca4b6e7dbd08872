"""The interface every conversation format implements, and the registry that holds them.

A format answers two questions about a :class:`~precis.formats._reader.Document`:
``sniff`` (how sure am I that this is mine, 0.0 - 1.0) and ``parse`` (the conversations in
it; a file may hold many). precis's own formats register through :func:`register_format`,
the same call a third party would use.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from precis.formats._reader import Document
from precis.model import Conversation

__all__ = ["ConversationFormat", "formats", "get_format", "register_format"]


class ConversationFormat(ABC):
    """A conversation format precis can read.

    Subclasses set ``name`` (used by ``--format``) and ``description`` and implement
    :meth:`sniff` and :meth:`parse`. ``parse`` raises :class:`~precis.errors.FormatError`
    naming the record / message index when the structure is wrong.
    """

    name: ClassVar[str]
    description: ClassVar[str]

    @abstractmethod
    def sniff(self, doc: Document) -> float:
        """Confidence in [0, 1] that ``doc`` is in this format; 0 means "not mine"."""

    @abstractmethod
    def parse(self, doc: Document) -> list[Conversation]:
        """Every conversation in ``doc``, in file order (at least one)."""


_REGISTRY: dict[str, ConversationFormat] = {}


def register_format(fmt: ConversationFormat, *, replace: bool = False) -> ConversationFormat:
    """Add ``fmt`` to the registry under ``fmt.name``.

    The built-in formats are registered first, so a third-party format with a built-in's
    name needs ``replace=True`` and then stays in place.
    """
    from precis.formats import _builtin  # noqa: F401  (built-ins first; no-op once loaded)

    if fmt.name in _REGISTRY and not replace:
        from precis.errors import ConfigError

        raise ConfigError(
            f"a format named {fmt.name!r} is already registered; pass replace=True to "
            "replace it"
        )
    _REGISTRY[fmt.name] = fmt
    return fmt


def formats() -> dict[str, ConversationFormat]:
    """The registered formats by name (built-in ones included)."""
    from precis.formats import _builtin  # noqa: F401  (registers the built-in formats)

    return dict(_REGISTRY)


def get_format(name: str) -> ConversationFormat:
    from precis.errors import UnknownFormatError

    known = formats()
    try:
        return known[name]
    except KeyError:
        raise UnknownFormatError(
            f"unknown format {name!r}; known formats: {', '.join(sorted(known))}"
        ) from None
