"""The click group; each command lives in its own module and is attached here."""

from __future__ import annotations

import click

from precis._version import __version__
from precis.cli._help import HelpGroup
from precis.cli.compress import compress_command
from precis.cli.explain import explain_command
from precis.cli.formats import formats_command
from precis.cli.inspect import inspect_command
from precis.cli.keys import keys_group
from precis.cli.memory import memory_group
from precis.cli.serve import mcp_command, serve_command

__all__ = ["cli"]


@click.group(cls=HelpGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="precis")
def cli() -> None:
    """precis: compact long LLM-agent conversations, exactly and instantly.

    Reads OpenAI, Anthropic, Claude Code, LangChain, ShareGPT, SWE-agent, OpenHands,
    LoCoMo and plain-text transcripts (detected automatically). Errors in the input are
    reported with the file, line and message index, and exit code 2.
    """


cli.add_command(inspect_command)
cli.add_command(compress_command)
cli.add_command(explain_command)
cli.add_command(formats_command)
cli.add_command(memory_group)
cli.add_command(keys_group)
cli.add_command(serve_command)
cli.add_command(mcp_command)
