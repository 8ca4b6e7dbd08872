"""JSON over HTTP for the OpenAI-compatible backends (chat completions, embeddings).

One place for what every remote call needs: the endpoint URL and key (from arguments or
the environment), a Bearer header, a timeout, retries with exponential backoff after a
connection error, a timeout or HTTP 408/429/5xx (honouring the server's ``Retry-After``, up
to :data:`MAX_DELAY` seconds), decoding the JSON answer, and error messages that name the
URL, the status and the first :data:`SNIPPET_CHARS` characters of the body. Each backend
passes its own error class (:class:`~precis.errors.EmbeddingError`,
:class:`~precis.errors.LLMError`), so callers see one tree.

``httpx`` is imported when a client is built, never when this module is imported.
"""

from __future__ import annotations

import json
import math
import os
import time
from email.utils import parsedate_to_datetime
from types import ModuleType
from typing import TYPE_CHECKING, Any

from precis.errors import ConfigError, MissingDependencyError, PrecisError

if TYPE_CHECKING:
    import httpx

__all__ = [
    "MAX_DELAY",
    "RETRY_STATUS",
    "SNIPPET_CHARS",
    "JSONClient",
    "check_count",
    "check_number",
    "check_positive_int",
    "endpoint_url",
    "env_key",
    "import_httpx",
    "retry_after",
    "snippet",
]

RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
"""Statuses worth another try: the server is busy or briefly broken."""
MAX_DELAY = 30.0
"""The longest wait between two tries, whatever ``Retry-After`` asks for."""
SNIPPET_CHARS = 200
"""How much of a bad answer's body an error message quotes."""


def import_httpx(purpose: str) -> ModuleType:
    """The ``httpx`` module, or :class:`~precis.errors.MissingDependencyError` naming the
    ``remote`` extra and ``purpose``."""
    try:
        import httpx
    except ImportError:
        raise MissingDependencyError(package="httpx", extra="remote", purpose=purpose) from None
    return httpx


def endpoint_url(base_url: str | None, env: str, endpoint: str, *, where: str) -> str:
    """The full URL of ``endpoint`` (``/embeddings``) under ``base_url`` or ``$env``.

    A base URL that already ends with ``endpoint`` is used as is; a trailing ``/`` is
    dropped. Anything but an ``http(s)://`` URL is a :class:`~precis.errors.ConfigError`.
    """
    url = base_url if base_url is not None else os.environ.get(env, "")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        origin = "base_url" if base_url is not None else env
        raise ConfigError(
            f"{origin} must be an http(s) URL like http://localhost:8080/v1, got {url!r}",
            where=where,
        )
    url = url.rstrip("/")
    return url if url.endswith(endpoint) else f"{url}{endpoint}"


def env_key(api_key: str | None, env: str) -> str | None:
    """``api_key``, else ``$env``; an empty key means none."""
    key = api_key if api_key is not None else os.environ.get(env)
    return key or None


class JSONClient:
    """POSTs JSON to one URL and returns the decoded answer, retrying what may pass.

    A request is retried ``retries`` times after a connection error, a timeout or HTTP
    408/429/5xx, waiting ``backoff * 2**attempt`` seconds, or longer when the server's
    ``Retry-After`` asks for it, never more than ``max_delay``. Other HTTP errors, a
    non-JSON answer and the last failure raise ``error`` with ``where`` = the URL.
    Safe to share across threads (one ``httpx.Client``, which is).
    """

    def __init__(
        self,
        url: str,
        *,
        error: type[PrecisError],
        purpose: str,
        where: str,
        api_key: str | None = None,
        timeout: float = 30.0,
        retries: int = 2,
        backoff: float = 0.5,
        max_delay: float = MAX_DELAY,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        httpx = import_httpx(purpose)
        self.url = url
        self.retries = check_count("retries", retries, where=where)
        self.backoff = check_number("backoff", backoff, where=where, zero=True)
        self.max_delay = check_number("max_delay", max_delay, where=where, zero=True)
        self.timeout = check_number("timeout", timeout, where=where)
        self._error = error
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._client = httpx.Client(headers=headers, timeout=self.timeout, transport=transport)
        self._closed = False

    def close(self) -> None:
        self._closed = True
        self._client.close()

    def post(self, payload: Any) -> Any:
        """The JSON answer to ``payload`` (see the class docstring for retries and errors)."""
        import httpx

        if self._closed:
            raise self._error("the client is closed", where=self.url)
        body = json.dumps(payload, allow_nan=False).encode("ascii")
        attempt = 0
        while True:
            try:
                response = self._client.post(self.url, content=body)
            except httpx.TimeoutException:
                problem, delay = f"no answer within {self.timeout} s", None
            except httpx.TransportError as exc:
                problem, delay = f"connection failed: {exc or type(exc).__name__}", None
            except (httpx.HTTPError, httpx.InvalidURL) as exc:  # a retry would not help
                raise self._error(
                    f"request failed: {exc or type(exc).__name__}", where=self.url
                ) from None
            else:
                if response.status_code < 300:
                    try:
                        return response.json()
                    except ValueError:  # also UnicodeDecodeError
                        raise self._error(
                            f"malformed JSON answer: {snippet(response.text)}", where=self.url
                        ) from None
                problem = f"HTTP {response.status_code}: {snippet(response.text)}"
                if response.status_code not in RETRY_STATUS:
                    raise self._error(problem, where=self.url)
                delay = retry_after(response.headers.get("Retry-After"))
            if attempt >= self.retries:
                tries = f" (after {attempt + 1} attempts)" if attempt else ""
                raise self._error(problem + tries, where=self.url)
            wait = self.backoff * 2**attempt
            time.sleep(min(self.max_delay, max(wait, delay or 0.0)))
            attempt += 1


def snippet(text: str) -> str:
    """``text`` on one line, cut to :data:`SNIPPET_CHARS` characters."""
    text = " ".join(text.split())
    if len(text) > SNIPPET_CHARS:
        return text[:SNIPPET_CHARS] + "..."
    return text or "(empty body)"


def retry_after(value: str | None) -> float | None:
    """The seconds a ``Retry-After`` header asks to wait (a number or an HTTP date), or
    ``None`` when absent or unreadable."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            return None
        seconds = when.timestamp() - time.time()
        return max(0.0, seconds)
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def check_positive_int(key: str, value: object, *, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{key} must be a positive integer, got {value!r}", where=where)
    return value


def check_count(key: str, value: object, *, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{key} must be an integer >= 0, got {value!r}", where=where)
    return value


def check_number(key: str, value: object, *, where: str, zero: bool = False) -> float:
    """``value`` as a finite float > 0 (>= 0 with ``zero``), else a ConfigError naming ``key``."""
    number = float(value) if isinstance(value, (int, float)) else math.nan
    if isinstance(value, bool) or not math.isfinite(number) or number < 0 or (
        not zero and number == 0
    ):
        expected = "a number >= 0" if zero else "a positive number"
        raise ConfigError(f"{key} must be {expected}, got {value!r}", where=where)
    return number
