"""Property-based fuzzing of the OpenAPI spec (schemathesis) against a real server: calls of
every operation, valid and invalid by the spec, never get a 5xx; responses fit the spec
(status documented, content type, schema) and every error is a JSON error body."""

from __future__ import annotations

from pathlib import Path

import pytest

schemathesis = pytest.importorskip("schemathesis", reason="schemathesis is not installed")

from _server import start_server  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis.errors import Unsatisfiable  # noqa: E402

from precis.service._context import Limits  # noqa: E402

EXAMPLES = 20  # per operation and mode (about 17 operations x 2 modes)


@pytest.mark.parametrize("mode", ["positive", "negative"])
def test_no_5xx_and_responses_fit_the_spec(tmp_path: Path, mode: str) -> None:
    from schemathesis.checks import (
        content_type_conformance,
        not_a_server_error,
        response_schema_conformance,
        status_code_conformance,
    )

    checks = [not_a_server_error, status_code_conformance, content_type_conformance,
              response_schema_conformance]
    for server in start_server(tmp_path / "fuzz.sqlite3", Limits(rate=1e6, burst=10**6)):
        assert _fuzz(server.url, schemathesis.GenerationMode(mode), checks) >= 100


def _fuzz(url: str, mode: object, checks: list[object]) -> int:
    """Call every operation of the spec at ``url`` with generated cases; how many calls."""
    schema = schemathesis.openapi.from_url(f"{url}/openapi.json")
    calls = 0
    for result in schema.get_all_operations():
        operation = result.ok()

        @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy(mode))
        def call(case: object) -> None:
            nonlocal calls
            response = case.call(base_url=url)  # type: ignore[attr-defined]
            calls += 1
            assert response.status_code < 500, (case, response.text)
            case.validate_response(response, checks=checks)  # type: ignore[attr-defined]
            if response.status_code >= 400 and response.status_code != 405:
                error = response.json()["error"]
                assert error["type"] and error["message"], response.text

        try:
            call()
        except Unsatisfiable:  # no invalid call exists (an operation without arguments)
            assert str(mode).endswith("negative")
    return calls


def test_the_spec_is_valid_openapi(tmp_path: Path) -> None:
    import httpx

    for server in start_server(tmp_path / "spec.sqlite3"):
        spec = httpx.get(f"{server.url}/openapi.json").json()
        assert spec["openapi"].startswith("3.")
        schemathesis.openapi.from_dict(spec).validate()
