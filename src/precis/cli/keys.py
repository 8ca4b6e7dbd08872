"""``precis keys …``: the service's API keys (made, listed, revoked) in a memory store."""

from __future__ import annotations

import json
from contextlib import closing

import click

from precis.cli._help import HelpGroup
from precis.cli.memory import STORE_ENV

__all__ = ["keys_group"]


@click.group("keys", cls=HelpGroup)
@click.option("--store", default=None, metavar="PATH|URL", envvar=STORE_ENV,
              help="The memory store the service uses: a SQLite file or a postgresql:// URL "
                   f"(default: memory.sqlite3 under PRECIS_HOME; or ${STORE_ENV}).")
@click.pass_context
def keys_group(ctx: click.Context, store: str | None) -> None:
    """API keys of `precis serve`: once a store has a key, every request needs one, and
    each key sees its tenant's memory only. Only a key's SHA-256 digest is stored."""
    ctx.obj = store


@keys_group.command("create")
@click.option("--tenant", "-t", required=True, metavar="NAME",
              help="The tenant the key reads and writes (letters, digits, _ . -).")
@click.option("--name", "-n", default="", help="A label for the key (who or what uses it).")
@click.option("--json", "as_json", is_flag=True, help="JSON output.")
@click.pass_obj
def create_command(store: str | None, tenant: str, name: str, as_json: bool) -> None:
    """Make a key and print it once (it cannot be shown again)."""
    from precis.keys import create_key
    from precis.memory.store import open_store

    with closing(open_store(store)) as opened:
        key, record = create_key(opened, tenant, name)
    if as_json:
        click.echo(json.dumps({"key": key, "id": record.id, "tenant": record.tenant,
                               "name": record.name, "created_at": record.created_at}))
        return
    click.echo(key)
    click.echo(f"(key {record.id} for tenant {record.tenant!r}; store it now: only its digest "
               "is kept)", err=True)


@keys_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="JSON output.")
@click.pass_obj
def list_command(store: str | None, as_json: bool) -> None:
    """The keys (never the keys themselves): id, tenant, name, created, revoked."""
    from precis.memory.store import open_store

    with closing(open_store(store)) as opened:
        keys = opened.api_keys()
    if as_json:
        click.echo(json.dumps([k.__dict__ for k in keys], ensure_ascii=False, indent=2))
        return
    if not keys:
        click.echo("no keys: `precis serve` answers without a key, on loopback only")
        return
    for k in keys:
        state = f"revoked {k.revoked_at}" if k.revoked_at else "active"
        click.echo(f"{k.id}  tenant={k.tenant}  {state}  created {k.created_at}"
                   + (f"  {k.name}" if k.name else ""))


@keys_group.command("revoke")
@click.argument("key_id")
@click.pass_obj
def revoke_command(store: str | None, key_id: str) -> None:
    """Revoke the key KEY_ID (as `keys list` shows it); it stops working at once."""
    from precis.memory.store import open_store

    with closing(open_store(store)) as opened:
        record = opened.revoke_key(key_id)
    click.echo(f"revoked {record.id} (tenant {record.tenant!r}) at {record.revoked_at}")
