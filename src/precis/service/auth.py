"""Who is calling: an API key (``Authorization: Bearer …`` or ``X-API-Key``) names a tenant.

Once the store holds an active key (or the server is bound beyond loopback), every call
needs a valid one (401 otherwise); without keys, calls act for the service's default
tenant. Each key (or the keyless caller) has a token bucket: ``rate`` calls a second,
``burst`` at once (429 with ``Retry-After`` beyond).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping

from precis.keys import authenticate
from precis.service._context import Service
from precis.service.errors import ServiceError

__all__ = ["Gate", "key_of"]

_KEYS_TTL = 1.0  # seconds a "the store has keys" answer is reused


def key_of(headers: Mapping[str, str]) -> str | None:
    """The key a request carries, if any."""
    value = headers.get("authorization")
    if value:
        scheme, _, token = value.partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return token.strip()
    value = headers.get("x-api-key")
    return value.strip() if value and value.strip() else None


class Gate:
    """Authenticates calls and applies the per-key rate limit (one per service process)."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self._lock = threading.Lock()
        self._has_keys: tuple[float, bool] = (0.0, False)
        self._buckets: dict[str, tuple[float, float]] = {}  # key id -> (tokens, at)

    def keys_required(self) -> bool:
        known = self._keys_known()
        if known is not None:
            return known
        now = time.monotonic()
        known = any(k.active for k in self.service.store.api_keys())
        with self._lock:
            self._has_keys = (now, known)
        return known

    def _keys_known(self) -> bool | None:
        """Whether keys are needed, when that is known without reading the store."""
        if self.service.settings.require_keys:
            return True
        with self._lock:
            at, known = self._has_keys
        return known if time.monotonic() - at < _KEYS_TTL else None

    def tenant_cached(self, headers: Mapping[str, str]) -> str | None:
        """:meth:`tenant` when it needs no store read (a call without a key while whether
        the store has keys is known from the last second), else None: the event loop calls
        this and leaves the rest to :meth:`tenant` in a thread."""
        if key_of(headers) is not None:
            return None
        required = self._keys_known()
        return None if required is None else self._keyless(required)

    def tenant(self, headers: Mapping[str, str]) -> str:
        """The tenant of a call, after its key and rate limit are checked."""
        key = key_of(headers)
        if key is None:
            return self._keyless(self.keys_required())
        record = authenticate(self.service.store, key)
        if record is None:
            raise ServiceError(401, "Unauthorized", "the API key is not valid (unknown, "
                               "malformed or revoked)", where="authorization",
                               headers={"WWW-Authenticate": "Bearer"})
        self._spend(record.id)
        return record.tenant

    def _keyless(self, keys_required: bool) -> str:
        if keys_required:
            raise ServiceError(401, "Unauthorized",
                               "this server needs an API key: send 'Authorization: Bearer "
                               "<key>' or 'X-API-Key: <key>' (precis keys create)",
                               where="authorization", headers={"WWW-Authenticate": "Bearer"})
        self._spend("")
        return self.service.settings.tenant

    def _spend(self, key_id: str) -> None:
        limits = self.service.limits
        now = time.monotonic()
        with self._lock:
            tokens, at = self._buckets.get(key_id, (float(limits.burst), now))
            tokens = min(float(limits.burst), tokens + (now - at) * limits.rate)
            if tokens < 1.0:
                wait = (1.0 - tokens) / limits.rate
                self._buckets[key_id] = (tokens, now)
                raise ServiceError(429, "TooManyRequests",
                                   f"over {limits.rate:g} requests a second for this key; "
                                   f"retry in {wait:.2f} s",
                                   headers={"Retry-After": str(max(1, round(wait + 0.5)))})
            self._buckets[key_id] = (tokens - 1.0, now)
