"""A build reads its settings once and its runs work with exactly those (`resources.RunSettings`): a setting
the caller gave the runner, unlike the environment, reaches the bucket steps (in this process or in the
executor's step processes) and the publish run. Credentials travel as environment references only."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from dagster import DagsterEventType, DagsterInstance

from petrichor_core.config import BuildLimits, ModelEndpoint, Settings, load_settings
from petrichor_core.contract.current import read_current
from petrichor_core.contract.manifest import read_manifest
from petrichor_core.object_store import S3Location
from petrichor_pipeline.builder.context import BuildContext
from petrichor_pipeline.resources import EndpointSettings, LimitsSettings, ObjectStoreSettings, PetrichorResource, RunSettings, settings_record
from petrichor_pipeline.runner import run_build
from tests.conftest import isolated_env
from tests.pipeline.tiny_corpus import write_corpus


@pytest.mark.parametrize(
    ("record", "source"),
    [(RunSettings, Settings), (EndpointSettings, ModelEndpoint), (LimitsSettings, BuildLimits), (ObjectStoreSettings, S3Location)],
)
def test_the_record_has_every_field_of_the_settings(record, source):
    assert set(record.model_fields) == {f.name for f in dataclasses.fields(source)}


def _unusual(tmp_path: Path) -> Settings:
    """Settings with no field at its default, as nothing in the environment gives them."""
    endpoint = ModelEndpoint(
        base_url="http://127.0.0.1:9", model="m", api_key="sk-chat", timeout_s=7.5, max_retries=1, provider="openai", response_format="json_object"
    )
    return Settings(
        data_dir=tmp_path / "data",
        corpus_dir=tmp_path / "corpus",
        api_keys_file=tmp_path / "keys.yaml",
        api_key="pk-mcp",
        chat=endpoint,
        embed=dataclasses.replace(endpoint, api_key="unused", model="e"),
        vision=dataclasses.replace(endpoint, api_key="", model="v"),
        limits=BuildLimits(3, 60.0, 2, 2, 5, 1024, 8),
        keep_snapshots=2,
        history_keep_days=1.5,
        history_pin_days=2.5,
        reload_interval_s=0.5,
        lexical_tokenizer="jieba",
        embed_enabled=False,
        embed_cache=tmp_path / "cache",
        question_routes="always",
        object_store=S3Location("b", "p", "http://127.0.0.1:9", "r", "AKID", "s3cret", ""),
        build_workers=3,
    )


def test_settings_round_trip_with_credentials_as_environment_references(tmp_path, monkeypatch):
    for name, value in _CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    settings = _unusual(tmp_path)
    record = RunSettings.of(settings)
    assert record.settings() == settings
    config = PetrichorResource(settings=record, full_rebuild=True, embed_dim=16).run_config()["petrichor"]["config"]
    assert config["full_rebuild"] is True and config["embed_dim"] == 16
    assert config["settings"]["chat"]["api_key"] == {"env": "PETRICHOR_LLM_API_KEY"}
    assert config["settings"]["object_store"]["secret_access_key"] == {"env": "AWS_SECRET_ACCESS_KEY"}
    assert config["settings"]["embed"]["api_key"] == "unused" and config["settings"]["limits"]["model_concurrency"] == 5
    assert not {"sk-chat", "pk-mcp", "s3cret"} & set(_leaves(config))


_CREDENTIALS = {"PETRICHOR_LLM_API_KEY": "sk-chat", "PETRICHOR_API_KEY": "pk-mcp", "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "s3cret"}


@pytest.mark.parametrize("name", [f.name for f in dataclasses.fields(Settings)])
def test_every_setting_round_trips_on_its_own(tmp_path, monkeypatch, name):
    """Each setting changed alone reaches the run and comes back: a field the record dropped or mistyped would
    read back as its default, or fail to convert."""
    for var, value in _CREDENTIALS.items():
        monkeypatch.setenv(var, value)
    base = Settings(data_dir=tmp_path / "d", corpus_dir=tmp_path / "c")
    changed = dataclasses.replace(base, **{name: getattr(_unusual(tmp_path), name)})
    assert changed != base
    record = RunSettings.of(changed)
    assert record.settings() == changed
    assert name in PetrichorResource(settings=record).run_config()["petrichor"]["config"]["settings"]


def test_a_setting_added_to_the_dataclass_is_carried_without_being_written_out_again(tmp_path):
    """The record's fields are generated from the dataclass: a new setting (here a path) is in the record,
    typed as run config, and round-trips."""

    @dataclasses.dataclass(frozen=True)
    class Wider(Settings):
        scratch_dir: Path | None = None

    record_type = settings_record("WiderSettings", Wider, "`Settings` with one more field.")
    assert set(record_type.model_fields) == {f.name for f in dataclasses.fields(Wider)}
    wide = Wider(data_dir=tmp_path / "d", corpus_dir=tmp_path / "c", scratch_dir=tmp_path / "s", keep_snapshots=9)
    record = record_type.of(wide)
    assert record.scratch_dir == str(tmp_path / "s") and record.record() == wide


def _leaves(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    else:
        yield value


def test_a_credential_that_is_not_the_environments_is_refused(tmp_path, monkeypatch):
    monkeypatch.delenv("PETRICHOR_LLM_API_KEY", raising=False)
    settings = dataclasses.replace(load_settings(), chat=ModelEndpoint(base_url="http://127.0.0.1:9", api_key="sk-inline"))
    with pytest.raises(ValueError, match="PETRICHOR_LLM_API_KEY"):
        RunSettings.of(settings)


@pytest.mark.parametrize("parallel", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_a_builds_runs_see_the_settings_the_runner_was_given(tmp_path, monkeypatch, parallel):
    """The environment says embed and tokenise by bigrams; the runner is told no vectors and jieba."""
    corpus = write_corpus(tmp_path / "corpus")
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    isolated_env(monkeypatch, tmp_path / "data", corpus, home)
    monkeypatch.delenv("PETRICHOR_EMBED", raising=False)
    monkeypatch.delenv("PETRICHOR_TOKENIZER", raising=False)
    settings = dataclasses.replace(load_settings(), embed_enabled=False, lexical_tokenizer="jieba", build_workers=2)
    assert load_settings().embed_enabled and load_settings().lexical_tokenizer == "bigram"

    with DagsterInstance.from_config(str(home)) as instance:
        summary = run_build(BuildContext(settings=settings), instance=instance, parallel=parallel)
        assert summary.ok and summary.published, summary.to_json()
        bucket_run = instance.get_run_by_id(summary.runs[0].run_id)
        assert bucket_run is not None
        steps = {e.step_key for e in instance.all_logs(bucket_run.run_id, of_type=DagsterEventType.STEP_START)}
    # the runner saw embedding off: no vector step ran (the environment's setting would have run three)
    assert summary.embedded_texts == 0 and "chunks" in summary.stages
    assert not {"chunk_vectors", "window_vectors", "question_vectors"} & set(summary.stages)
    assert "chunks" in steps and not {s for s in steps if s.endswith("_vectors")}, steps
    snaps = settings.snapshots_dir
    manifest = read_manifest(snaps, read_current(snaps))
    assert manifest.lexical["tokenizer"] == "jieba" and manifest.embed_fingerprint is None  # and so did the publish run
    if parallel:  # the step processes got the settings as typed run config
        assert bucket_run.run_config["execution"]["config"]["multiprocess"]["max_concurrent"] == 2
        passed = bucket_run.run_config["resources"]["petrichor"]["config"]["settings"]
        assert passed["embed_enabled"] is False and passed["lexical_tokenizer"] == "jieba"
