"""Schemathesis against `/openapi.json` of the app over the hostile snapshot, with a key file: every
endpoint, valid and invalid inputs, no 5xx, every response valid against its declared schema, and a
request without the key refused.

Bounded (`EXAMPLES` per endpoint and mode) and derandomised, so a run is repeatable. Operations are
driven with `as_strategy` and Hypothesis directly: one test walks them all and reports every failure.
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import positive_data_acceptance

from tests.hostile.conftest import FUZZ_KEY

pytestmark = pytest.mark.slow  # needs the hostile build

EXAMPLES = 10


def excluded(path: str) -> list:
    """Read takes exactly one locator (or `targets`), a rule the OpenAPI document does not state, so a
    schema-valid body such as `{}` is a correct 400 there."""
    return [positive_data_acceptance] if path == "/api/knowledge/read" else []


def test_api_fuzz(hostile_keyed_app) -> None:
    from petrichor_serving.app import ENDPOINTS

    assert hostile_keyed_app.get("/openapi.json").status_code == 200
    schema = schemathesis.openapi.from_asgi("/openapi.json", hostile_keyed_app.app)
    operations = [result.ok() for result in schema.get_all_operations()]
    # schemathesis leaves out the document it was loaded from; that one is fetched above
    assert {(op.method.upper(), op.path) for op in operations} == {(e.method, e.path) for e in ENDPOINTS} - {("GET", "/openapi.json")}
    failures: list[str] = []
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck))
            def check(case) -> None:
                case.call_and_validate(headers={"Authorization": f"Bearer {FUZZ_KEY}"}, excluded_checks=excluded(operation.path))

            try:
                check()
            except Unsatisfiable:
                assert mode is GenerationMode.NEGATIVE, operation.path  # no input at all, so none can be invalid
            except (Exception, BaseExceptionGroup) as exc:  # collected, so one run names every failing endpoint
                failures.append(f"{operation.method.upper()} {operation.path} ({mode.value}): {str(exc)[:1500]}")
    assert not failures, "\n\n".join(failures)
