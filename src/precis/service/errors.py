"""Errors as the service answers them: an HTTP status and ``{"error": {"type", "message",
"where"}}``, never a stack trace.

Every :class:`~precis.errors.PrecisError` maps to a status by its class (the first match
in :data:`STATUS`, most specific first); the service's own refusals (no key, too many
requests, too large) are :class:`ServiceError`.
"""

from __future__ import annotations

from typing import Any

from precis import errors as e

__all__ = ["STATUS", "ServiceError", "error_body", "status_of"]

STATUS: tuple[tuple[type[e.PrecisError], int], ...] = (
    (e.NotFoundError, 404),
    (e.ConflictError, 409),
    (e.InputTooLargeError, 413),
    (e.InputError, 400),
    (e.ConfigError, 400),
    (e.TokenizerError, 400),
    (e.MissingDependencyError, 501),
    (e.EmbeddingError, 502),
    (e.LLMError, 502),
    (e.StoreError, 503),
)


class ServiceError(Exception):
    """A refusal of the service itself (401, 413, 429 ...)."""

    def __init__(self, status: int, kind: str, message: str, *, where: str | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.kind, self.message, self.where = status, kind, message, where
        self.headers = headers or {}


def status_of(error: e.PrecisError) -> int:
    for kind, status in STATUS:
        if isinstance(error, kind):
            return status
    return 400


def error_body(kind: str, message: str, where: str | None = None, *,
               hide: str | None = None) -> dict[str, Any]:
    """The JSON of an error; a ``where`` equal to ``hide`` (the server's store path, which
    callers have no business knowing) is left out."""
    return {"error": {"type": kind, "message": message,
                      "where": None if hide is not None and where == hide else where}}


ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {"error": {
        "type": "object",
        "required": ["type", "message", "where"],
        "properties": {
            "type": {"type": "string", "description": "The error's class, e.g. FormatError."},
            "message": {"type": "string"},
            "where": {"type": ["string", "null"],
                      "description": "Where the problem is: a field, 'message 3' ..."},
        },
    }},
}
