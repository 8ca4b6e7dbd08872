"""Options shared by every command that reads a conversation (FILE, --format, --pick)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from precis.formats import Collection, load_all

__all__ = ["conversation_input", "read_collection"]

F = TypeVar("F", bound=Callable[..., Any])


def conversation_input(func: F) -> F:
    """Add FILE (``-`` for stdin), ``--format`` and ``--pick`` to a command."""
    func = click.option(
        "--pick",
        "-p",
        metavar="N|ID",
        default=None,
        help="Select one conversation from a file that holds several: 0-based index or id "
        "(`precis inspect FILE` lists them).",
    )(func)
    func = click.option(
        "--format",
        "-f",
        "format_name",
        metavar="NAME",
        default=None,
        help="Force the input format instead of detecting it (see `precis formats`).",
    )(func)
    func = click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))(func)
    return func


def read_collection(file: str, format_name: str | None) -> Collection:
    """Load every conversation in FILE (``-`` reads standard input)."""
    if file == "-":
        return load_all(sys.stdin.buffer, format_name, name="<stdin>")
    return load_all(file, format_name)
