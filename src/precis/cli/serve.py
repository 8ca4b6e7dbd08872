"""``precis serve`` (the REST API and MCP over HTTP) and ``precis mcp`` (MCP over stdio)."""

from __future__ import annotations

import ipaddress
from contextlib import closing

import click

from precis.cli.memory import STORE_ENV, TENANT_ENV

__all__ = ["mcp_command", "serve_command"]


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _store_option(func: click.decorators.FC) -> click.decorators.FC:
    func = click.option("--embedder", "-e", default="auto", show_default=True, metavar="SPEC",
                        help="auto, none, local, use, minilm or openai:MODEL "
                             "(as `precis memory`).")(func)
    func = click.option("--tenant", default="default", show_default=True, envvar=TENANT_ENV,
                        metavar="NAME",
                        help="The tenant of calls without a key (a server without keys; "
                             "MCP over stdio).")(func)
    return click.option("--store", default=None, metavar="PATH", envvar=STORE_ENV,
                        help="The memory store (default: memory.sqlite3 under PRECIS_HOME; "
                             f"or ${STORE_ENV}).")(func)


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. Beyond loopback the store must have API keys.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@_store_option
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Worker processes (each opens the store; state is in the store). "
                   "On Linux each has a socket of its own (SO_REUSEPORT) and the "
                   "kernel spreads connections over them.")
@click.option("--max-body-mb", default=32, show_default=True, type=click.IntRange(1, 4096),
              help="Largest request body, MiB (413 beyond).")
@click.option("--max-messages", default=20_000, show_default=True,
              type=click.IntRange(1, 10_000_000), help="Most messages in one request (413).")
@click.option("--rate", default=200.0, show_default=True, type=click.FloatRange(0.01),
              help="Requests a second per API key (429 beyond) ...")
@click.option("--burst", default=400, show_default=True, type=click.IntRange(1),
              help="... and how many at once.")
@click.option("--log-level", default="warning", show_default=True,
              type=click.Choice(["critical", "error", "warning", "info", "debug"]))
def serve_command(host: str, port: int, store: str | None, tenant: str, embedder: str,
                  workers: int, max_body_mb: int, max_messages: int, rate: float, burst: int,
                  log_level: str) -> None:
    """The REST API under /v1 (OpenAPI at /openapi.json, docs at /docs) and MCP at /mcp.

    Once the store has API keys (`precis keys create`), every call needs one and sees its
    tenant's memory only. Without keys the server listens on loopback only.
    """
    from precis.errors import ConfigError
    from precis.memory.store import check_tenant, open_store
    from precis.service._context import Limits, ServiceSettings
    from precis.service._deps import require

    for module in ("fastapi", "uvicorn", "mcp"):
        require(module, "precis serve")
    import uvicorn

    check_tenant(tenant, where="--tenant")
    loopback = _loopback(host)
    if not loopback:
        with closing(open_store(store)) as opened:
            if not any(k.active for k in opened.api_keys()):
                raise ConfigError(
                    f"refusing to listen on {host} without API keys: anyone who reaches it "
                    "could read and delete the memory; create one with `precis keys create "
                    "--tenant NAME`, or listen on 127.0.0.1", where="--host")
    settings = ServiceSettings(
        store=store, embedder=embedder, tenant=tenant, require_keys=not loopback,
        limits=Limits(max_body_bytes=max_body_mb * 1024 * 1024, max_messages=max_messages,
                      rate=rate, burst=burst))
    click.echo(f"precis serve: http://{host}:{port}/docs (API /v1, MCP /mcp; "
               f"{workers} worker{'s' if workers > 1 else ''})", err=True)
    if workers == 1:
        from precis.service.app import create_app

        uvicorn.run(create_app(settings), host=host, port=port, log_level=log_level)
        return
    from precis.service.workers import serve_workers

    code = serve_workers(settings, host=host, port=port, workers=workers, log_level=log_level)
    if code:
        raise click.exceptions.Exit(code)


@click.command("mcp")
@_store_option
def mcp_command(store: str | None, tenant: str, embedder: str) -> None:
    """MCP over stdio: compress_context, add / search / get / list / delete memory,
    context_reload. Point an MCP client (Claude Desktop, Cursor ...) at `precis mcp`."""
    from precis.memory.store import check_tenant
    from precis.service._context import Service, ServiceSettings
    from precis.service._deps import require

    require("mcp", "precis mcp")
    from precis.service.mcp import build_mcp

    check_tenant(tenant, where="--tenant")
    service = Service(ServiceSettings(store=store, embedder=embedder, tenant=tenant))
    try:
        build_mcp(service, lambda headers: tenant).run("stdio")
    finally:
        service.close()
