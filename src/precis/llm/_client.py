"""A client for any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp, ...).

``POST {base_url}/chat/completions`` with ``{"model", "messages", "temperature",
"max_tokens"}`` and a Bearer key; the answer's first choice is the text, its ``usage`` the
token counts. Every failure, from a refused connection to an answer without text, is an
:class:`~precis.errors.LLMError`, so a caller has one thing to catch before it falls back to
the rule engine. Needs ``httpx`` (``pip install 'precis[remote]'``); callers may inject an
httpx transport.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from precis.errors import ConfigError, FormatError, LLMError
from precis.llm._http import JSONClient, check_positive_int, endpoint_url, env_key

if TYPE_CHECKING:
    import httpx

__all__ = [
    "LLM_KEY_ENV",
    "LLM_MODEL_ENV",
    "LLM_URL_ENV",
    "ChatClient",
    "ChatModel",
    "Completion",
    "client_from_env",
]

LLM_URL_ENV = "PRECIS_LLM_URL"
LLM_KEY_ENV = "PRECIS_LLM_KEY"
LLM_MODEL_ENV = "PRECIS_LLM_MODEL"
_PURPOSE = "calling an OpenAI-compatible chat endpoint"
_WHERE = "llm"
_ROLES = frozenset({"system", "user", "assistant", "developer", "tool"})


@dataclass(frozen=True)
class Completion:
    """One answer: its text, the tokens the endpoint reports (0 when it reports none), the
    model that answered and the wall time of the call in seconds (retries included)."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    model: str
    elapsed_s: float

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens


@runtime_checkable
class ChatModel(Protocol):
    """What the summariser and the type voter need from a model: :class:`ChatClient`, or
    any object wrapping another SDK that raises :class:`~precis.errors.LLMError` on failure."""

    model: str

    def complete(
        self, messages: Sequence[Mapping[str, Any]], *, max_tokens: int | None = None
    ) -> Completion: ...


class ChatClient:
    """Completions of ``model`` from an OpenAI-compatible ``/chat/completions`` endpoint.

    ``base_url`` (e.g. ``http://localhost:8000/v1``), ``api_key`` and ``model`` default to
    ``$PRECIS_LLM_URL``, ``$PRECIS_LLM_KEY`` and ``$PRECIS_LLM_MODEL``; no key sends no
    ``Authorization``. A request is retried ``retries`` times after a connection error, a
    timeout or HTTP 408/429/5xx, waiting ``backoff * 2**attempt`` seconds (or the server's
    ``Retry-After``, up to 30 s). ``max_tokens`` caps every answer unless
    :meth:`complete` is given its own cap. Safe to share across threads.
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        model: str | None = None,
        *,
        timeout: float = 30.0,
        retries: int = 2,
        backoff: float = 0.5,
        transport: httpx.BaseTransport | None = None,
        max_tokens: int | None = None,
        temperature: float = 0.0,
    ) -> None:
        name = model if model is not None else os.environ.get(LLM_MODEL_ENV, "")
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(
                f"an LLM model must be named: pass model= or set {LLM_MODEL_ENV}", where=_WHERE
            )
        self.model = name
        self.url = endpoint_url(base_url, LLM_URL_ENV, "/chat/completions", where=_WHERE)
        self.max_tokens = _cap(max_tokens)
        if (isinstance(temperature, bool) or not isinstance(temperature, (int, float))
                or not math.isfinite(temperature) or not 0 <= temperature <= 2):
            raise ConfigError(
                f"temperature must be a number from 0 to 2, got {temperature!r}", where=_WHERE
            )
        self.temperature = float(temperature)
        self._http = JSONClient(
            self.url,
            error=LLMError,
            purpose=_PURPOSE,
            where=_WHERE,
            api_key=env_key(api_key, LLM_KEY_ENV),
            timeout=timeout,
            retries=retries,
            backoff=backoff,
            transport=transport,
        )

    @property
    def name(self) -> str:
        return f"llm:{self.model}"

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ChatClient({self.url!r}, model={self.model!r})"

    def complete(
        self, messages: Sequence[Mapping[str, Any]], *, max_tokens: int | None = None
    ) -> Completion:
        """The model's answer to ``messages`` (OpenAI chat messages: ``role`` and
        ``content``). Raises :class:`~precis.errors.LLMError` when the endpoint fails or
        the answer holds no text."""
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": _checked(messages),
            "temperature": self.temperature,
            "stream": False,
        }
        cap = _cap(max_tokens) if max_tokens is not None else self.max_tokens
        if cap is not None:
            payload["max_tokens"] = cap
        start = time.perf_counter()
        answer = self._http.post(payload)
        text = self._text(answer)
        usage = answer.get("usage")
        model = answer.get("model")
        return Completion(
            text=text,
            prompt_tokens=_usage(usage, "prompt_tokens"),
            completion_tokens=_usage(usage, "completion_tokens"),
            model=model if isinstance(model, str) and model else self.model,
            elapsed_s=time.perf_counter() - start,
        )

    def _text(self, answer: Any) -> str:
        def bad(problem: str) -> LLMError:
            return LLMError(f"bad answer: {problem}", where=self.url)

        if not isinstance(answer, dict):
            raise bad(f"expected a JSON object, got {type(answer).__name__}")
        error = answer.get("error")
        if error is not None and "choices" not in answer:  # some servers say 200 + error
            raise bad(f"the endpoint reports an error: {error!r:.200}")
        choices = answer.get("choices")
        if not isinstance(choices, list):
            raise bad("no 'choices' list")
        if not choices:
            raise bad("'choices' is empty")
        first = choices[0]
        message = first.get("message") if isinstance(first, dict) else None
        if not isinstance(message, dict):
            raise bad("choices[0] has no 'message' object")
        content = message.get("content")
        if content is None:
            raise bad("choices[0].message has no content")
        if not isinstance(content, str):
            raise bad(f"choices[0].message.content is {type(content).__name__}, not text")
        if not content.strip():
            raise bad("choices[0].message.content is empty")
        return content.strip()


def client_from_env(where: str = _WHERE, **options: Any) -> ChatClient:
    """A :class:`ChatClient` of the model ``$PRECIS_LLM_URL`` and ``$PRECIS_LLM_MODEL``
    name (``options`` go to it). When either is not set, a
    :class:`~precis.errors.ConfigError` at ``where`` names every variable to set."""
    unset = [name for name in (LLM_URL_ENV, LLM_MODEL_ENV) if not os.environ.get(name, "").strip()]
    if unset:
        raise ConfigError(
            f"no OpenAI-compatible model is set: set {' and '.join(unset)} (e.g. "
            f"{LLM_URL_ENV}=http://localhost:8000/v1 {LLM_MODEL_ENV}=NAME; {LLM_KEY_ENV} if "
            "it needs a key)", where=where)
    return ChatClient(**options)


def _checked(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` as a list of dicts, each with a known role and text (or parts) content."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence) or not messages:
        raise FormatError("messages must be a non-empty list of chat messages", where="messages")
    out: list[dict[str, Any]] = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise FormatError(
                f"message {i} is {type(message).__name__}, not a mapping", where="messages"
            )
        role = message.get("role")
        if role not in _ROLES:
            raise FormatError(
                f"message {i} has role {role!r} (expected {', '.join(sorted(_ROLES))})",
                where="messages",
            )
        if not isinstance(message.get("content"), (str, list)):
            raise FormatError(f"message {i} has no text content", where="messages")
        out.append(dict(message))
    return out


def _cap(value: int | None) -> int | None:
    return None if value is None else check_positive_int("max_tokens", value, where=_WHERE)


def _usage(usage: object, key: str) -> int:
    value = usage.get(key) if isinstance(usage, dict) else None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return 0
    return value
