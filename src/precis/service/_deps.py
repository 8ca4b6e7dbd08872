"""The ``server`` extra's packages, imported with an install hint when missing."""

from __future__ import annotations

import importlib
from typing import Any

from precis.errors import MissingDependencyError

__all__ = ["require"]

_INSTALL = "pip install 'precis[server]'"


def require(module: str, purpose: str = "the precis service") -> Any:
    """Import ``module`` (fastapi, uvicorn, mcp, pydantic ...) or raise
    :class:`~precis.errors.MissingDependencyError` naming the ``server`` extra."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependencyError(package=module.split(".")[0], extra="server",
                                     purpose=purpose, install=_INSTALL) from None
