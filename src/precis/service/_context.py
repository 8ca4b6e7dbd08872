"""What the operations run with: the per-process :class:`Service` (settings, the store, the
memory of each tenant, metrics, the compaction pool) and the per-call :class:`Ctx` (a tenant
and its memory)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from precis.memory.store.base import DEFAULT_TENANT, check_tenant

if TYPE_CHECKING:
    from precis.llm import ChatClient
    from precis.memory import Memory
    from precis.memory.store.base import Store
    from precis.service.metrics import Metrics

__all__ = ["Ctx", "Limits", "Service", "ServiceSettings"]

_MEMORIES = 1024  # tenants whose Memory object is kept open at once (LRU)


@dataclass(frozen=True)
class Limits:
    """Request limits (``precis serve`` options)."""

    max_body_bytes: int = 32 * 1024 * 1024
    max_messages: int = 20_000  # messages in one request (a conversation, a list)
    rate: float = 200.0  # requests per second per key (a token bucket) ...
    burst: int = 400  # ... that holds this many
    compaction_threads: int = 4


@dataclass(frozen=True)
class ServiceSettings:
    """How ``precis serve`` / ``precis mcp`` run."""

    store: str | None = None  # a path (None: memory.sqlite3 under PRECIS_HOME)
    embedder: str = "auto"
    tenant: str = DEFAULT_TENANT  # the tenant of requests without a key (no keys, stdio MCP)
    require_keys: bool = False  # refuse requests without a key even when there is none
    limits: Limits = field(default_factory=Limits)


class Service:
    """One per process: opens the store once and hands out per-tenant views of it."""

    def __init__(self, settings: ServiceSettings) -> None:
        from precis.memory import Memory
        from precis.service.metrics import Metrics

        check_tenant(settings.tenant, where="--tenant")
        self.settings = settings
        self.limits = settings.limits
        self.root = Memory(settings.store, embedder=settings.embedder)
        self.metrics: Metrics = Metrics()
        self.pool = ThreadPoolExecutor(max_workers=self.limits.compaction_threads,
                                       thread_name_prefix="precis-compaction")
        self._memories: OrderedDict[str, Memory] = OrderedDict()
        self._lock = threading.Lock()
        self._session_locks: dict[tuple[str, str], threading.Lock] = {}
        self._llm: ChatClient | None = None

    @property
    def store(self) -> Store:
        """The store bound to the default tenant (keys are store-wide)."""
        return self.root.store

    def memory(self, tenant: str) -> Memory:
        with self._lock:
            found = self._memories.get(tenant)
            if found is None:
                found = self.root.for_tenant(tenant)
                self._memories[tenant] = found
                if len(self._memories) > _MEMORIES:
                    self._memories.popitem(last=False)
            else:
                self._memories.move_to_end(tenant)
            return found

    def session_lock(self, tenant: str, session: str) -> threading.Lock:
        """One lock per (tenant, session) in this process: calls on one session queue here
        instead of conflicting in the store."""
        with self._lock:
            if len(self._session_locks) > 10_000:
                self._session_locks = {k: v for k, v in self._session_locks.items()
                                       if v.locked()}
            return self._session_locks.setdefault((tenant, session), threading.Lock())

    def llm(self) -> ChatClient:
        """The model of ``$PRECIS_LLM_URL`` / ``$PRECIS_LLM_MODEL`` where the server runs
        (built on first use, shared by every call); a 501 when none is set."""
        from precis.errors import ConfigError
        from precis.llm import client_from_env
        from precis.service.errors import ServiceError

        with self._lock:
            if self._llm is None:
                try:
                    self._llm = client_from_env("llm")
                except ConfigError as err:
                    raise ServiceError(501, "NotImplemented", "this server has no LLM to "
                                       f"rewrite with ({err.message})", where="llm") from None
            return self._llm

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
        if self._llm is not None:
            self._llm.close()
        self.root.close()


@dataclass
class Ctx:
    """One call: the service and the tenant it acts for."""

    service: Service
    tenant: str

    @property
    def memory(self) -> Memory:
        return self.service.memory(self.tenant)

    @property
    def store(self) -> Store:
        return self.memory.store

    @property
    def limits(self) -> Limits:
        return self.service.limits
