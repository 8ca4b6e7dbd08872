"""MCP tools derived from :data:`~precis.service.operations.OPERATIONS` (those with a
``tool`` name), served over stdio (``precis mcp``) or streamable HTTP (``/mcp`` of
``precis serve``, stateless, so any worker answers any call).

A tool's arguments are its operation's argument model (the same fields, types, limits and
descriptions as the REST API); its result is the same JSON the REST API answers. Over HTTP
the caller's API key names the tenant, as on the REST API; over stdio the tenant is the one
``precis mcp`` was started for.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field, ValidationError
from pydantic.fields import FieldInfo

from precis._version import __version__
from precis.errors import PrecisError
from precis.service._context import Service
from precis.service.errors import ServiceError
from precis.service.operations import OPERATIONS, Operation
from precis.service.rest import run_operation

__all__ = ["build_mcp"]

_INSTRUCTIONS = (
    "precis compacts long agent conversations to a token budget without an LLM "
    "(compress_context; list_conversations lists an input of several to pick one) and "
    "keeps a long-term memory searched by keywords and meaning, in "
    "English and Chinese (add_memory, search_memory, get_memory, list_memories, "
    "delete_memory). context_reload returns what a precis session offloaded."
)


def build_mcp(service: Service, tenant_of: Callable[[Mapping[str, str] | None], str]
              ) -> MCPServer:
    """An MCP server with one tool per operation that has a tool name. ``tenant_of`` gives
    the tenant of a call from its HTTP headers (``None`` over stdio)."""
    server: MCPServer = MCPServer("precis", instructions=_INSTRUCTIONS, version=__version__,
                                  log_level="WARNING")
    for op in OPERATIONS:
        if op.tool is None:
            continue
        server.add_tool(
            _tool(service, op, tenant_of), name=op.tool, title=op.summary,
            description=op.tool_description,
            annotations=ToolAnnotations(read_only_hint=op.read_only,
                                        destructive_hint=op.name.endswith("delete"),
                                        idempotent_hint=op.read_only or op.name.endswith("add"),
                                        open_world_hint=False),
            structured_output=False)
    return server


def _tool(service: Service, op: Operation,
          tenant_of: Callable[[Mapping[str, str] | None], str]) -> Callable[..., Any]:
    fields = op.args.model_fields
    parameters = [
        inspect.Parameter(
            name, inspect.Parameter.KEYWORD_ONLY, annotation=_annotation(info),
            default=(inspect.Parameter.empty if info.is_required()
                     else info.get_default(call_default_factory=True)))
        for name, info in fields.items()
    ]
    parameters.append(inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY,
                                        annotation=Context))

    async def tool(**kwargs: Any) -> str:
        ctx: Context = kwargs.pop("ctx")
        try:
            headers = ctx.headers if ctx.request_context.request is not None else None
            tenant = tenant_of(headers)
            args = op.args.model_validate(kwargs)
            result = await run_operation(service, op, tenant, args)
        except PrecisError as err:
            where = None if err.where == service.store.location else err.where
            raise ToolError(_error(type(err).__name__, err.message, where)) from None
        except ServiceError as err:
            raise ToolError(_error(err.kind, err.message, err.where)) from None
        except ValidationError as err:
            raise ToolError(_error("ValidationError", str(err), None)) from None
        return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)

    tool.__signature__ = inspect.Signature(parameters, return_annotation=str)  # type: ignore[attr-defined]
    tool.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": str}
    tool.__name__ = op.tool or op.name
    tool.__doc__ = op.tool_description
    return tool


def _annotation(info: FieldInfo) -> Any:
    """The field's type with its limits and description, as a parameter annotation."""
    annotated: Any = Annotated
    spec = (info.annotation, *info.metadata, Field(description=info.description))
    return annotated[spec]


def _error(kind: str, message: str, where: str | None) -> str:
    return json.dumps({"error": {"type": kind, "message": message, "where": where}},
                      ensure_ascii=False)
