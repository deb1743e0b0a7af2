"""Staleness lives on the Dagster instance: the CLI, `dagster asset materialize` and Dagster's own view agree."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from dagster import AssetKey, DagsterInstance

from petrichor_pipeline.builder.steps.articles import current_bucket_versions
from petrichor_pipeline.definitions import PARTITIONED_ASSETS, defs
from petrichor_pipeline.resources import build_context
from petrichor_pipeline.sources.identity import article_id_of, bucket_of
from petrichor_pipeline.staleness import observe_corpus, stale_buckets
from tests.conftest import EMBED_CACHE, REPO, isolated_env, run_cli_build

pytestmark = pytest.mark.slow  # copies a built corpus, starts Dagster subprocesses

DAGSTER = str(Path(sys.executable).parent / "dagster")
EDITED = "petrichor-en/guides/access-control.md"


def _edited_copy(built_corpus, tmp_path):
    """The session's build with one article edited."""
    corpus, data, home = built_corpus.copy_to(tmp_path)
    path = corpus / EDITED
    path.write_text(path.read_text(encoding="utf-8") + "\n\n## Staleness\n\nAn added paragraph.\n", encoding="utf-8")
    return corpus, data, home


def _dagster_stale(instance) -> list[str]:
    """The `articles` partitions Dagster's own staleness resolver (the UI's) reports stale."""
    from dagster._core.asset_graph_view.asset_graph_view import AssetGraphView, TemporalContext
    from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus
    from dagster._time import get_current_datetime

    graph = defs.resolve_asset_graph()
    view = AssetGraphView(
        temporal_context=TemporalContext(effective_dt=get_current_datetime(), last_event_id=None), instance=instance, asset_graph=graph
    )
    resolver = CachingStaleStatusResolver(instance, graph, view)
    return [b for b in (f"{i:02x}" for i in range(16)) if resolver.get_status(AssetKey("articles"), b) == StaleStatus.STALE]


def test_one_edit_makes_exactly_its_bucket_stale_on_the_instance(built_corpus, tmp_path, monkeypatch):
    corpus, data, home = _edited_copy(built_corpus, tmp_path)
    bucket = bucket_of(article_id_of(EDITED))
    isolated_env(monkeypatch, data, corpus, home)
    ctx = build_context(str(data), str(corpus))
    versions = current_bucket_versions(ctx)
    with DagsterInstance.from_config(str(home)) as instance:
        assert stale_buckets(instance, PARTITIONED_ASSETS, versions, ctx.build_key()) == [bucket]
        assert _dagster_stale(instance) == []  # the corpus change is not observed yet
        assert observe_corpus(instance, versions) == 1
        assert _dagster_stale(instance) == [bucket]


def test_a_bucket_materialized_by_dagster_cli_is_skipped_by_petrichor_build(built_corpus, tmp_path):
    corpus, data, home = _edited_copy(built_corpus, tmp_path)
    bucket = bucket_of(article_id_of(EDITED))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PETRICHOR_")}
    env.update(DAGSTER_HOME=str(home), PETRICHOR_DATA=str(data), PETRICHOR_CORPUS=str(corpus), PETRICHOR_EMBED_CACHE=str(EMBED_CACHE))
    select = ",".join(a.key.to_user_string() for a in PARTITIONED_ASSETS)
    out = subprocess.run(
        [DAGSTER, "asset", "materialize", "-m", "petrichor_pipeline.definitions", "--select", select, "--partition", bucket],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-2000:]

    summary = run_cli_build(data, corpus, home)
    assert summary["_exit_code"] == 0
    assert summary["partitions"]["materialized"] == [] and len(summary["partitions"]["skipped"]) == 16
    assert summary["model_calls"] == 0 and summary["articles"]["built"] == 0
    assert summary["published"]  # the edit reaches the snapshot without rebuilding the bucket
