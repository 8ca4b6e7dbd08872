"""``precis explain RESULT S12``: a fragment's original text and where it went."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from precis.cli.compress import file_sha256
from precis.errors import ConfigError, InputError, InputNotFoundError, JSONSyntaxError

__all__ = ["explain_command", "fragment_fate"]


def _read_result(path: str) -> dict[str, Any]:
    p = Path(path)
    if not p.is_file():
        raise InputNotFoundError("no such result file", where=path)
    try:
        data = json.loads(p.read_text("utf-8"))
    except UnicodeDecodeError:
        raise InputError("the result file is not UTF-8 text", where=path) from None
    except json.JSONDecodeError as exc:
        raise JSONSyntaxError(exc.msg, line=exc.lineno, column=exc.colno, source=path) from None
    if (not isinstance(data, dict) or "summary" not in data or "origin" not in data
            or not isinstance(data.get("source") or {}, dict)):
        raise InputError("not a precis compress result (JSON output of `precis compress`)",
                         where=path)
    return data


def fragment_fate(result: dict[str, Any], fragment_id: str, message: int, role: str,
                  text: str | None = None) -> list[str]:
    """Where a fragment went in a compress result, as lines of text (see
    :func:`precis.compact.fates.fragment_fate`, which this renders)."""
    from precis.compact.fates import fragment_fate as fate_of

    fate = fate_of(result, fragment_id, message, role, text)
    status = fate["status"]
    if status == "kept":
        return [f"kept verbatim: output message {fate['output_message']}"]
    if status == "shortened":
        return [f"kept shortened: output message {fate['output_message']} (this part was cut "
                "to fit the budget)"]
    lines = [("summarized in the short summary: " if into["section"] == "short" else
              f"summarized under \"{into['title']}\"" + (f" ({into['why']})" if into.get("why")
                                                        else "") + ": ") + into["text"]
             for into in fate.get("into", [])]
    if "reason" in fate:
        lines.append(f"dropped: {fate['reason'].replace('_', ' ')}")
    if status == "system":
        lines.append("kept verbatim (system prompt)")
    return lines or ["not in the output"]


@click.command("explain")
@click.argument("result_file", metavar="RESULT", type=click.Path(dir_okay=False))
@click.argument("fragment_id", metavar="FRAGMENT")
@click.option("--source", "source_file", default=None, metavar="FILE",
              help="The conversation file compressed (default: the path the result records).")
def explain_command(result_file: str, fragment_id: str, source_file: str | None) -> None:
    """Show fragment FRAGMENT (e.g. S12) of a `precis compress` JSON RESULT: its original
    text, its type and importance, and where it went (kept, summarized, or dropped)."""
    from precis.analysis import analyze
    from precis.formats import load_all

    result = _read_result(result_file)
    source = result.get("source") or {}
    path = source_file or source.get("path")
    if not path:
        raise ConfigError("the result does not record its source file (it was read from "
                          "stdin); give it with --source FILE", where=result_file)
    if source_file is None and source.get("sha256"):
        actual = file_sha256(Path(path)) if Path(path).is_file() else None
        if actual != source["sha256"]:
            raise InputError("the source file changed (or is gone) since it was compressed; "
                             "give the original with --source FILE", where=path)
    collection = load_all(path, source.get("format"))
    conversation = collection.pick(source.get("pick") or 0)
    fid = fragment_id.upper() if fragment_id[:1] in "sS" else f"S{fragment_id}"
    analysis = analyze(conversation)
    item = analysis.item(fid)
    frag = item.fragment
    p = frag.provenance
    click.echo(f"{fid}: {frag.kind} from {frag.role}, message {p.message}, part {p.part}, "
               f"characters {p.start}-{p.end}")
    click.echo(f"why: {analysis.explain(fid)}")
    click.echo("text:")
    for line in frag.text.splitlines() or [""]:
        click.echo(f"  {line}")
    click.echo("went to:")
    for line in fragment_fate(result, fid, p.message, frag.role, frag.text):
        click.echo(f"  {line}")
