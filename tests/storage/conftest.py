"""A real S3-compatible server (moto in server mode) on 127.0.0.1 for the object-storage tests.

Started once per session on a free port; each test gets its own bucket. Skips when moto cannot start.
"""

from __future__ import annotations

import itertools
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from petrichor_core.contract.current import read_current
from petrichor_core.contract.manifest import MANIFEST_FILE, Manifest, new_version

_names = itertools.count()


@dataclass(frozen=True)
class S3Server:
    endpoint_url: str

    def env(self, bucket: str, prefix: str = "kb") -> dict[str, str]:
        """The environment a build or a replica is given to use `s3://bucket/prefix` on this server."""
        return {
            "PETRICHOR_DATA": f"s3://{bucket}/{prefix}",
            "AWS_ENDPOINT_URL": self.endpoint_url,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_REGION": "us-east-1",
        }


@pytest.fixture(scope="session")
def s3_server():
    try:
        from moto.server import ThreadedMotoServer
    except ImportError:
        pytest.skip("moto[server] is not installed: the object-storage tests need an S3-compatible server")
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    try:
        server.start()
        host, port = server._server.server_address[:2]
    except Exception as exc:  # noqa: BLE001 - any failure to start means the tests cannot run here
        pytest.skip(f"cannot start the S3 test server on 127.0.0.1: {exc}")
    try:
        yield S3Server(f"http://127.0.0.1:{port}")
    finally:
        server.stop()


@pytest.fixture()
def s3_bucket(s3_server, monkeypatch):
    """A fresh bucket; the AWS variables point at the test server for this test."""
    import boto3

    name = f"petrichor-test-{next(_names)}"
    env = s3_server.env(name)
    for key in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"):
        monkeypatch.setenv(key, env[key])
    monkeypatch.delenv("AWS_ENDPOINT_URL_S3", raising=False)
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    boto3.client(
        "s3", endpoint_url=s3_server.endpoint_url, region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing"
    ).create_bucket(Bucket=name)
    return name


def object_store(s3_server: S3Server, bucket: str, prefix: str = "kb"):
    from petrichor_core.object_store import ObjectStore, parse_location

    return ObjectStore(
        parse_location(
            f"s3://{bucket}/{prefix}", endpoint_url=s3_server.endpoint_url, region="us-east-1", access_key_id="testing", secret_access_key="testing"
        )
    )


def stage_clone(built_data: Path, staging: Path, *, salt: str) -> Manifest:
    """A staging folder holding a copy of the built corpus' current snapshot under a new version (and its
    history records), as a build leaves it just before it publishes."""
    snaps = built_data / "snapshots"
    base = read_current(snaps)
    version = new_version(salt=salt)
    shutil.copytree(snaps / base, staging / "snapshots" / version)
    if not (staging / "history").exists():
        shutil.copytree(built_data / "history" / "articles", staging / "history" / "articles")
    path = staging / "snapshots" / version / MANIFEST_FILE
    manifest = Manifest.from_json(path.read_text(encoding="utf-8"))
    manifest.version, manifest.parent_version = version, base
    path.write_text(manifest.to_json(), encoding="utf-8")
    return manifest


def remote_files(store) -> list[str]:
    return store.list_files()


def load_json(raw: bytes) -> dict:
    return json.loads(raw.decode("utf-8"))
