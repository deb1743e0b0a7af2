"""Schemathesis against `/openapi.json` of the app over the hostile snapshot, with a key file: every
endpoint (path parameters included, `/mcp` too), valid and invalid inputs, every check, no 5xx, every
response valid against its declared schema, and a request without the key refused.

Two of schemathesis's phases: coverage (its deterministic boundary and type cases: each field missing,
null, of the wrong type, at and past its limits) and fuzzing (`EXAMPLES` per endpoint and mode,
derandomised), so a run is repeatable. Operations are driven directly: one test walks them all and reports
every failure.
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from tests.hostile.conftest import FUZZ_KEY

pytestmark = pytest.mark.slow  # needs the hostile build

EXAMPLES = 10


EVENT_STREAMS = {("GET", "/mcp")}
"""Operations answering with an event stream that stays open until the client leaves (MCP's server-to-client
stream): schemathesis reads one for the request timeout, so it gets `STREAM_SECONDS`, not the default 10 s."""
STREAM_SECONDS = 2.0


def test_api_fuzz(hostile_keyed_app) -> None:
    from petrichor_serving.app import ENDPOINTS

    assert hostile_keyed_app.get("/openapi.json").status_code == 200
    schema = schemathesis.openapi.from_asgi("/openapi.json", hostile_keyed_app.app)
    operations = [result.ok() for result in schema.get_all_operations()]
    # schemathesis leaves out the document it was loaded from; that one is fetched above
    assert {(op.method.upper(), op.path) for op in operations} == {(e.method, e.path) for e in ENDPOINTS} - {("GET", "/openapi.json")}
    failures: list[str] = []
    headers = {"Authorization": f"Bearer {FUZZ_KEY}"}
    for operation in operations:
        extra = {"timeout": STREAM_SECONDS} if (operation.method.upper(), operation.path) in EVENT_STREAMS else {}
        config = schema.config.generation_for(operation=operation)
        coverage = list(schema.iter_coverage_cases(operation, generation_modes=list(GenerationMode), generation_config=config))
        assert coverage, f"{operation.method.upper()} {operation.path}: no coverage cases"
        for case in coverage:
            try:
                case.call_and_validate(headers=headers, **extra)
            except (Exception, BaseExceptionGroup) as exc:
                failures.append(f"{operation.method.upper()} {operation.path} (coverage): {str(exc)[:1500]}")
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck))
            def check(case) -> None:
                case.call_and_validate(headers=headers, **extra)

            try:
                check()
            except Unsatisfiable:
                assert mode is GenerationMode.NEGATIVE, operation.path  # no input at all, so none can be invalid
            except (Exception, BaseExceptionGroup) as exc:  # collected, so one run names every failing endpoint
                failures.append(f"{operation.method.upper()} {operation.path} ({mode.value}): {str(exc)[:1500]}")
    assert not failures, "\n\n".join(failures)
