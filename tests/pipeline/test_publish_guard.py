"""A publish never silently wipes what is served: a missing or empty corpus folder, or one that drops more than
half of the live snapshot's articles, is refused unless the build says so, by the CLI and by Dagster's runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from dagster import DagsterInstance, materialize

from petrichor.cli import main
from petrichor_core.config import PublishOptions, load_settings
from petrichor_pipeline.builder.publish_guard import LiveSnapshot, refusal
from petrichor_pipeline.definitions import ASSET_CHECKS, PARTITIONED_ASSETS, PUBLISH_ASSETS, all_assets
from petrichor_pipeline.resources import PetrichorResource, RunSettings
from petrichor_pipeline.sources.identity import article_id_of, bucket_of
from tests.conftest import isolated_env
from tests.pipeline.tiny_corpus import ARTICLES, FAST, build, copy_tree, published_articles

LIVE = LiveSnapshot("v1", frozenset(f"a{i}" for i in range(21)))


def test_a_missing_or_empty_corpus_folder_is_refused_naming_it(tmp_path):
    missing = tmp_path / "corpsu"
    reason = refusal(missing, set(), LIVE, PublishOptions())
    assert reason is not None and f"corpus folder {missing} does not exist" in reason and "--allow-empty" in reason
    (tmp_path / "empty").mkdir()
    reason = refusal(tmp_path / "empty", set(), None, PublishOptions())
    assert reason is not None and "holds no articles" in reason and "\n" not in reason
    assert refusal(missing, set(), LIVE, PublishOptions(allow_empty=True)) is None


def test_dropping_more_than_half_of_the_live_articles_is_refused_with_the_count(tmp_path):
    kept = {f"a{i}" for i in range(9)}
    reason = refusal(tmp_path, kept | {"new"}, LIVE, PublishOptions())
    assert reason is not None and "would drop 12 of 21 articles" in reason and "--allow-shrink" in reason
    assert refusal(tmp_path, kept | {"new"}, LIVE, PublishOptions(allow_shrink=True)) is None
    assert refusal(tmp_path, {f"a{i}" for i in range(11)}, LIVE, PublishOptions()) is None  # drops 10 of 21
    assert refusal(tmp_path, {"b"}, None, PublishOptions()) is None  # nothing published yet


def _current(data: Path) -> str:
    return (data / "snapshots" / "CURRENT").read_text().strip()


def _copy(tiny_build: Path, root: Path) -> tuple[Path, Path, Path]:
    copy_tree(tiny_build, root)
    return root / "corpus", root / "data", root / "home"


@pytest.mark.slow
@pytest.mark.parametrize("folder", ["corpsu", "empty"])
def test_a_typo_or_an_empty_folder_leaves_current_where_it_was(tiny_build, tmp_path, folder):
    _, data, home = _copy(tiny_build, tmp_path / "b")
    before = _current(data)
    corpus = tmp_path / folder
    if folder == "empty":
        corpus.mkdir()
    doc = build(data, corpus, home)
    assert doc["_exit_code"] == 1 and not doc["published"]
    assert str(corpus) in doc["failed_run"] and doc["errors"][-1]["path"] == str(corpus)
    assert "--allow-empty" in doc["failed_run"]
    assert _current(data) == before and doc["snapshot_version"] == before
    assert doc["partitions"]["materialized"] == []  # refused before the bucket run: the warehouse is as it was


@pytest.mark.slow
def test_the_refusal_is_one_line_on_stderr_without_json(tiny_build, tmp_path, monkeypatch, capsys):
    _, data, home = _copy(tiny_build, tmp_path / "b")
    isolated_env(monkeypatch, data, tmp_path / "corpsu", home)
    for name, value in FAST.items():
        monkeypatch.setenv(name, value)
    assert main(["build"]) == 1
    captured = capsys.readouterr()
    refused = [line for line in captured.err.splitlines() if "build refused" in line]
    assert len(refused) == 1 and f"{tmp_path / 'corpsu'} does not exist" in refused[0]
    assert captured.out == "" and "Traceback" not in captured.err


@pytest.mark.slow
def test_allow_empty_publishes_an_empty_knowledge_base(tiny_build, tmp_path):
    _, data, home = _copy(tiny_build, tmp_path / "b")
    before = _current(data)
    doc = build(data, tmp_path / "corpsu", home, "--allow-empty")
    assert doc["_exit_code"] == 0 and doc["published"], doc
    assert _current(data) != before and published_articles(data) == {}


@pytest.mark.slow
def test_the_shrink_guard_refuses_then_allow_shrink_publishes(tiny_build, tmp_path):
    corpus, data, home = _copy(tiny_build, tmp_path / "b")
    before = _current(data)
    for relpath in list(ARTICLES)[1:]:
        (corpus / relpath).unlink()
    doc = build(data, corpus, home)
    assert doc["_exit_code"] == 1 and "would drop 2 of 3 articles" in doc["failed_run"] and "--allow-shrink" in doc["failed_run"]
    assert _current(data) == before and len(published_articles(data)) == 3
    doc = build(data, corpus, home, "--allow-shrink")
    assert doc["_exit_code"] == 0 and doc["published"], doc
    assert list(published_articles(data)) == [list(ARTICLES)[0]]


def _publish_run(data: Path, corpus: Path, monkeypatch, run_config: dict | None = None, selection=PUBLISH_ASSETS, partition: str | None = None):
    """A run of the publish assets (or `selection` for one `partition`) as Dagster starts one (a sensor's, the
    UI's): not through `petrichor build`."""
    isolated_env(monkeypatch, data, corpus, data.parent / "home")
    for name, value in FAST.items():
        monkeypatch.setenv(name, value)
    resource = PetrichorResource(settings=RunSettings.of(load_settings()))
    with DagsterInstance.ephemeral() as instance:
        result = materialize(
            [*all_assets(), *ASSET_CHECKS],
            instance=instance,
            resources={"petrichor": resource},
            selection=selection,
            raise_on_error=False,
            run_config=run_config,
            partition_key=partition,
        )
        failures = [e.event_specific_data.error.message for e in result.get_step_failure_events()]
    return result, failures


@pytest.mark.slow
def test_a_dagster_run_of_the_publish_assets_is_refused_and_says_why(tiny_build, tmp_path, monkeypatch):
    corpus, data, _ = _copy(tiny_build, tmp_path / "b")
    before = _current(data)
    for relpath in list(ARTICLES)[1:]:
        (corpus / relpath).unlink()
    result, failures = _publish_run(data, corpus, monkeypatch)
    assert not result.success and any("would drop 2 of 3 articles" in f for f in failures), failures
    assert _current(data) == before
    assert sorted(p.name for p in (data / "snapshots").iterdir() if p.is_dir()) == [before]  # nothing staged


@pytest.mark.slow
def test_a_dagster_run_publishes_an_empty_corpus_only_when_its_run_config_allows_it(tmp_path, monkeypatch):
    data, corpus = tmp_path / "data", tmp_path / "corpus"
    corpus.mkdir()
    result, failures = _publish_run(data, corpus, monkeypatch)
    assert not result.success and any(f"corpus folder {corpus} holds no articles" in f for f in failures), failures
    assert not (data / "snapshots" / "CURRENT").exists()
    allowed = {"resources": {"petrichor": {"config": {"allow_empty": True}}}}
    result, _ = _publish_run(data, corpus, monkeypatch, allowed)
    assert result.success and _current(data)


@pytest.mark.slow
def test_a_dagster_bucket_run_on_a_mistyped_corpus_fails_before_it_empties_a_bucket(tiny_build, tmp_path, monkeypatch):
    """The UI's or a sensor's bucket run: `articles` refuses first, so no bucket is rewritten as empty and the
    next build of the right folder has nothing to redo."""
    _, data, _ = _copy(tiny_build, tmp_path / "b")
    warehouse = data / "warehouse"
    before = {p: p.read_bytes() for p in warehouse.rglob("*") if p.is_file()}
    bucket = bucket_of(article_id_of(list(ARTICLES)[0]))
    result, failures = _publish_run(data, tmp_path / "corpsu", monkeypatch, selection=PARTITIONED_ASSETS, partition=bucket)
    assert not result.success and any(f"corpus folder {tmp_path / 'corpsu'} does not exist" in f for f in failures), failures
    assert {p: p.read_bytes() for p in warehouse.rglob("*") if p.is_file()} == before
