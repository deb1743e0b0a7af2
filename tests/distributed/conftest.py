"""Fixtures of the distributed build's services (`services`): Postgres, Redis and two Celery workers per
session and module, moto's S3 server shared with `tests/storage`. A service that cannot start here (its system
package or Python extra is missing; `.ci/run` installs both) skips the tests that need it, with the reason."""

from __future__ import annotations

import pytest

from tests.distributed import services
from tests.storage.conftest import s3_server  # noqa: F401 - the S3 server fixture, shared with tests/storage


def _start(manager):
    try:
        return manager.__enter__()
    except services.Unavailable as exc:
        pytest.skip(f"the distributed build cannot run here: {exc}")


@pytest.fixture(scope="session")
def postgres():
    manager = services.postgres_cluster()
    started = _start(manager)
    try:
        yield started
    finally:
        manager.__exit__(None, None, None)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    manager = services.redis_broker(tmp_path_factory.mktemp("redis"))
    started = _start(manager)
    try:
        yield started
    finally:
        manager.__exit__(None, None, None)


@pytest.fixture(scope="module")
def cluster(postgres, redis_server, s3_server, tmp_path_factory):  # noqa: F811 - requests the imported fixture by name
    """Postgres, Redis and moto, a Dagster home holding `deploy/dagster.yaml`, and two Celery workers."""
    aws = services.s3_env(s3_server.endpoint_url)
    manager = services.celery_cluster(postgres, redis_server, aws, tmp_path_factory.mktemp("cluster"))
    started = _start(manager)
    try:
        yield started
    finally:
        manager.__exit__(None, None, None)
