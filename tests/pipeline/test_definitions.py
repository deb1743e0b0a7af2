"""The Dagster code location: it loads, every asset materializes into a temporary folder, checks pass."""

from __future__ import annotations

import re
import shutil

import pyarrow.parquet as pq
import pytest
from dagster import AssetKey, DagsterInstance, materialize

from petrichor_core.config import load_settings
from petrichor_pipeline.builder.warehouse import Warehouse
from petrichor_pipeline.definitions import PARTITIONED_ASSETS, PUBLISH_ASSETS, all_assets, defs
from petrichor_pipeline.resources import PetrichorResource, RunSettings
from petrichor_pipeline.sources.identity import article_id_of, bucket_of
from tests.conftest import CORPUS, EMBED_CACHE, REPO

ONE = "petrichor-en/guides/quick-start.md"


def test_definitions_load_with_groups_jobs_schedules_sensors_and_checks():
    graph = defs.resolve_asset_graph()
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    assert keys == {
        "corpus",
        "articles",
        "chunks",
        "questions",
        "wiki_candidates",
        "page_index",
        "chunk_vectors",
        "question_vectors",
        "chunk_windows",
        "window_vectors",
        "wiki_pages",
        "snapshot",
        "published_snapshot",
    }
    assert defs.resolve_job_def("bucket_build") and defs.resolve_job_def("publish")
    schedule = defs.resolve_schedule_def("nightly_full_rebuild")
    assert schedule.default_status.value == "STOPPED"
    assert {s.name for s in defs.sensors} == {"corpus_observer", "corpus_sensor", "publish_after_build", "discard_refused_snapshot"}
    checks = {k.name for k in graph.asset_check_keys}
    assert len(checks) == 9
    assert {"wiki_links_resolve", "wiki_has_no_orphan_pages", "wiki_sources_are_current", "articles_built_by_current_code"} <= checks
    for key in graph.get_all_asset_keys():
        assert graph.get(key).description, key


def test_every_sensor_and_schedule_is_in_the_readme_with_its_default_state():
    section = (REPO / "README.md").read_text(encoding="utf-8").split("\n## Dagster\n", 1)[1].split("\n## ", 1)[0]
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `(\w+)` \| (on|off) \|", section, re.M)}
    automations = [*defs.sensors, *defs.schedules]
    assert rows == {a.name: "on" if a.default_status.value == "RUNNING" else "off" for a in automations}


def test_runs_the_ui_launches_execute_in_one_process():
    """The asset graph's materializations (`__ASSET_JOB`) and `publish` on the in-process executor; a bucket
    partition launched from the UI (the job's partitioned config) in process too."""
    assert defs.resolve_implicit_global_asset_job_def().executor_def.name == "in_process"
    assert defs.resolve_job_def("publish").executor_def.name == "in_process"
    bucket_build = defs.resolve_job_def("bucket_build")
    assert bucket_build.partitioned_config.get_run_config_for_partition_key("03")["execution"] == {"config": {"in_process": {}}}


@pytest.mark.slow
def test_materialize_all_assets_into_a_temporary_folder(tmp_path, monkeypatch):
    corpus = tmp_path / "corpus"
    (corpus / "petrichor-en" / "guides").mkdir(parents=True)
    shutil.copy(CORPUS / "petrichor-en" / "_kb.yaml", corpus / "petrichor-en")
    shutil.copy(CORPUS / ONE, corpus / ONE)
    monkeypatch.setenv("PETRICHOR_EMBED_CACHE", str(EMBED_CACHE))
    data = tmp_path / "data"
    resource = PetrichorResource(settings=RunSettings.of(load_settings().with_paths(str(data), str(corpus))))
    bucket = bucket_of(article_id_of(ONE))
    with DagsterInstance.ephemeral() as instance:
        res = materialize(all_assets(), instance=instance, partition_key=bucket, resources={"petrichor": resource}, selection=PARTITIONED_ASSETS)
        assert res.success
        res = materialize(all_assets(), instance=instance, resources={"petrichor": resource}, selection=PUBLISH_ASSETS)
        assert res.success
        assert instance.get_latest_materialization_event(AssetKey("snapshot")) is not None

    chunks = Warehouse(data / "warehouse").read("chunks", bucket)
    assert chunks.num_rows > 0 and set(chunks.column("article_id").to_pylist()) == {article_id_of(ONE)}
    version = (data / "snapshots" / "CURRENT").read_text().strip()
    assert pq.read_table(data / "snapshots" / version / "chunks.parquet").num_rows == chunks.num_rows


def test_loading_the_code_location_does_not_import_the_openai_client() -> None:
    """Every run Dagster launches starts a process that loads the code location; the `openai` package costs
    1-3 s of that start and only a configured endpoint needs it."""
    import subprocess
    import sys

    probe = "import sys, petrichor_pipeline.definitions; print('openai' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "False", done.stderr[-2000:]
