"""``precis memory …``: ingest conversations into the long-term store and search it."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from precis.cli._help import HelpGroup
from precis.cli._options import read_collection
from precis.cli._progress import progress_printer
from precis.cli.memory_batch import note_label, run_batch
from precis.errors import InputError, QueryError

if TYPE_CHECKING:
    from precis.memory import Filters, Memory, MemoryCard, SearchResult, StoredMessage
    from precis.model import Conversation

__all__ = ["memory_group"]

STORE_ENV = "PRECIS_MEMORY"
TENANT_ENV = "PRECIS_TENANT"


@dataclass
class _Settings:
    store: str | None
    embedder: str
    tenant: str

    def open(self) -> Memory:
        from precis.memory import Memory

        return Memory(self.store, embedder=self.embedder, tenant=self.tenant)


def _filter_options(func: Any) -> Any:
    for option in reversed((
        click.option("--user", "-u", default=None, help="Only cards of this user."),
        click.option("--agent", default=None, help="Only cards of this agent."),
        click.option("--session", "-s", default=None, help="Only cards of this session."),
        click.option("--type", "types", multiple=True, metavar="TYPE",
                     help="Only cards of this type (repeatable): summary (a session's "
                          "digest), requirement, decision, fact, event, preference, config, "
                          "sql, code, error-fix, todo, ..."),
        click.option("--speaker", default=None, help="Only cards said by this speaker."),
        click.option("--since", default=None, metavar="DATE",
                     help="Only cards whose event time is on or after DATE (ISO)."),
        click.option("--until", default=None, metavar="DATE",
                     help="Only cards whose event time is on or before DATE (ISO)."),
        click.option("--current", is_flag=True,
                     help="Leave out cards that a newer card superseded."),
    )):
        func = option(func)
    return func


def _filters(user: str | None, agent: str | None, session: str | None, types: tuple[str, ...],
             speaker: str | None, since: str | None, until: str | None,
             current: bool) -> Filters:
    from precis.memory import Filters

    return Filters(user=user, agent=agent, session=session, types=types, speaker=speaker,
                   since=since, until=until, include_superseded=not current)


@click.group("memory", cls=HelpGroup)
@click.option("--store", default=None, metavar="PATH|URL", envvar=STORE_ENV,
              help="The memory store: a SQLite file, or postgresql://user@host/db for a "
                   "shared PostgreSQL + pgvector store (pip install 'precis[postgres]'); "
                   f"default: memory.sqlite3 under PRECIS_HOME, or ${STORE_ENV}.")
@click.option("--embedder", "-e", default="auto", show_default=True, metavar="SPEC",
              help="auto (the store's choice, else the local model when installed), none "
                   "(keywords only), local (= use: multilingual, offline), minilm "
                   "(English), or openai:MODEL (with PRECIS_EMBED_URL).")
@click.option("--tenant", default="default", show_default=True, envvar=TENANT_ENV,
              metavar="NAME", help="The tenant whose memory to read and write (the service's "
                                   f"API keys name theirs; or ${TENANT_ENV}).")
@click.pass_context
def memory_group(ctx: click.Context, store: str | None, embedder: str, tenant: str) -> None:
    """Long-term memory: cards from conversations, hybrid keyword + semantic search."""
    ctx.obj = _Settings(store, embedder, tenant)


@memory_group.command("ingest")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--format", "-f", "format_name", metavar="NAME", default=None,
              help="Force the input format instead of detecting it.")
@click.option("--pick", "-p", metavar="N|ID", default=None,
              help="Ingest only this conversation of a file that holds several.")
@click.option("--session", "-s", default=None,
              help="Session id to file the cards under (default: the conversation's id, or "
                   "a hash of its content). Only with one conversation.")
@click.option("--user", "-u", default=None, help="User the cards belong to.")
@click.option("--agent", default=None, help="Agent the cards belong to.")
@click.option("--summary/--no-summary", "summary", default=None,
              help="A session summary card (what was asked, done, pending), updated when "
                   "the session is ingested again grown: by default for each session of 4 "
                   "messages or more that is not small talk; --summary: small talk too; "
                   "--no-summary: none.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON report.")
@click.pass_obj
def ingest_command(settings: _Settings, files: tuple[str, ...], format_name: str | None,
                   pick: str | None, session: str | None, user: str | None, agent: str | None,
                   summary: bool | None, as_json: bool) -> None:
    """Extract memory cards from conversations in FILES and store the new ones, with a
    summary card per session."""
    from rich.progress import Progress

    jobs: list[tuple[str, Conversation]] = []
    for file in files:
        collection = read_collection(file, format_name)
        convs = ([collection.pick(pick)] if pick is not None else collection.conversations)
        jobs.extend((file, c) for c in convs)
    if session is not None and len(jobs) > 1:
        raise InputError(
            f"--session names one session but the input holds {len(jobs)} conversations; "
            "use --pick, or leave --session out"
        )
    reports = []
    with settings.open() as memory, Progress(
        transient=True, disable=as_json or not sys.stderr.isatty(),
        console=_stderr_console(),
    ) as bar:
        task = bar.add_task("ingesting", total=len(jobs))
        on_pipe = progress_printer("conversations ingested", quiet=as_json)
        for number, (file, conv) in enumerate(jobs):
            if on_pipe is not None:
                on_pipe(number, len(jobs))
            bar.update(task, description=f"ingesting {conv.id or file}")
            sub = bar.add_task("  embedding", total=None, visible=memory.embedder is not None)

            def advance(done: int, total: int, sub: Any = sub) -> None:
                bar.update(sub, completed=done, total=total)

            vectors = progress_printer(f"vectors of {conv.id or file} computed",
                                       quiet=as_json)
            report = memory.ingest(conv, session=session, user=user, agent=agent,
                                   progress=advance if vectors is None else vectors,
                                   summary=summary)
            bar.remove_task(sub)
            bar.advance(task)
            reports.append((file, report))
        if on_pipe is not None:
            on_pipe(len(jobs), len(jobs))
        location = memory.store.location
    if as_json:
        click.echo(json.dumps({"store": location, "sessions": [
            {"file": file, "session": r.session_id, "cards": r.cards, "added": r.added,
             "updated": list(r.updated_ids), "summary": r.summary_id,
             "embedded": r.embedded, "skipped": r.skipped} for file, r in reports
        ]}, ensure_ascii=False, indent=2))
        return
    for file, r in reports:
        note = "" if r.added or r.updated_ids else " (already stored)"
        if r.summary_id in r.added_ids:
            note += f", summary {r.summary_id}"
        elif r.summary_id in r.updated_ids:
            note += f", summary {r.summary_id} updated"
        click.echo(f"{r.session_id}: {r.cards} cards, {r.added} new{note}  [{file}]")
    click.echo(f"store: {location}")


@memory_group.command("search")
@click.argument("query", required=False)
@click.option("-k", "k", type=click.IntRange(1, 1000), default=10, show_default=True,
              help="How many hits.")
@_filter_options
@click.option("--chrono", is_flag=True, help="Show the hits in time order.")
@click.option("--context", "-C", type=click.IntRange(0, 20), default=0,
              help="Messages of context around each hit's source.")
@click.option("--recap", is_flag=True, help="Add a recap paragraph of the hits.")
@click.option("--json", "as_json", is_flag=True, help="JSON output.")
@click.option("--batch", type=click.Path(dir_okay=False, allow_dash=True), default=None,
              metavar="QUERIES.jsonl",
              help='Answer many queries: lines {"id":…, "query":…, optional filters}; '
                   'prints lines {"id":…, "hits":[…]}.')
@click.pass_obj
def search_command(settings: _Settings, query: str | None, k: int, user: str | None,
                   agent: str | None, session: str | None, types: tuple[str, ...],
                   speaker: str | None, since: str | None, until: str | None, current: bool,
                   chrono: bool, context: int, recap: bool, as_json: bool,
                   batch: str | None) -> None:
    """Find memory cards about QUERY (keywords + meaning, Chinese or English)."""
    if batch is not None:
        if query is not None:
            raise InputError("give either a QUERY or --batch, not both")
        run_batch(settings.open, batch, k)
        return
    if query is None:
        raise QueryError("no query given (or use --batch QUERIES.jsonl)")
    with settings.open() as memory:
        result = memory.search(query, k=k, user=user, agent=agent, session=session,
                               types=types, speaker=speaker, since=since, until=until,
                               current_only=current, chronological=chrono, context=context,
                               recap=recap)
    if as_json:
        click.echo(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
    else:
        _print_result(result)


def _print_result(result: SearchResult) -> None:
    for note in result.notes:
        click.echo(f"precis: {note_label(note)}: {note}", err=True)
    if not result.hits:
        click.echo("no matching memories")
        return
    for rank, hit in enumerate(result.hits, 1):
        card = hit.card
        when = (card.event_time or "")[:10]
        head = f"{rank}. [{card.type}] {card.id}  score {hit.score:.4f}"
        head += f"  {when}" if when else ""
        head += f"  {card.speaker}" if card.speaker else ""
        click.echo(head)
        click.echo(_indent(card.content))
        click.echo(f"   from {card.session_id}: {_where(card, hit.sources)}"
                   + (f"  (superseded by {card.superseded_by})" if card.superseded_by else ""))
        for message in hit.context:
            click.echo(_indent(f"[{message.message_id} {message.speaker or message.role}] "
                               f"{_short(message.text)}", "      "))
    if result.recap:
        click.echo("\nRecap:\n" + _indent(result.recap))


def _where(card: MemoryCard, sources: tuple[StoredMessage, ...]) -> str:
    """The messages a hit came from: their ids, or for a card of many (a session's summary)
    their numbers in the session (as its text cites them: "msg 12")."""
    ids = [m.message_id for m in sources] or list(card.message_ids)
    if len(ids) <= 3:
        return ", ".join(ids)
    numbers = [m.index + 1 for m in sources] or [i + 1 for i in card.message_indexes]
    return "messages " + ", ".join(map(str, numbers))


def _indent(text: str, prefix: str = "   ") -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def _short(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@memory_group.command("show")
@click.argument("card_id")
@click.option("--context", "-C", type=click.IntRange(0, 20), default=0,
              help="Messages of context around the source.")
@click.option("--history", is_flag=True, help="Also show every earlier version.")
@click.option("--json", "as_json", is_flag=True, help="JSON output.")
@click.pass_obj
def show_command(settings: _Settings, card_id: str, context: int, history: bool,
                 as_json: bool) -> None:
    """One card with the original messages it came from (with --history, also a deleted
    card's history)."""
    from precis.errors import NotFoundError

    with settings.open() as memory:
        try:
            card = memory.get(card_id)
        except NotFoundError as err:
            versions = memory.history(card_id)  # NotFoundError if it was never stored
            if not history:
                raise NotFoundError(f"{err.message} (it was {versions[-1].action} "
                                    f"{versions[-1].at}; --history shows what it said)",
                                    where=err.where) from None
            _show_deleted(versions, as_json)
            return
        sources = memory.sources(card, context)
        versions = memory.history(card_id) if history else []
    if as_json:
        click.echo(json.dumps({
            "card": card.to_dict(),
            "sources": [m.__dict__ for m in sources],
            "history": [{"version": v.version, "action": v.action, "at": v.at,
                         "card": v.card.to_dict() if v.card else None} for v in versions],
        }, ensure_ascii=False, indent=2))
        return
    click.echo(f"{card.id}  [{card.type}]  {card.scope}"
               + (f"  user {card.user_id}" if card.user_id else ""))
    click.echo(_indent(card.content))
    for label, value in (("speaker", card.speaker), ("event time", card.event_time),
                         ("tags", ", ".join(card.tags)), ("topics", ", ".join(card.topics)),
                         ("entities", ", ".join(card.entities)),
                         ("superseded by", card.superseded_by),
                         ("fragments", ", ".join(card.fragment_ids)),
                         ("created", card.created_at)):
        if value:
            click.echo(f"   {label}: {value}")
    click.echo(f"Sources ({card.session_id}):")
    for message in sources:
        mark = "*" if message.index in card.message_indexes else " "
        click.echo(f" {mark} [{message.message_id}] {message.speaker or message.role}"
                   f"{' ' + message.timestamp if message.timestamp else ''}")
        click.echo(_indent(message.text or "(no text: a tool call or its result)", "     "))
    for v in versions:
        click.echo(f"v{v.version} {v.action} {v.at}"
                   + (f": {_short(v.card.content, 120)}" if v.card else ""))


def _show_deleted(versions: list[Any], as_json: bool) -> None:
    """The history of a card that is no longer in the store (deleted)."""
    if as_json:
        click.echo(json.dumps({"card": None, "deleted": True, "history": [
            {"version": v.version, "action": v.action, "at": v.at,
             "card": v.card.to_dict() if v.card else None} for v in versions],
        }, ensure_ascii=False, indent=2))
        return
    last = versions[-1]
    click.echo(f"{last.card_id}: {last.action} {last.at} (no longer in the store)")
    for v in versions:
        click.echo(f"v{v.version} {v.action} {v.at}"
                   + (f": {_short(v.card.content, 120)}" if v.card else ""))


@memory_group.command("list")
@_filter_options
@click.option("--limit", "-n", type=click.IntRange(1), default=20, show_default=True)
@click.option("--offset", type=click.IntRange(0), default=0)
@click.option("--json", "as_json", is_flag=True, help="JSON lines output.")
@click.pass_obj
def list_command(settings: _Settings, user: str | None, agent: str | None,
                 session: str | None, types: tuple[str, ...], speaker: str | None,
                 since: str | None, until: str | None, current: bool, limit: int, offset: int,
                 as_json: bool) -> None:
    """Cards in time order."""
    filters = _filters(user, agent, session, types, speaker, since, until, current)
    with settings.open() as memory:
        cards = list(memory.cards(filters, limit=limit, offset=offset))
    for card in cards:
        if as_json:
            click.echo(json.dumps(card.to_dict(), ensure_ascii=False))
        else:
            click.echo(f"{card.id}  {(card.event_time or '')[:10]:10}  [{card.type}]  "
                       f"{_short(card.content, 100)}")


@memory_group.command("delete")
@click.argument("card_ids", nargs=-1, required=True)
@click.pass_obj
def delete_command(settings: _Settings, card_ids: tuple[str, ...]) -> None:
    """Delete cards (their history keeps what they said)."""
    with settings.open() as memory:
        for card_id in card_ids:
            memory.get(card_id)  # every id must exist before anything is deleted
        for card_id in card_ids:
            memory.delete(card_id)
    click.echo(f"deleted {len(card_ids)} card(s)")


@memory_group.command("export")
@_filter_options
@click.option("--output", "-o", default=None, metavar="FILE", help="Write here (default stdout).")
@click.pass_obj
def export_command(settings: _Settings, user: str | None, agent: str | None,
                   session: str | None, types: tuple[str, ...], speaker: str | None,
                   since: str | None, until: str | None, current: bool,
                   output: str | None) -> None:
    """Cards as JSON lines (for `precis memory import`)."""
    filters = _filters(user, agent, session, types, speaker, since, until, current)
    with settings.open() as memory:
        lines = list(memory.export(filters))
    text = "".join(line + "\n" for line in lines)
    if output is None or output == "-":
        click.echo(text, nl=False)
        return
    tmp = Path(output + ".part")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, output)
    except OSError as err:
        raise InputError(f"cannot write the export: {err.strerror}", where=output) from None
    sessions = sum(1 for line in lines if line.startswith('{"session"'))
    click.echo(f"exported {len(lines) - sessions} card(s) and {sessions} session(s) "
               f"to {output}", err=True)


@memory_group.command("import")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@click.pass_obj
def import_command(settings: _Settings, file: str) -> None:
    """Add cards from JSON lines (an export); cards already stored are skipped."""
    try:
        if file == "-":
            lines = sys.stdin.read().splitlines()
        else:
            lines = Path(file).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputError("no such file", where=file) from None
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", where=file) from None
    with settings.open() as memory:
        read, added = memory.import_lines(lines, where=file)
    click.echo(f"read {read} card(s), added {added}")


@memory_group.command("stats")
@click.option("--json", "as_json", is_flag=True, help="JSON output.")
@click.pass_obj
def stats_command(settings: _Settings, as_json: bool) -> None:
    """What the store holds."""
    with settings.open() as memory:
        stats = memory.stats()
    if as_json:
        click.echo(json.dumps(stats, ensure_ascii=False, indent=2))
        return
    click.echo(f"store: {stats['path']}")
    click.echo(f"tenant: {stats['tenant']}")
    for key in ("cards", "sessions", "messages", "users", "superseded", "keyword_terms"):
        click.echo(f"{key.replace('_', ' ')}: {stats[key]:,}")
    embedder = stats.get("embedder") or "none"
    hint = ""
    if embedder == "none":
        from precis.memory import Memory

        hint = (" (keywords only; `precis memory --embedder local reindex` adds semantic "
                "search)" if Memory.local_model_installed() else " (keywords only)")
    click.echo(f"embedder: {embedder}{hint}")
    for model, count in stats["vectors"].items():
        click.echo(f"vectors ({model}): {count:,}")
    if stats["by_type"]:
        click.echo("by type: " + ", ".join(f"{t} {n:,}" for t, n in stats["by_type"].items()))
    if "bytes" in stats:
        click.echo(f"size: {stats['bytes'] / 1e6:.1f} MB")


@memory_group.command("reindex")
@click.pass_obj
def reindex_command(settings: _Settings) -> None:
    """Compute missing vectors for the store's embedder. With --embedder, that embedder
    becomes the store's (e.g. `precis memory --embedder local reindex` adds semantic search
    to a keyword-only store)."""
    with settings.open() as memory:
        if settings.embedder != "auto":
            before = memory.set_embedder(settings.embedder)
            if before != memory.embedder_spec:
                click.echo(f"the store's embedder is now {memory.embedder_spec} "
                           f"(was {before})")
        if memory.embedder is None:
            hint = ("the local model is installed: `precis memory --embedder local reindex` "
                    "adds semantic search" if memory.local_model_installed() else
                    "`precis memory --embedder local|openai:MODEL reindex` adds semantic "
                    "search")
            click.echo(f"the store uses keyword search only (embedder none); {hint}")
            return
        done = memory.reindex(progress=progress_printer("vectors computed"))
        spec = memory.embedder_spec
    click.echo(f"computed {done} vector(s) with {spec}")


@memory_group.command("migrate")
@click.argument("source", metavar="SRC")
@click.argument("target", metavar="DST")
@click.option("--batch", type=click.IntRange(1, 100_000), default=500, show_default=True,
              help="Cards per transaction.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON report.")
@click.pass_obj
def migrate_command(settings: _Settings, source: str, target: str, batch: int,
                    as_json: bool) -> None:
    """Copy the tenant's memory from SRC to DST (SQLite files or postgresql:// URLs): sessions
    and messages, cards, vectors, history, runtime states. Run again to finish a run that
    stopped: what DST has is skipped."""
    from contextlib import closing

    from rich.progress import Progress

    from precis.memory.migrate import migrate
    from precis.memory.store import open_store

    with closing(open_store(source, tenant=settings.tenant)) as src, \
            closing(open_store(target, tenant=settings.tenant)) as dst, \
            Progress(transient=True, disable=as_json or not sys.stderr.isatty(),
                     console=_stderr_console()) as bar:
        tasks: dict[str, Any] = {}

        def advance(step: str, done: int, total: int) -> None:
            if step not in tasks:
                tasks[step] = bar.add_task(step, total=total or None)
            bar.update(tasks[step], completed=done, total=total or None)

        report = migrate(src, dst, batch=batch, progress=advance)
        where = (src.location, dst.location)
    if as_json:
        click.echo(json.dumps({"source": where[0], "target": where[1], **report.to_dict()},
                              ensure_ascii=False, indent=2))
        return
    vectors = ", ".join(f"{n:,} {m}" for m, n in report.vectors.items()) or "none"
    click.echo(f"{where[0]} -> {where[1]} (tenant {settings.tenant})")
    click.echo(f"sessions {report.sessions:,} ({report.messages:,} messages); cards "
               f"{report.cards:,} read, {report.added:,} new; history entries "
               f"{report.history:,} new; vectors new: {vectors}; runtime states "
               f"{report.states:,} new")


def _stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True)
