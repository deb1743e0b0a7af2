"""Schemathesis against `/openapi.json` of the app over the hostile snapshot: every endpoint, no 5xx,
responses valid against the declared schemas. Bounded and derandomised, so a run is repeatable."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

pytestmark = pytest.mark.slow  # needs the hostile build

EXAMPLES_PER_ENDPOINT = 12


@pytest.fixture()
def api_schema(hostile_app):
    return schemathesis.openapi.from_asgi("/openapi.json", hostile_app.app)


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(max_examples=EXAMPLES_PER_ENDPOINT, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck))
def test_api_fuzz(case) -> None:
    case.call_and_validate()
