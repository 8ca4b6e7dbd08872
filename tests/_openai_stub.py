"""A real HTTP server on 127.0.0.1 that speaks the OpenAI wire format, for tests.

``POST /v1/chat/completions`` answers ``{"choices": [{"message": {"content": ...}}],
"usage": ...}`` and ``POST /v1/embeddings`` answers ``{"data": [{"index", "embedding"}]}``
(a hashed bag of words, :data:`DIM` values). Every request is recorded (path, headers,
decoded body, arrival time). What the server does is set per test:

* ``stub.mode``: the answer to every request (default ``"ok"``);
* ``stub.queue``: answers for the next requests, first in first out, before ``mode``.

An answer is one of :data:`MODES`, a tuple ``(status, body, headers)`` sent as is,
``("sleep", seconds)`` (then ``ok``), ``"reversed"`` (``ok`` with the embedding rows in
reverse order), or a function of the request body returning the raw answer text:

``ok``            the answer, with ``stub.reply`` (text, or a function of the request body)
                  and ``stub.usage`` (``None`` leaves it out);
``slow``          sleeps ``stub.delay`` seconds, then answers ``ok``;
``500``           HTTP 500 with a JSON error body;
``429``           HTTP 429 with ``Retry-After: stub.retry_after``;
``not_json``      HTTP 200 with an HTML body;
``no_choices``    HTTP 200 with ``"choices": []``;
``wrong_types``   HTTP 200 with a number where the text should be;
``empty_content`` HTTP 200 with blank text.

Use it as a fixture (``from _openai_stub import openai_stub`` in a conftest), and
:func:`closed_port_url` for a URL nobody listens on.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

__all__ = ["DIM", "MODES", "OpenAIStub", "Recorded", "bag_of_words", "closed_port_url",
           "openai_stub"]

DIM = 16
MODES = ("ok", "slow", "500", "429", "not_json", "no_choices", "wrong_types", "empty_content")
DEFAULT_REPLY = "Stub summary."
# a mode name, (status, raw body, headers), ("sleep", seconds) then ok, "reversed" (embedding
# rows in reverse order), or a callable given the request body that returns the raw answer
Action = str | tuple[Any, ...] | Callable[[Any], str]


def bag_of_words(text: str) -> list[float]:
    """A deterministic 16-value vector of ``text`` (never all zero)."""
    vector = [0.0] * DIM
    for word in text.lower().split():
        vector[hashlib.md5(word.encode()).digest()[0] % DIM] += 1.0
    vector[0] += 0.5
    return vector


@dataclass
class Recorded:
    """One request as it arrived."""

    path: str
    headers: dict[str, str]
    body: Any  # the decoded JSON, or the raw text when it is not JSON
    at: float  # time.perf_counter() on arrival


@dataclass
class OpenAIStub:
    url: str = ""  # http://127.0.0.1:<port>/v1
    mode: Action = "ok"
    queue: list[Action] = field(default_factory=list)
    reply: str | Callable[[dict[str, Any]], str] = DEFAULT_REPLY
    usage: dict[str, Any] | None = field(
        default_factory=lambda: {"prompt_tokens": 120, "completion_tokens": 7,
                                 "total_tokens": 127}
    )
    delay: float = 1.0
    retry_after: str = "0"
    requests: list[Recorded] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def next_action(self) -> Action:
        with self._lock:
            return self.queue.pop(0) if self.queue else self.mode

    @property
    def bodies(self) -> list[Any]:
        return [r.body for r in self.requests]


def _chat_answer(stub: OpenAIStub, body: dict[str, Any], content: Any) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "model": body.get("model", "stub"),
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
    }
    if stub.usage is not None:
        answer["usage"] = stub.usage
    return answer


def _ok(stub: OpenAIStub, path: str, body: Any) -> dict[str, Any]:
    if path.endswith("/embeddings"):
        texts = body["input"]
        data = [{"object": "embedding", "index": i, "embedding": bag_of_words(t)}
                for i, t in enumerate(texts)]
        return {"object": "list", "data": data, "model": body.get("model"),
                "usage": {"prompt_tokens": 1, "total_tokens": 1}}
    reply = stub.reply(body) if callable(stub.reply) else stub.reply
    return _chat_answer(stub, body, reply)


def _handler(stub: OpenAIStub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            try:
                body: Any = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
            stub.requests.append(
                Recorded(self.path, dict(self.headers), body, time.perf_counter())
            )
            action = stub.next_action()
            if action == "slow":
                time.sleep(stub.delay)
                action = "ok"
            if isinstance(action, tuple) and action[0] == "sleep":
                time.sleep(action[1])
                action = "ok"
            if callable(action):
                return self._send(200, action(body), {})
            if isinstance(action, tuple):
                status, text, headers = action
                return self._send(status, text, headers)
            if self.path not in ("/v1/chat/completions", "/v1/embeddings"):
                return self._send(404, json.dumps({"error": f"no route {self.path}"}), {})
            if action in ("ok", "reversed"):
                answer = _ok(stub, self.path, body)
                if action == "reversed":
                    answer["data"].reverse()
                return self._send(200, json.dumps(answer), {})
            if action == "500":
                return self._send(500, json.dumps({"error": {"message": "stub overloaded"}}), {})
            if action == "429":
                return self._send(429, json.dumps({"error": {"message": "rate limited"}}),
                                  {"Retry-After": stub.retry_after})
            if action == "not_json":
                return self._send(200, "<html><body>502 upstream gone</body></html>", {})
            if action == "no_choices":
                return self._send(200, json.dumps({"object": "chat.completion", "choices": []}),
                                  {})
            if action == "wrong_types":
                return self._send(200, json.dumps(_chat_answer(stub, body, 42)), {})
            if action == "empty_content":
                return self._send(200, json.dumps(_chat_answer(stub, body, "  \n")), {})
            raise AssertionError(f"unknown stub mode {action!r}")

        def _send(self, status: int, text: str, headers: dict[str, str]) -> None:
            payload = text.encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(payload)  # the client may have given up (timeouts)

    return Handler


@pytest.fixture
def openai_stub() -> Iterator[OpenAIStub]:
    """A running stub server; its state is reset for every test."""
    state = OpenAIStub()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()


def closed_port_url() -> str:
    """A ``/v1`` URL on 127.0.0.1 where nothing listens (connections are refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    return f"http://127.0.0.1:{port}/v1"
