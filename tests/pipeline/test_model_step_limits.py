"""The bucket run's limits on model steps under the multiprocess executor, read from its run config and
applied by Dagster's own counter: with an embeddings endpoint, embedding steps run beside each other and
beside one chat step, as many as fit `model_concurrency` at `embed_concurrency` requests each; with the
in-process embedder, one model step of either kind at a time."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from dagster._core.execution.api import create_execution_plan
from dagster._utils.tags import TagConcurrencyLimitsCounter

from petrichor_core.config import BuildLimits, ModelEndpoint, Settings
from petrichor_pipeline.assets._metadata import EMBED_POOL, EMBED_STEP, MODEL_POOL, MODEL_STEP, MODEL_TAG
from petrichor_pipeline.definitions import bucket_build_job_def
from petrichor_pipeline.jobs import all_assets, embed_step_limit, model_step_limits, parallel_execution

OFFLINE = Settings(data_dir=Path("data"), corpus_dir=Path("corpus"))
ENDPOINT = replace(
    OFFLINE,
    embed=ModelEndpoint(base_url="http://127.0.0.1:8001/v1", model="e5"),
    limits=BuildLimits(model_concurrency=64, embed_concurrency=16),
)
EMBEDDING = {"chunk_vectors", "window_vectors", "question_vectors"}
CHAT = {"questions", "wiki_candidates", "page_index"}


def test_embedding_steps_and_chat_steps_carry_their_own_tag_value_and_pool():
    steps = {a.key.to_user_string(): a.op for a in all_assets() if getattr(a, "op", None) is not None and MODEL_TAG in a.op.tags}
    assert {k for k, op in steps.items() if op.tags[MODEL_TAG] == EMBED_STEP[MODEL_TAG]} == EMBEDDING
    assert {k for k, op in steps.items() if op.tags[MODEL_TAG] == MODEL_STEP[MODEL_TAG]} >= CHAT
    assert {steps[k].pool for k in EMBEDDING} == {EMBED_POOL}
    assert {op.pool for k, op in steps.items() if k not in EMBEDDING} == {MODEL_POOL}


def test_the_embedding_step_limit_keeps_the_steps_requests_within_the_model_slots():
    assert embed_step_limit(ENDPOINT) == 4  # 4 steps × 16 requests = 64 slots
    assert embed_step_limit(replace(ENDPOINT, limits=BuildLimits(model_concurrency=8, embed_concurrency=16))) == 1
    assert model_step_limits(ENDPOINT) == [
        {"key": MODEL_TAG, "value": "true", "limit": 1},
        {"key": MODEL_TAG, "value": "embed", "limit": 4},
    ]
    assert model_step_limits(OFFLINE) == [{"key": MODEL_TAG, "limit": 1}]
    assert model_step_limits(replace(ENDPOINT, embed_enabled=False)) == [{"key": MODEL_TAG, "limit": 1}]
    unknown = replace(ENDPOINT, embed=replace(ENDPOINT.embed, provider="sideways"))
    assert model_step_limits(unknown) == [{"key": MODEL_TAG, "limit": 1}]


def _steps(run_config: dict):
    job = bucket_build_job_def()
    plan = create_execution_plan(
        job, run_config=run_config, tags={"dagster/asset_partition_range_start": "00", "dagster/asset_partition_range_end": "0f"}
    )
    return {step.key: step for step in plan.steps}


def _limits(run_config: dict) -> list[dict]:
    return run_config["execution"]["config"]["multiprocess"]["tag_concurrency_limits"]


def test_with_an_endpoint_the_run_runs_embedding_steps_side_by_side_beside_one_chat_step():
    config = parallel_execution(4, ENDPOINT)
    assert config["execution"]["config"]["multiprocess"]["max_concurrent"] == 4
    steps = _steps(config)  # the bucket job accepts the config (its executor validates it)
    running = TagConcurrencyLimitsCounter(_limits(config), [steps["window_vectors"], steps["questions"]])
    assert not running.is_blocked(steps["question_vectors"])  # a second embedding step starts
    assert running.is_blocked(steps["wiki_candidates"])  # a second chat step waits
    full = TagConcurrencyLimitsCounter(_limits(config), [steps[k] for k in ("chunk_vectors", "window_vectors", "question_vectors")] * 2)
    assert full.is_blocked(steps["question_vectors"])  # past embed_step_limit (4) they wait


def test_with_the_in_process_embedder_one_model_step_runs_at_a_time():
    config = parallel_execution(4, OFFLINE)
    steps = _steps(config)
    running = TagConcurrencyLimitsCounter(_limits(config), [steps["window_vectors"]])
    assert running.is_blocked(steps["question_vectors"]) and running.is_blocked(steps["questions"])
    assert not running.is_blocked(steps["chunks"])  # steps that call no model are not limited
