"""A partition materialized from the Dagster UI runs the same steps as `petrichor build`: one run in one process
(the code location's executor), then a publish that `publish_after_build` requests by itself; and the UI's
staleness view marks every asset downstream of an edited bucket stale, `snapshot` included, before any build."""

from __future__ import annotations

import pytest
from dagster import (
    AssetKey,
    DagsterEventType,
    DagsterInstance,
    RunRequest,
    SkipReason,
    build_run_status_sensor_context,
    execute_job,
)
from dagster._core.definitions.reconstruct import ReconstructableRepository

from petrichor_pipeline.builder.steps.articles import current_bucket_versions
from petrichor_pipeline.definitions import PUBLISH_ASSETS, defs
from petrichor_pipeline.jobs import PUBLISH_TAG, asset_keys, bucket_assets, build_and_publish_job
from petrichor_pipeline.resources import build_context
from petrichor_pipeline.sensors import publish_after_build
from petrichor_pipeline.sources.identity import article_id_of, bucket_of
from petrichor_pipeline.staleness import observe_corpus
from tests.conftest import REPO, isolated_env
from tests.pipeline.tiny_corpus import FAST, copy_tree, corpus_articles, published_articles

pytestmark = pytest.mark.slow  # copies a built corpus and runs Dagster jobs on it

EDITED = "kb/ports.md"
BUCKET = bucket_of(article_id_of(EDITED))
UI_JOB = "__ASSET_JOB"
"""The job the asset graph's Materialize button launches (Dagster's implicit asset job)."""


@pytest.fixture()
def edited(tiny_build, tmp_path, monkeypatch) -> DagsterInstance:
    """A copy of the tiny build with one article edited, its environment set as `dagster dev` would see it."""
    root = copy_tree(tiny_build, tmp_path / "build")
    corpus, data, home = root / "corpus", root / "data", root / "home"
    (corpus / EDITED).write_text("# Ports\n\nThe service listens on port 9000 now.\n", encoding="utf-8")
    isolated_env(monkeypatch, data, corpus, home)
    for name, value in FAST.items():
        monkeypatch.setenv(name, value)
    with DagsterInstance.from_config(str(home)) as instance:
        yield instance


def _launch_from_ui(instance: DagsterInstance, keys: list[AssetKey]):
    """What the UI launches for one partition of `keys`: a run of the implicit asset job, executed the way the
    run worker executes it (the job reconstructed from the code location, with its own executor)."""
    repo = ReconstructableRepository.for_module("petrichor_pipeline.definitions", "defs", working_directory=str(REPO))
    job = defs.resolve_implicit_global_asset_job_def()
    tags = job.get_tags_for_partition_key(BUCKET, selected_asset_keys=keys)
    with execute_job(repo.get_reconstructable_job(UI_JOB), instance=instance, asset_selection=keys, tags=tags) as result:
        assert result.success
        return result.dagster_run


def _publish_sensor(instance: DagsterInstance, run) -> RunRequest | SkipReason:
    """`publish_after_build` as the daemon evaluates it for a finished run."""
    success = instance.all_logs(run.run_id, of_type=DagsterEventType.RUN_SUCCESS)[0].dagster_event
    return publish_after_build(build_run_status_sensor_context("publish_after_build", success, instance, run))


def _bucket_steps() -> list[AssetKey]:
    return asset_keys(bucket_assets(build_context().settings))


def test_a_partition_materialized_from_the_ui_runs_in_one_process_and_is_published_after(edited):
    instance = edited
    run = _launch_from_ui(instance, _bucket_steps())
    events = instance.all_logs(run.run_id)
    assert run.job_name == UI_JOB
    assert not [e for e in events if e.dagster_event_type == DagsterEventType.STEP_WORKER_STARTING]
    assert len({e.dagster_event.pid for e in events if e.dagster_event_type == DagsterEventType.STEP_START}) == 1
    data = build_context().settings.data_dir
    assert published_articles(data) != corpus_articles(data, build_context().settings.corpus_dir)

    request = _publish_sensor(instance, run)
    assert isinstance(request, RunRequest), request
    assert defs.resolve_job_def("publish").execute_in_process(instance=instance).success  # the run it requests
    assert published_articles(data) == corpus_articles(data, build_context().settings.corpus_dir)


def test_a_partition_materialized_with_the_publish_assets_publishes_in_the_same_run(edited):
    instance = edited
    run = _launch_from_ui(instance, [*_bucket_steps(), *asset_keys(PUBLISH_ASSETS)])
    settings = build_context().settings
    assert published_articles(settings.data_dir) == corpus_articles(settings.data_dir, settings.corpus_dir)
    assert isinstance(_publish_sensor(instance, run), SkipReason)  # nothing left to publish


def test_the_build_and_publish_job_publishes_a_partition_in_one_run_and_one_process(edited):
    """Jobs > build_and_publish > Materialize with the stale bucket: what `petrichor build` does for a change."""
    instance = edited
    repo = ReconstructableRepository.for_module("petrichor_pipeline.definitions", "defs", working_directory=str(REPO))
    job = defs.resolve_job_def(build_and_publish_job.name)
    tags = job.partitioned_config.get_tags_for_partition_key(BUCKET) if job.partitioned_config else {"dagster/partition": BUCKET}
    with execute_job(repo.get_reconstructable_job(job.name), instance=instance, tags={**job.tags, **tags}) as result:
        assert result.success
        run = result.dagster_run
    events = instance.all_logs(run.run_id)
    assert len({e.dagster_event.pid for e in events if e.dagster_event_type == DagsterEventType.STEP_START}) == 1
    built = {e.dagster_event.partition for e in events if e.dagster_event_type == DagsterEventType.ASSET_MATERIALIZATION}
    assert built == {BUCKET, None}  # the chosen bucket's steps, then the unpartitioned publish assets
    settings = build_context().settings
    assert published_articles(settings.data_dir) == corpus_articles(settings.data_dir, settings.corpus_dir)
    assert run.tags.get(PUBLISH_TAG[0]) == PUBLISH_TAG[1]  # the queue starts one publishing run at a time
    assert isinstance(_publish_sensor(instance, run), SkipReason)


def test_no_publish_while_the_edited_bucket_is_half_built(edited):
    """A run that built only `articles` leaves the bucket's other steps stale: a snapshot now would pair the
    new articles with their old chunks."""
    instance = edited
    reason = _publish_sensor(instance, _launch_from_ui(instance, [AssetKey("articles")]))
    assert isinstance(reason, SkipReason) and BUCKET in reason.skip_message


def test_a_cli_build_is_not_published_again(tiny_build):
    with DagsterInstance.from_config(str(tiny_build / "home")) as instance:
        runs = instance.get_runs()
        assert sorted(r.job_name for r in runs) == ["bucket_build", "publish"]  # the named jobs, not an ephemeral one
        bucket_run = next(r for r in runs if r.job_name == "bucket_build")
        assert isinstance(_publish_sensor(instance, bucket_run), SkipReason)


def _stale_status(instance: DagsterInstance) -> dict[tuple[str, str | None], str]:
    """The stale status of every asset (and bucket) as the UI's staleness view resolves it."""
    from dagster._core.asset_graph_view.asset_graph_view import AssetGraphView, TemporalContext
    from dagster._core.definitions.data_version import CachingStaleStatusResolver
    from dagster._time import get_current_datetime

    graph = defs.resolve_asset_graph()
    view = AssetGraphView(
        temporal_context=TemporalContext(effective_dt=get_current_datetime(), last_event_id=None), instance=instance, asset_graph=graph
    )
    resolver = CachingStaleStatusResolver(instance, graph, view)
    out = {}
    for key in graph.materializable_asset_keys:
        for partition in graph.get(key).partitions_def.get_partition_keys() if graph.get(key).is_partitioned else [None]:
            out[(key.to_user_string(), partition)] = resolver.get_status(key, partition).value
    return out


def test_an_observed_edit_marks_every_downstream_asset_stale_before_any_build(edited):
    instance = edited
    assert "STALE" not in _stale_status(instance).values()  # the build left everything fresh
    ctx = build_context()
    assert observe_corpus(instance, current_bucket_versions(ctx)) == 1  # what `corpus_observer` records
    stale = {key for key, status in _stale_status(instance).items() if status == "STALE"}
    unpartitioned = {a.key.to_user_string() for a in PUBLISH_ASSETS}
    bucket_steps = {k.to_user_string() for k in asset_keys(bucket_assets(ctx.settings))}
    assert stale == {(a, BUCKET) for a in bucket_steps} | {(a, None) for a in unpartitioned}
    assert ("snapshot", None) in stale
