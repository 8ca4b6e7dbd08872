"""precis as a service: one set of operations, served as a REST API (``precis serve``) and as
MCP tools (``precis mcp`` over stdio, ``/mcp`` over streamable HTTP).

- :mod:`precis.service.operations` holds every operation once: a typed argument model, a
  handler that calls the library, where it lives in the REST API and whether it is an MCP
  tool. :mod:`precis.service.rest` and :mod:`precis.service.mcp` derive both surfaces from it.
- :func:`precis.service.app.create_app` builds the FastAPI application (``/v1``, OpenAPI at
  ``/openapi.json``, an offline docs page at ``/docs``, health, metrics, ``/mcp``). It is a
  plain FastAPI app: mount more on it (a web page at ``/``) after it is made.
- Keys and tenants: :mod:`precis.service.auth`; the tenant is enforced in the store
  (:mod:`precis.memory.store.base`).

Needs the ``server`` extra: ``pip install 'precis[server]'``.
"""

from __future__ import annotations

__all__: list[str] = []
