"""``precis serve --workers N``: N worker processes that share the connections.

uvicorn's own workers share one listening socket, and whichever worker wakes first accepts
every pending connection: a few long-lived keep-alive clients then all land on one worker
(measured: 32 clients, one worker 13.2 s of CPU, the other 0.04 s). On Linux each worker here
binds a socket of its own to the same address with ``SO_REUSEPORT``, and the kernel spreads
new connections over the sockets (by a hash of the client's address and port). The parent
only supervises: it forwards SIGINT / SIGTERM to the workers (each shuts down gracefully,
as uvicorn does), starts a new worker when one dies, and stops every worker when one cannot
start (exit code 3, as uvicorn). A worker whose parent is gone stops too.

Where ``SO_REUSEPORT`` is missing (or does not balance: anything but Linux) it falls back to
uvicorn's own workers.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import socket
import sys
import threading
import time
from collections import deque
from multiprocessing.context import SpawnProcess
from types import FrameType

from precis.service._context import ServiceSettings

__all__ = ["STARTUP_FAILURE", "reuse_port_available", "serve_workers"]

STARTUP_FAILURE = 3  # a worker's exit code when it could not start (uvicorn's too)
_RESTARTS = 10  # more worker restarts than this within _RESTART_WINDOW seconds: give up
_RESTART_WINDOW = 60.0


def reuse_port_available() -> bool:
    """Whether the kernel balances connections over ``SO_REUSEPORT`` sockets (Linux)."""
    return sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")


def _socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` with ``SO_REUSEPORT`` (not listening yet)."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
    except BaseException:
        sock.close()
        raise
    return sock


def serve_workers(settings: ServiceSettings, *, host: str, port: int, workers: int,
                  log_level: str) -> int:
    """Serve with ``workers`` processes until SIGINT / SIGTERM; the exit code (0, or
    :data:`STARTUP_FAILURE` when a worker could not start)."""
    from precis.errors import ConfigError

    reserved = None
    if reuse_port_available():
        try:
            # the parent holds the port (bound, never listening: it gets no connection), so
            # that port 0 means one port for every worker and a restarted worker finds it
            reserved = _socket(host, port)
        except OSError as err:
            if err.errno != errno.ENOPROTOOPT:  # ENOPROTOOPT: this kernel refuses the option
                raise ConfigError(f"cannot listen on {host}:{port}: {err.strerror or err}",
                                  where="--host/--port") from err
    if reserved is None:
        return _uvicorn_workers(settings, host=host, port=port, workers=workers,
                                log_level=log_level)
    with reserved:
        return _Supervisor(settings, host, int(reserved.getsockname()[1]), workers,
                           log_level).run()


def _uvicorn_workers(settings: ServiceSettings, *, host: str, port: int, workers: int,
                     log_level: str) -> int:
    """uvicorn's workers: one shared socket (no balancing of long-lived connections)."""
    import json

    import uvicorn

    from precis.service.app import SETTINGS_ENV

    os.environ[SETTINGS_ENV] = json.dumps({**settings.__dict__,
                                           "limits": settings.limits.__dict__})
    uvicorn.run("precis.service.app:app_from_env", factory=True, host=host, port=port,
                workers=workers, log_level=log_level)
    return 0


class _Supervisor:
    def __init__(self, settings: ServiceSettings, host: str, port: int, workers: int,
                 log_level: str) -> None:
        import multiprocessing

        self.args = (settings, host, port, log_level)
        self.count = workers
        self.context = multiprocessing.get_context("spawn")
        self.signals: list[int] = []
        self.restarts: deque[float] = deque()

    def _start(self) -> SpawnProcess:
        process = self.context.Process(target=_worker, args=self.args, name="precis-worker")
        process.start()
        return process

    def _on_signal(self, sig: int, frame: FrameType | None) -> None:
        self.signals.append(sig)

    def run(self) -> int:
        from multiprocessing.connection import wait

        handled = (signal.SIGINT, signal.SIGTERM)
        previous = {sig: signal.signal(sig, self._on_signal) for sig in handled}
        processes: list[SpawnProcess] = []
        code, stopping = 0, False
        try:
            processes = [self._start() for _ in range(self.count)]
            while processes:
                while self.signals:  # the first: graceful; a second Ctrl+C forces (uvicorn)
                    _send(processes, signal.SIGINT if stopping else signal.SIGTERM)
                    del self.signals[0]
                    stopping = True
                wait([p.sentinel for p in processes], timeout=0.2)
                for process in [p for p in processes if p.exitcode is not None]:
                    processes.remove(process)
                    if stopping:
                        continue
                    if process.exitcode == STARTUP_FAILURE or self._too_many_restarts():
                        why = ("could not start" if process.exitcode == STARTUP_FAILURE else
                               f"exited more than {_RESTARTS} times within "
                               f"{_RESTART_WINDOW:.0f} s")
                        _echo(f"precis serve: a worker {why}; stopping")
                        code, stopping = STARTUP_FAILURE, True
                        _send(processes, signal.SIGTERM)
                    else:
                        _echo(f"precis serve: worker {process.pid} exited "
                              f"(code {process.exitcode}); starting another")
                        processes.append(self._start())
        finally:
            _send(processes, signal.SIGTERM)  # an exception here: leave no worker behind
            for process in processes:
                process.join()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        return code

    def _too_many_restarts(self) -> bool:
        now = time.monotonic()
        self.restarts.append(now)
        while self.restarts and self.restarts[0] < now - _RESTART_WINDOW:
            self.restarts.popleft()
        return len(self.restarts) > _RESTARTS


def _send(processes: list[SpawnProcess], sig: int) -> None:
    for process in processes:
        if process.exitcode is None and process.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, sig)


def _echo(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _worker(settings: ServiceSettings, host: str, port: int, log_level: str) -> None:
    """One worker process: its own socket, the app, uvicorn's server."""
    os.setpgid(0, 0)  # a terminal's Ctrl+C reaches the parent only; it forwards it once
    parent = os.getppid()
    try:
        import uvicorn

        from precis.errors import PrecisError
        from precis.service.app import create_app

        sock = _socket(host, port)
        app = create_app(settings)
    except KeyboardInterrupt:  # a second Ctrl+C while starting
        sys.exit(1)
    except (OSError, PrecisError) as err:
        _echo(f"precis: error: worker {os.getpid()}: {err}")
        sys.exit(STARTUP_FAILURE)
    server = uvicorn.Server(uvicorn.Config(app, log_level=log_level))

    def orphaned() -> None:  # the parent was killed (SIGKILL): stop, do not hold the port
        while not server.should_exit:
            if os.getppid() != parent:
                server.should_exit = True
            time.sleep(1.0)

    threading.Thread(target=orphaned, daemon=True).start()
    # uvicorn raises the SIGINT it handled again once it is done
    with contextlib.suppress(KeyboardInterrupt):
        server.run(sockets=[sock])
    if not server.started:
        sys.exit(STARTUP_FAILURE)
