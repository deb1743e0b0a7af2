"""A build on Dagster's multiprocess executor with 4 workers (`PETRICHOR_BUILD_WORKERS`) runs exactly the
stale bucket, every step in its own process, keeps one model step at a time, and publishes the same snapshot
tables, row for row, as the in-process build of the same edit."""

from __future__ import annotations

import pyarrow as pa
import pytest
from dagster import DagsterInstance

from petrichor_core.contract.current import read_current
from petrichor_core.contract.manifest import read_manifest, read_table
from petrichor_core.contract.schemas import SCHEMAS, UNIQUE
from petrichor_pipeline.assets._metadata import MODEL_TAG
from petrichor_pipeline.builder.steps.articles import current_bucket_versions
from petrichor_pipeline.definitions import PARTITIONED_ASSETS
from petrichor_pipeline.resources import build_context
from petrichor_pipeline.runner import run_build
from petrichor_pipeline.sources.identity import article_id_of, bucket_of
from petrichor_pipeline.staleness import stale_buckets
from tests.conftest import isolated_env

pytestmark = pytest.mark.slow

EDITED = "petrichor-en/guides/access-control.md"
POOL_CONFIG = "telemetry:\n  enabled: false\nconcurrency:\n  pools:\n    default_limit: 1\n"
"""The production setting of docs/scaling.md: one model step of each pool at a time across runs."""


def _tables(data_dir) -> dict[str, list[dict]]:
    snaps = data_dir / "snapshots"
    manifest = read_manifest(snaps, read_current(snaps))
    out = {}
    for name in SCHEMAS:
        table: pa.Table = read_table(snaps, manifest, name)
        key = [UNIQUE[name]] if name in UNIQUE else table.column_names
        out[name] = sorted(table.to_pylist(), key=lambda r: tuple(str(r[k]) for k in key))
    return out


def _edited_copy(built_corpus, root):
    """The session's build (data, corpus and the Dagster instance that built it) with one article edited."""
    corpus, data, home = built_corpus.copy_to(root)
    (home / "dagster.yaml").write_text(POOL_CONFIG, encoding="utf-8")
    path = corpus / EDITED
    path.write_text(path.read_text(encoding="utf-8") + "\n\n## Workers\n\nAn added paragraph.\n", encoding="utf-8")
    return corpus, data, home


def _build(corpus, data, home, monkeypatch, *, parallel: bool):
    isolated_env(monkeypatch, data, corpus, home)
    with DagsterInstance.from_config(str(home)) as instance:
        build = run_build(build_context(str(data), str(corpus)), instance=instance, parallel=parallel)
        assert build.ok and build.published, build.to_json()
        return build, instance.get_run_by_id(build.runs[0].run_id), [r.step_key for r in instance.all_logs(build.runs[0].run_id) if r.step_key]


def test_a_four_worker_build_of_the_stale_bucket_equals_the_in_process_build(built_corpus, tmp_path, monkeypatch):
    aid = article_id_of(EDITED)
    reference = _edited_copy(built_corpus, tmp_path / "in-process")
    _build(*reference, monkeypatch, parallel=False)

    corpus, data, home = _edited_copy(built_corpus, tmp_path / "workers")
    monkeypatch.setenv("PETRICHOR_BUILD_WORKERS", "4")
    build, run, steps = _build(corpus, data, home, monkeypatch, parallel=True)
    assert build.to_json()["partitions"]["materialized"] == [bucket_of(aid)]
    assert run.job_name == "bucket_build"
    executor = run.run_config["execution"]["config"]["multiprocess"]
    assert executor["max_concurrent"] == 4
    assert executor["tag_concurrency_limits"] == [{"key": MODEL_TAG, "limit": 1}]  # in-process embedder: one model step at a time
    assert set(steps) >= {a.key.to_user_string() for a in PARTITIONED_ASSETS}
    assert set(build.runs[0].calls_by_article) == {aid}
    ctx = build_context(str(data), str(corpus))
    with DagsterInstance.from_config(str(home)) as instance:
        assert stale_buckets(instance, PARTITIONED_ASSETS, current_bucket_versions(ctx), ctx.build_key()) == []

    parallel, in_process = _tables(data), _tables(reference[1])
    for name in SCHEMAS:
        assert len(parallel[name]) == len(in_process[name]), name
        assert parallel[name] == in_process[name], name


def test_every_model_step_is_in_a_model_pool():
    from petrichor_pipeline.assets._metadata import EMBED_POOL, MODEL_POOL
    from petrichor_pipeline.jobs import all_assets

    model_steps = [a for a in all_assets() if getattr(a, "op", None) is not None and a.op.tags.get(MODEL_TAG)]
    assert {a.key.to_user_string() for a in model_steps} >= {"questions", "wiki_candidates", "chunk_vectors"}
    assert {a.op.pool for a in model_steps} == {MODEL_POOL, EMBED_POOL}
