"""REST routes derived from :data:`~precis.service.operations.OPERATIONS`: one route per
operation, its path parameters from ``{field}`` in the path, the other fields of its
argument model as the query string (GET, DELETE) or the JSON body (POST, PATCH)."""

from __future__ import annotations

import asyncio
import inspect
import re
from functools import partial
from typing import Annotated, Any

import anyio.to_thread
from fastapi import Body, Depends, FastAPI, Path, Query, Request
from fastapi.responses import PlainTextResponse, Response
from pydantic import BaseModel, ConfigDict, create_model

from precis.service._context import Ctx, Service
from precis.service._json import FastJSONResponse
from precis.service.auth import Gate
from precis.service.errors import ERROR_SCHEMA
from precis.service.operations import OPERATIONS, Operation
from precis.service.ops_conversation import Markdown

__all__ = ["add_routes", "run_operation"]

_PATH_FIELD = re.compile(r"{(\w+)}")
_ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"description": text, "content": {"application/json": {"schema": ERROR_SCHEMA}}}
    for status, text in ((400, "Bad input (names the problem and where)"),
                         (401, "No valid API key"), (404, "Not found (in this tenant)"),
                         (413, "Too large"), (422, "Arguments that do not fit the schema"),
                         (429, "Too many requests"))
}


async def run_operation(service: Service, op: Operation, tenant: str, args: BaseModel) -> Any:
    """Run ``op`` for ``tenant`` off the event loop: heavy operations in the compaction
    pool, the others in the default thread pool."""
    call = partial(op.handler, Ctx(service, tenant), args)
    if op.heavy:
        return await asyncio.get_running_loop().run_in_executor(service.pool, call)
    return await anyio.to_thread.run_sync(call)


def _part(model: type[BaseModel], names: set[str], suffix: str) -> type[BaseModel]:
    """``model`` without the fields in ``names`` (the model itself when none is left out)."""
    if not names:
        return model
    fields: dict[str, Any] = {n: (f.annotation, f) for n, f in model.model_fields.items()
                              if n not in names}
    made: type[BaseModel] = create_model(
        f"{model.__name__}{suffix}", __config__=ConfigDict(extra="forbid"),
        __doc__=model.__doc__, **fields)
    return made


def _endpoint(service: Service, gate: Gate, op: Operation) -> Any:
    path_names = _PATH_FIELD.findall(op.path)
    fields = op.args.model_fields
    rest = {n for n in fields if n not in path_names}
    parameters = [inspect.Parameter("request", inspect.Parameter.KEYWORD_ONLY,
                                    annotation=Request)]
    for name in path_names:
        info = fields[name]
        parameters.append(inspect.Parameter(
            name, inspect.Parameter.KEYWORD_ONLY,
            annotation=Annotated[str, Path(description=info.description or name,
                                           min_length=1, max_length=200)]))
    if rest and op.method in ("POST", "PATCH"):
        body = _part(op.args, set(path_names), "Body")
        parameters.append(inspect.Parameter("payload", inspect.Parameter.KEYWORD_ONLY,
                                            annotation=Annotated[body, Body()]))
    elif rest:
        query = _part(op.args, set(path_names), "Query")
        parameters.append(inspect.Parameter("payload", inspect.Parameter.KEYWORD_ONLY,
                                            annotation=Annotated[query, Query()]))
    parameters.append(inspect.Parameter("tenant", inspect.Parameter.KEYWORD_ONLY,
                                        annotation=Annotated[str, Depends(_tenant(gate))]))

    async def endpoint(**kwargs: Any) -> Response:
        payload = kwargs.get("payload")
        if isinstance(payload, op.args):  # the whole model, validated already
            args = payload
        else:
            data = payload.model_dump(exclude_unset=True) if payload is not None else {}
            data.update({name: kwargs[name] for name in path_names})
            args = op.args.model_validate(data)
        result = await run_operation(service, op, kwargs["tenant"], args)
        if isinstance(result, Markdown):
            return PlainTextResponse(str(result), media_type="text/markdown; charset=utf-8")
        return FastJSONResponse(result, status_code=op.status)

    endpoint.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    endpoint.__name__ = op.name.replace(".", "_")
    return endpoint


def _tenant(gate: Gate) -> Any:
    async def tenant(request: Request) -> str:
        # on the event loop when the answer needs no store (no key, and whether the store
        # has keys known within the last second); in a thread when it reads the store
        found = gate.tenant_cached(request.headers)
        if found is None:
            found = await anyio.to_thread.run_sync(gate.tenant, request.headers)
        request.state.tenant = found
        return found

    return tenant


def add_routes(app: FastAPI, service: Service, gate: Gate) -> None:
    """Add a route for every operation to ``app``."""
    for op in OPERATIONS:
        responses = dict(_ERRORS)
        responses[op.status] = {"description": "OK", "content": {"application/json": {}}}
        if op.name == "compress":
            responses[op.status]["content"]["text/markdown"] = {"schema": {"type": "string"}}
        app.add_api_route(
            op.path, _endpoint(service, gate, op), methods=[op.method], name=op.name,
            operation_id=op.name.replace(".", "_"), summary=op.summary,
            description=(op.args.__doc__ or "").strip(), tags=[op.tag],
            status_code=op.status, responses=responses, response_class=FastJSONResponse)
