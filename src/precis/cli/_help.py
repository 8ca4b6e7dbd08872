"""Command lists in ``--help`` that show each command's first sentence whole.

Click cuts a command's short help at about 45 characters (``Show fragment FRAGMENT (e.g.``);
:class:`HelpGroup` shows the whole first sentence of its help instead, wrapped like any
other definition list. A command's own ``short_help`` still wins.
"""

from __future__ import annotations

import re

import click

__all__ = ["HelpGroup", "first_sentence"]

_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.")
_END = re.compile(r"[.!?](?=\s|$)")


def first_sentence(text: str) -> str:
    """The first sentence of the first paragraph of ``text`` (white space joined)."""
    paragraph = " ".join(text.strip().split("\n\n")[0].split())
    for match in _END.finditer(paragraph):
        head = paragraph[: match.end()]
        if not head.lower().endswith(_ABBREVIATIONS):
            return head
    return paragraph


class HelpGroup(click.Group):
    """A click group whose command list gives every command's first sentence in full."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows: list[tuple[str, str]] = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is None or command.hidden:
                continue
            text = command.short_help or first_sentence(command.help or "")
            rows.append((name, text))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
