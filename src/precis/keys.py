"""API keys for the service: made here, kept in the store as SHA-256 digests only.

A key reads ``pk_<id>_<secret>``: ``id`` (12 hex digits) is public and names the key in
listings and revocations; ``secret`` is 32 random bytes (URL-safe base64). The store keeps
the digest of the whole key (:meth:`~precis.memory.store.base.Store.add_key`), so whoever
reads the store file cannot use a key, and a key is shown once, when it is made. A key's
256 random bits make a plain digest safe to look up (no slow hash needed: nothing to guess).
"""

from __future__ import annotations

import hashlib
import secrets

from precis.errors import ConfigError
from precis.memory.store.base import ApiKey, Store, check_tenant

__all__ = ["authenticate", "create_key", "key_digest"]

_PREFIX = "pk_"


def key_digest(key: str) -> str:
    """The SHA-256 hex digest the store keeps for ``key``."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def create_key(store: Store, tenant: str, name: str = "") -> tuple[str, ApiKey]:
    """Make a key for ``tenant``, record its digest in ``store``; ``(key, record)``. The key
    itself is not kept anywhere: hand it to its user now."""
    check_tenant(tenant)
    if not isinstance(name, str) or len(name) > 200 or any(ord(c) < 32 for c in name):
        raise ConfigError("a key name is at most 200 printable characters", where="name")
    key_id = secrets.token_hex(6)
    key = f"{_PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
    record = ApiKey(id=key_id, tenant=tenant, name=name)
    store.add_key(record, key_digest(key))
    found = store.find_key(key_digest(key))
    assert found is not None
    return key, found


def authenticate(store: Store, key: str) -> ApiKey | None:
    """The active key record for ``key`` (``None``: unknown, malformed or revoked)."""
    if not key.startswith(_PREFIX) or len(key) > 200:
        return None
    return store.find_key(key_digest(key))
