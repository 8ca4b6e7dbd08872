"""Prometheus text metrics of one service process: requests, latency, compactions and the
tokens they saved, memories added. Each worker process counts its own (Prometheus sums
them over the scrape targets)."""

from __future__ import annotations

import bisect
import threading
from collections import defaultdict

__all__ = ["Metrics"]

_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Metrics:
    """Counters and a latency histogram, rendered in the Prometheus text format."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: dict[tuple[str, str, int], int] = defaultdict(int)
        self._latency: dict[str, list[int]] = {}
        self._latency_sum: dict[str, float] = defaultdict(float)
        self._latency_count: dict[str, int] = defaultdict(int)
        self._counters: dict[str, float] = defaultdict(float)

    def request(self, route: str, method: str, status: int, seconds: float) -> None:
        with self._lock:
            self._requests[(route, method, status)] += 1
            buckets = self._latency.setdefault(route, [0] * (len(_BUCKETS) + 1))
            buckets[bisect.bisect_left(_BUCKETS, seconds)] += 1
            self._latency_sum[route] += seconds
            self._latency_count[route] += 1

    def add(self, name: str, by: float = 1) -> None:
        """Add to a counter: ``compactions``, ``tokens_saved``, ``memories_added`` ..."""
        with self._lock:
            self._counters[name] += by

    def render(self) -> str:
        lines = ["# HELP precis_requests_total HTTP requests by route, method and status.",
                 "# TYPE precis_requests_total counter"]
        with self._lock:
            for (route, method, status), n in sorted(self._requests.items()):
                lines.append(f'precis_requests_total{{route="{_label(route)}",method="{method}",'
                             f'status="{status}"}} {n}')
            lines += ["# HELP precis_request_seconds Request latency by route.",
                      "# TYPE precis_request_seconds histogram"]
            for route, buckets in sorted(self._latency.items()):
                total = 0
                for bound, n in zip((*_BUCKETS, float("inf")), buckets):
                    total += n
                    le = "+Inf" if bound == float("inf") else repr(bound)
                    lines.append(f'precis_request_seconds_bucket{{route="{_label(route)}",'
                                 f'le="{le}"}} {total}')
                lines.append(f'precis_request_seconds_sum{{route="{_label(route)}"}} '
                             f"{self._latency_sum[route]:.6f}")
                lines.append(f'precis_request_seconds_count{{route="{_label(route)}"}} '
                             f"{self._latency_count[route]}")
            for name, help_text in (
                ("compactions", "Compactions run (compress calls and session compactions)."),
                ("tokens_saved", "Tokens removed by those compactions."),
                ("memories_added", "Memory cards added."),
            ):
                lines += [f"# HELP precis_{name}_total {help_text}",
                          f"# TYPE precis_{name}_total counter",
                          f"precis_{name}_total {self._counters.get(name, 0):g}"]
        return "\n".join(lines) + "\n"


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
