"""The FastAPI application of ``precis serve``: ``/v1`` (from the operations), OpenAPI at
``/openapi.json``, an offline docs page at ``/docs``, ``/healthz``, ``/readyz``,
``/metrics`` and MCP at ``/mcp``.

``create_app(settings)`` returns a plain FastAPI app; more can be mounted on it afterwards
(a web page at ``/``: ``app.mount("/", StaticFiles(directory=..., html=True))`` comes after
every route here, so the API keeps its paths).
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from pydantic import ValidationError
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from precis._version import __version__
from precis.errors import PrecisError
from precis.service._context import Service, ServiceSettings
from precis.service.auth import Gate
from precis.service.errors import ServiceError, error_body, status_of

__all__ = ["create_app", "settings_from_env"]

log = logging.getLogger("precis.service")
SETTINGS_ENV = "PRECIS_SERVE_SETTINGS"  # JSON of ServiceSettings, for uvicorn's workers


def create_app(settings: ServiceSettings | None = None, *, mcp: bool = True) -> FastAPI:
    """The service's application (see the module docstring)."""
    from precis.service.docs import docs_page
    from precis.service.rest import add_routes

    settings = settings or ServiceSettings()
    service = Service(settings)
    gate = Gate(service)
    mcp_manager = _mcp(service, gate) if mcp else None

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            if mcp_manager is not None:
                async with mcp_manager.run():
                    yield
            else:
                yield
        finally:
            service.close()

    app = FastAPI(title="precis", version=__version__, lifespan=lifespan, docs_url=None,
                  redoc_url=None, openapi_url="/openapi.json",
                  description="Compaction and long-term memory for LLM-agent conversations. "
                              "Send 'Authorization: Bearer <key>' when the server has keys.")
    app.state.service = service
    app.state.gate = gate
    _error_handlers(app)
    add_routes(app, service, gate)

    @app.get("/healthz", include_in_schema=True, tags=["health"], summary="The process is up")
    def healthz() -> dict[str, str | int]:
        return {"status": "ok", "version": __version__, "pid": os.getpid()}  # which worker

    @app.get("/readyz", tags=["health"], summary="The store answers",
             responses={503: {"description": "The store does not answer"}})
    def readyz() -> JSONResponse:
        try:
            service.store.get_meta("segmenter")
        except PrecisError as err:
            return JSONResponse(error_body("StoreError", err.message), 503)
        return JSONResponse({"status": "ready"})

    @app.get("/metrics", tags=["health"], summary="Prometheus text metrics",
             response_class=PlainTextResponse)
    def metrics() -> PlainTextResponse:
        return PlainTextResponse(service.metrics.render(),
                                 media_type="text/plain; version=0.0.4")

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return HTMLResponse(docs_page(app.openapi()))

    if mcp_manager is not None:
        from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
        from starlette.routing import Route

        app.router.routes.append(Route(
            "/mcp", _McpGate(StreamableHTTPASGIApp(mcp_manager), gate),
            methods=["GET", "POST", "DELETE"], include_in_schema=False))

    from starlette.staticfiles import StaticFiles

    from precis.web import STATIC_DIR

    # the web page, after every route above (it calls them like any client)
    app.mount("/", StaticFiles(directory=STATIC_DIR, html=True), name="web")
    app.add_middleware(_Limits, service=service)
    return app


def settings_from_env() -> ServiceSettings:
    """The settings ``precis serve`` hands its worker processes (``$PRECIS_SERVE_SETTINGS``)."""
    import json

    from precis.service._context import Limits

    data = json.loads(os.environ.get(SETTINGS_ENV) or "{}")
    limits = Limits(**data.pop("limits", {}))
    return ServiceSettings(**data, limits=limits)


def app_from_env() -> FastAPI:
    """The app of one ``precis serve --workers N`` worker (uvicorn's factory)."""
    return create_app(settings_from_env())


def _mcp(service: Service, gate: Gate) -> Any:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    from precis.service.mcp import build_mcp

    server = build_mcp(service, lambda headers: gate.tenant(headers or {}))
    return StreamableHTTPSessionManager(
        app=server._lowlevel_server, stateless=True, json_response=True,
        max_request_body_size=service.limits.max_body_bytes)


class _McpGate:
    """Checks the key of an MCP call before the MCP transport sees it (401 as JSON)."""

    def __init__(self, app: ASGIApp, gate: Gate) -> None:
        self.app, self.gate = app, gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        from starlette.datastructures import Headers

        try:
            self.gate.tenant(Headers(scope=scope))
        except ServiceError as err:
            await _json(err.status, error_body(err.kind, err.message, err.where),
                        err.headers)(scope, receive, send)
            return
        await self.app(scope, receive, send)


class _Limits:
    """Refuses bodies over the limit (413) before they are read, and records every
    request's route, status and time in the metrics."""

    def __init__(self, app: ASGIApp, service: Service) -> None:
        self.app, self.service = app, service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        limit = self.service.limits.max_body_bytes
        status = [500]
        too_large = _json(413, error_body(
            "PayloadTooLarge", f"the request body is over {limit} bytes", "body"))
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > limit):
            await too_large(scope, receive, send)
            self._record(scope, 413, started)
            return
        seen = 0
        over = False

        async def counted() -> Message:
            nonlocal seen, over
            if over:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:  # answer 413 now; the app sees the client gone
                    over = True
                    status[0] = 413
                    await too_large(scope, receive, send)
                    return {"type": "http.disconnect"}
            return message

        async def sending(message: Message) -> None:
            if over:
                return  # the 413 is sent already
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        await self.app(scope, counted, sending)
        self._record(scope, status[0], started)

    def _record(self, scope: Scope, status: int, started: float) -> None:
        route = scope.get("route")
        path = getattr(route, "path", None) or ("/mcp" if scope.get("path") == "/mcp"
                                               else "unmatched")
        self.service.metrics.request(path, scope.get("method", ""), status,
                                     time.perf_counter() - started)


def _json(status: int, body: dict[str, Any], headers: dict[str, str] | None = None
          ) -> Response:
    return JSONResponse(body, status_code=status, headers=headers)


def _error_handlers(app: FastAPI) -> None:
    @app.exception_handler(PrecisError)
    async def precis_error(request: Request, err: PrecisError) -> Response:
        return _json(status_of(err), error_body(type(err).__name__, err.message, err.where,
                                                 hide=request.app.state.service.store.location))

    @app.exception_handler(ServiceError)
    async def service_error(request: Request, err: ServiceError) -> Response:
        return _json(err.status, error_body(err.kind, err.message, err.where), err.headers)

    @app.exception_handler(RequestValidationError)
    async def request_invalid(request: Request, err: RequestValidationError) -> Response:
        return _json(422, _validation_body(err.errors()))

    @app.exception_handler(ValidationError)
    async def args_invalid(request: Request, err: ValidationError) -> Response:
        return _json(422, _validation_body(err.errors()))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, err: HTTPException) -> Response:
        kind = {404: "NotFound", 405: "MethodNotAllowed"}.get(err.status_code, "HTTPError")
        message = ("no such route" if err.status_code == 404 else str(err.detail))
        return _json(err.status_code, error_body(kind, message, request.url.path),
                     getattr(err, "headers", None))

    @app.exception_handler(Exception)
    async def internal(request: Request, err: Exception) -> Response:
        log.exception("internal error on %s %s", request.method, request.url.path)
        return _json(500, error_body("InternalError", "the server failed on this request; "
                                     "it is logged", request.url.path))


def _validation_body(errors: Any) -> dict[str, Any]:
    first = errors[0] if errors else {}
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or None
    message = "; ".join(
        f"{'.'.join(str(p) for p in e.get('loc', ()) if p != 'body') or 'input'}: {e.get('msg')}"
        for e in errors[:5])
    if len(errors) > 5:
        message += f" (and {len(errors) - 5} more)"
    return error_body("ValidationError", message, where)
