"""``precis compress FILE``: compact a conversation to a level or a token budget."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import click

from precis.cli._options import (
    chat_client,
    conversation_input,
    llm_vote_option,
    read_collection,
    type_voter,
)

__all__ = ["compress_command", "file_sha256", "write_output"]

OUTPUTS = ("json", "markdown", "openai", "anthropic")
# what the budget is counted on for each --output: what is written (the JSON holds the
# message list in OpenAI shape and its text)
_FITTED = {"json": ("openai", "text"), "markdown": ("markdown",), "openai": ("openai",),
           "anthropic": ("anthropic",)}


def write_output(text: str, out: str | None) -> None:
    """``text`` to the file ``out`` (created or replaced) or to standard output."""
    if out is None or out == "-":
        click.echo(text, nl=not text.endswith("\n"))
        return
    from precis.errors import ConfigError

    try:
        Path(out).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write the output: {exc.strerror}", where=out) from None


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file, read in blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _source(file: str, fmt: str | None, pick: int) -> dict[str, Any]:
    if file == "-":
        return {"path": None, "sha256": None, "format": fmt, "pick": pick}
    path = Path(file).resolve()
    return {"path": str(path), "sha256": file_sha256(path), "format": fmt, "pick": pick}


@click.command("compress")
@conversation_input
@click.option("--level", "-l", type=click.Choice(["light", "normal", "heavy", "emergency"]),
              default="normal", show_default=True,
              help="How hard to compress when no --budget is given (it also sets how many "
                   "recent messages stay verbatim: 10, 10, 5, 3).")
@click.option("--budget", "-b", type=click.IntRange(min=1), default=None, metavar="N",
              help="Token budget the whole output is guaranteed to fit (by --tokenizer), "
                   "counted on what is written in the --output form.")
@click.option("--template", "-T", default="auto", show_default=True, metavar="NAME|FILE",
              help="Summary layout: auto (claude for agent sessions, service for service "
                   "dialogues, sections for chats, log for small talk), sections, claude, "
                   "service, log, or a JSON template file.")
@click.option("--tokenizer", "-t", default="estimate", show_default=True, metavar="NAME",
              help="Token counter (see `precis inspect -t`): estimate, o200k_base, "
                   "cl100k_base, hf:PATH, ...")
@click.option("--keep-last", type=click.IntRange(min=0), default=None, metavar="N",
              help="Recent messages kept verbatim (overrides the level's number).")
@click.option("--note-style", type=click.Choice(["auto", "on", "off"]), default="auto",
              show_default=True,
              help="Timeline lines without the words that only make a sentence flow: when "
                   "the room is small (auto), always (on) or never (off).")
@click.option("--output", "-O", "output", type=click.Choice(OUTPUTS), default="json",
              show_default=True, help="What to write.")
@click.option("-o", "out", default=None, metavar="OUT", help="Write to OUT instead of stdout.")
@click.option("--no-timings", is_flag=True,
              help="Leave timings out of the JSON so the same input gives the same bytes.")
@llm_vote_option
@click.option("--llm", "llm", is_flag=True,
              help="Rewrite the summary into prose with the OpenAI-compatible model at "
                   "$PRECIS_LLM_URL ($PRECIS_LLM_MODEL, $PRECIS_LLM_KEY) within the same "
                   "budget; precis puts back every request and exact value the prose left "
                   "out, and keeps its own summary when the model fails or the prose does "
                   "not fit (the JSON's `llm` says which). Needs precis[remote].")
def compress_command(
    file: str,
    format_name: str | None,
    pick: str | None,
    level: str,
    budget: int | None,
    template: str,
    tokenizer: str,
    keep_last: int | None,
    note_style: str,
    output: str,
    out: str | None,
    no_timings: bool,
    llm_vote: bool,
    llm: bool,
) -> None:
    """Compact FILE (`-` for stdin): system prompt + cited summary + recent messages.

    The output message list is valid for the OpenAI and Anthropic APIs; every summary line
    cites the fragments it came from (`precis explain RESULT S12` shows one).
    """
    from precis.compact import compress

    collection = read_collection(file, format_name)
    position = collection.resolve(pick, option="--pick ")
    conversation = collection.conversations[position]
    voter = type_voter(llm_vote)
    result = compress(conversation, level=level, budget=budget, template=template,
                      tokenizer=tokenizer, keep_last=keep_last,
                      note_style={"auto": None, "on": True, "off": False}[note_style],
                      voter=voter, llm=chat_client("--llm") if llm else None,
                      outputs=_FITTED[output])
    if voter is not None:
        voter.warn()
    if result.llm is not None and not result.llm.used_llm:
        click.echo(f"precis: warning: the LLM rewrite was {result.llm.describe()}", err=True)
    result.source = _source(file, conversation.source_format, position)
    if output == "json":
        text = result.to_json(timings=not no_timings)
    elif output == "markdown":
        text = result.to_markdown()
    elif output == "openai":
        text = json.dumps(result.to_openai(), ensure_ascii=False, indent=2)
    else:
        text = json.dumps(result.to_anthropic(), ensure_ascii=False, indent=2)
    write_output(text, out)
    if out not in (None, "-"):
        click.echo(
            f"{result.original_tokens} -> {result.compressed_tokens} tokens "
            f"({result.ratio}x); wrote {out}", err=True)
    sys.stdout.flush()
