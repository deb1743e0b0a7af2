"""Asset checks over the published bundled snapshot, and that they catch a broken snapshot."""

from __future__ import annotations

import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from dagster import AssetSelection, DagsterInstance, Definitions

from petrichor_core.config import load_settings
from petrichor_pipeline.definitions import all_assets
from petrichor_pipeline.resources import PetrichorResource, RunSettings
from petrichor_pipeline.snapshot_checks import ASSET_CHECKS, BLOCKING
from tests.conftest import EMBED_CACHE

pytestmark = pytest.mark.slow  # builds a corpus, starts a server or a subprocess


def _evaluate(data_dir, corpus_dir, monkeypatch) -> dict:
    monkeypatch.setenv("PETRICHOR_EMBED_CACHE", str(EMBED_CACHE))
    resource = PetrichorResource(settings=RunSettings.of(load_settings().with_paths(str(data_dir), str(corpus_dir))))
    d = Definitions(assets=all_assets(), asset_checks=ASSET_CHECKS, resources={"petrichor": resource})
    checks = AssetSelection.checks_for_assets("snapshot").resolve_checks(d.resolve_asset_graph())
    job = d.resolve_implicit_global_asset_job_def().get_subset(asset_check_selection=set(checks))
    with DagsterInstance.ephemeral() as instance:
        res = job.execute_in_process(instance=instance, raise_on_error=False)
    return {e.check_name: e for e in res.get_asset_check_evaluations()}


def test_checks_pass_on_the_bundled_snapshot(built_corpus, monkeypatch):
    evals = _evaluate(built_corpus.data_dir, built_corpus.corpus_dir, monkeypatch)
    assert len(evals) == 9 and BLOCKING < set(evals)
    assert all(e.passed for e in evals.values()), [(n, e.metadata) for n, e in evals.items() if not e.passed]


def test_stale_chunk_is_caught(built_corpus, tmp_path, monkeypatch):
    data = tmp_path / "data"
    shutil.copytree(built_corpus.data_dir, data)
    version = (data / "snapshots" / "CURRENT").read_text().strip()
    path = data / "snapshots" / version / "chunks.parquet"
    table = pq.read_table(path)
    content = table.column("content").to_pylist()
    content[0] += " (edited after publishing)"
    pq.write_table(table.set_column(table.schema.get_field_index("content"), "content", pa.array(content)), path)

    evals = _evaluate(data, built_corpus.corpus_dir, monkeypatch)
    assert not evals["snapshot_has_no_stale_articles"].passed
    assert not evals["snapshot_checksums_verify"].passed  # the edited file no longer matches its checksum
    assert evals["snapshot_referential_integrity"].passed
