"""``precis formats``: the conversation formats precis reads."""

from __future__ import annotations

import click

__all__ = ["formats_command"]


@click.command("formats")
def formats_command() -> None:
    """List the input formats (names for --format) and what each reads."""
    from rich.console import Console
    from rich.table import Table

    from precis.formats import formats

    table = Table("name", "reads", box=None, header_style="bold")
    for name, fmt in sorted(formats().items()):
        table.add_row(name, fmt.description)
    Console().print(table)
