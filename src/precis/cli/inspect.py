"""``precis inspect FILE``: what precis sees in a conversation file."""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING, Any

import click

from precis.cli._options import conversation_input, llm_vote_option, read_collection, type_voter
from precis.formats import Collection
from precis.model import Message

if TYPE_CHECKING:
    from precis.analysis.classify import TypeVoter

__all__ = ["conversation_listing", "inspect_command", "inspect_report"]

_PREVIEW = 80


def _preview(text: str, width: int = _PREVIEW) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _part_kinds(message: Message) -> str:
    counts = Counter(p.kind for p in message.parts)
    return ", ".join(f"{k}×{n}" if n > 1 else k for k, n in counts.items())


def inspect_report(
    collection: Collection, position: int, tokenizers: list[str], explain: bool = False,
    voter: TypeVoter | None = None,
) -> dict[str, Any]:
    """Everything ``inspect`` shows, as plain data (the ``--json`` output).

    With ``explain`` every fragment also carries its type, importance level, score and the
    factors behind them; ``voter`` is the optional model layer of the type classifier.
    """
    from precis.segment import segment
    from precis.tokens import get_counter

    conv = collection.conversations[position]
    counters = {spec: get_counter(spec) for spec in tokenizers}
    seg = segment(conv)
    analysis = None
    if explain:
        from precis.analysis import analyze

        analysis = analyze(seg, conversation=conv, voter=voter)
    messages = []
    for index, message in enumerate(conv.messages):
        messages.append(
            {
                "index": index,
                "role": message.role,
                "name": message.name,
                "id": message.id,
                "timestamp": message.timestamp,
                "parts": [p.kind for p in message.parts],
                "tokens": {s: c.count_message(message) for s, c in counters.items()},
                "preview": _preview(
                    " ".join(p.text for p in message.parts if p.text), 120
                ),
            }
        )
    fragments = [
        {
            "id": f.id,
            "kind": f.kind,
            "role": f.role,
            "language": f.language,
            "round": f.provenance.round,
            "message": f.provenance.message,
            "part": f.provenance.part,
            "start": f.provenance.start,
            "end": f.provenance.end,
            "text": f.text,
        }
        for f in seg.fragments
    ]
    if analysis is not None:
        from precis.analysis import explain as explain_item

        for row, item in zip(fragments, analysis.items()):
            row.update(
                type=item.type,
                confidence=round(item.classification.confidence, 3),
                tags=list(item.classification.tags),
                level=item.level,
                score=item.importance.score,
                factors=item.importance.factors,
                superseded_by=item.superseded_by,
                duplicate_count=item.duplicate_count,
                why=explain_item(item),
            )
    report: dict[str, Any] = {
        "source": collection.source,
        "format": collection.format,
        "conversation": {
            "id": conv.id,
            "title": conv.title,
            "index": position,
            "of": len(collection),
        },
        "counts": {
            "messages": len(conv.messages),
            "by_role": dict(Counter(m.role for m in conv.messages)),
            "rounds": len(seg.rounds),
            "fragments": len(seg.fragments),
            "by_kind": dict(Counter(f.kind for f in seg.fragments)),
        },
        "tokens": {s: c.count_messages(conv.messages) for s, c in counters.items()},
        "warnings": list(conv.warnings),
        "messages": messages,
        "rounds": [
            {"index": r.index, "role": r.role, "messages": list(r.messages)}
            for r in seg.rounds
        ],
        "fragments": fragments,
    }
    if analysis is not None:
        report["counts"]["by_type"] = dict(Counter(r["type"] for r in fragments))
        report["counts"]["by_level"] = dict(Counter(r["level"] for r in fragments))
        report["consolidation"] = {
            "duplicates": [list(g.members) for g in analysis.consolidation.duplicates],
            "chains": [{"id": c.id, "topic": c.topic, "fragments": list(c.fragments)}
                       for c in analysis.consolidation.chains],
            "folded": sorted(analysis.consolidation.folded, key=lambda x: int(x[1:])),
        }
    return report


def conversation_listing(collection: Collection, tokenizers: list[str]) -> dict[str, Any]:
    """The conversations of ``collection``, one row each (as ``inspect`` lists a file of
    several, and the service's ``POST /v1/inspect/conversations``): index, id, title, the
    first user message, the message count and the tokens by each counter in ``tokenizers``."""
    from precis.tokens import get_counter

    counters = {spec: get_counter(spec) for spec in tokenizers}
    return {
        "source": collection.source,
        "format": collection.format,
        "conversations": [
            {"index": i.index, "id": i.id, "title": i.title, "messages": i.message_count,
             "preview": i.preview,
             "tokens": {s: c.count_messages(conv.messages) for s, c in counters.items()}}
            for i, conv in zip(collection.infos(), collection.conversations)
        ],
    }


def _limited(rows: list[Any], limit: int) -> tuple[list[Any], int]:
    if limit <= 0 or len(rows) <= limit:
        return rows, 0
    return rows[:limit], len(rows) - limit


def _console() -> Any:
    from rich.console import Console

    console = Console()
    if not console.is_terminal and console.width < 120:
        console = Console(width=160)  # piped output: do not squeeze tables into 80 columns
    return console


def _cell(text: str, width: int) -> Any:
    """User text for a table cell: one line, cut to ``width`` terminal cells (CJK aware)."""
    from rich.text import Text

    cell = Text(" ".join(text.split()))
    cell.truncate(width, overflow="ellipsis")
    return cell


def _print_listing(listing: dict[str, Any], limit: int) -> None:
    from rich.table import Table

    console = _console()
    convs = listing["conversations"]
    with_ids = any(row["id"] for row in convs)
    with_titles = any(row["title"] for row in convs)
    console.print(
        f"[bold]{listing['source']}[/]: {listing['format']}, "
        f"{len(convs)} conversations; select one with "
        f"[bold]--pick {'N|ID' if with_ids else 'N'}[/]"
    )
    # columns the source has no values for are left out; without titles, the first user
    # message tells the conversations apart
    specs = list(convs[0]["tokens"]) if convs else []
    table = Table("#", *(["id"] if with_ids else []), "messages", *specs, box=None,
                  header_style="bold")
    table.add_column("title" if with_titles else "first user message", no_wrap=True)
    shown, more = _limited(convs, limit)
    for row in shown:
        table.add_row(
            str(row["index"]), *([str(row["id"] or "")] if with_ids else []),
            str(row["messages"]), *(f"{row['tokens'][s]:,}" for s in specs),
            _cell(row["title"] or row["preview"], 60),
        )
    console.print(table)
    if more:
        console.print(f"… {more} more (use --limit 0 to show all)")


def _print_report(report: dict[str, Any], limit: int, show_fragments: bool) -> None:
    from rich.markup import escape
    from rich.table import Column, Table

    console = _console()
    conv = report["conversation"]
    counts = report["counts"]
    head = Table.grid(padding=(0, 2))
    head.add_row("[bold]source[/]", escape(report["source"]))
    head.add_row("[bold]format[/]", report["format"])
    if conv["of"] > 1 or conv["id"]:
        label = f"{conv['index']} of {conv['of']}" + (f", id {conv['id']}" if conv["id"] else "")
        head.add_row("[bold]conversation[/]", escape(label))
    roles = ", ".join(f"{r} {n}" for r, n in counts["by_role"].items())
    head.add_row("[bold]messages[/]", f"{counts['messages']} ({roles})")
    head.add_row("[bold]rounds[/]", str(counts["rounds"]))
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(counts["by_kind"].items()))
    head.add_row("[bold]fragments[/]", f"{counts['fragments']} ({kinds})")
    head.add_row(
        "[bold]tokens[/]", ", ".join(f"{s}: {n:,}" for s, n in report["tokens"].items())
    )
    console.print(head)
    for warning in report["warnings"]:
        console.print(f"[yellow]warning:[/] {escape(warning)}")

    specs = list(report["tokens"])
    table = Table(*(Column(h, no_wrap=True) for h in ("#", "role", "name", "time", "parts")),
                  *specs,
                  title="messages", box=None, header_style="bold", title_justify="left")
    table.add_column("text", no_wrap=True)
    shown, more = _limited(report["messages"], limit)
    for m in shown:
        table.add_row(
            str(m["index"]), m["role"], escape(m["name"] or ""), escape(m["timestamp"] or ""),
            ", ".join(sorted(set(m["parts"]))), *(str(m["tokens"][s]) for s in specs),
            _cell(m["preview"], 60),
        )
    console.print(table)
    if more:
        console.print(f"… {more} more messages (use --limit 0 to show all)")
    if not show_fragments:
        return
    explained = bool(report["fragments"]) and "level" in report["fragments"][0]
    extra = ("type", "level", "score") if explained else ()
    table = Table(*(Column(h, no_wrap=True) for h in
                    ("id", "kind", "lang", "round/msg/part:span", *extra)),
                  title="fragments", box=None, header_style="bold", title_justify="left")
    table.add_column("text", no_wrap=True)
    shown, more = _limited(report["fragments"], limit)
    colour = {"HIGH": "bold red", "MEDIUM": "yellow", "LOW": "dim"}
    for f in shown:
        cells = [f["id"], f["kind"], f["language"],
                 f"{f['round']}/{f['message']}/{f['part']}:{f['start']}-{f['end']}"]
        if explained:
            cells += [f["type"], f"[{colour[f['level']]}]{f['level']}[/]", f"{f['score']:.2f}"]
        table.add_row(*cells, _cell(f["text"], 64))
        if explained:
            table.add_row(*[""] * (len(cells) - 1), "[dim]why[/]", _cell(f["why"], 80))
    console.print(table)
    if explained:
        for group in report["consolidation"]["duplicates"]:
            console.print(f"duplicates: {', '.join(group)} (kept {group[-1]})")
        for chain in report["consolidation"]["chains"]:
            topic = f" ({escape(chain['topic'])})" if chain["topic"] else ""
            console.print(f"chain {chain['id']}{topic}: " + " -> ".join(chain["fragments"]))
    if more:
        console.print(f"… {more} more fragments (use --limit 0 to show all)")


@click.command("inspect")
@conversation_input
@click.option(
    "--tokenizer", "-t", "tokenizers", multiple=True, metavar="SPEC",
    help="Count tokens with this tokenizer (repeatable): estimate (default), "
    "cl100k_base, o200k_base, hf:PATH/tokenizer.json.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--limit", default=200, show_default=True,
              help="Rows per table (0 for all). Does not apply to --json.")
@click.option("--fragments/--no-fragments", default=True, show_default=True,
              help="Show the fragment table.")
@click.option("--explain", is_flag=True,
              help="Analyse the fragments: type, importance level and why, duplicates and "
              "requirement version chains.")
@llm_vote_option
def inspect_command(
    file: str, format_name: str | None, pick: str | None, tokenizers: tuple[str, ...],
    as_json: bool, limit: int, fragments: bool, explain: bool, llm_vote: bool,
) -> None:
    """Show what precis sees in FILE: format, messages, rounds, tokens and fragments.

    FILE is a conversation file in any supported format, or - for standard input. A file
    that holds several conversations is listed; choose one with --pick.
    """
    collection = read_collection(file, format_name)
    if pick is None and len(collection) > 1:
        listing = conversation_listing(collection, list(tokenizers) or ["estimate"])
        if as_json:
            click.echo(json.dumps(listing, ensure_ascii=False, indent=2))
        else:
            _print_listing(listing, limit)
        return
    explain = explain or llm_vote  # the model votes on the analysis: --llm-vote explains
    voter = type_voter(llm_vote)
    report = inspect_report(
        collection, collection.resolve(pick, option="--pick "),
        list(tokenizers) or ["estimate"], explain, voter,
    )
    if voter is not None:
        voter.warn()
    if as_json:
        click.echo(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        _print_report(report, limit, fragments)
