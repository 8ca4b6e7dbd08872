"""What the adapters share: importing an optional framework with a helpful error."""

from __future__ import annotations

import importlib
from types import ModuleType

from precis.errors import MissingDependencyError

__all__ = ["require"]


def require(module: str, *, package: str, extra: str, purpose: str) -> ModuleType:
    """``import module``, or :class:`MissingDependencyError` naming ``package`` and the
    precis extra that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependencyError(package=package, extra=extra, purpose=purpose) from None
