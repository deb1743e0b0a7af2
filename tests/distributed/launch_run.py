"""One `bucket_build` run over a range of buckets on the Celery executor of `$PETRICHOR_CELERY_CONFIG`,
rebuilding every article of the range, in a process of its own (as a sensor's or a UI backfill's run is):

    python -m tests.distributed.launch_run FIRST LAST      # prints {"run_id": ..., "success": ...}

Two runs side by side need two processes: Dagster configures Python's logging for each run it starts, and two
runs starting in one process's threads deadlock on logging's locks."""

from __future__ import annotations

import json
import sys

from dagster import DagsterInstance, execute_job, reconstructable

from petrichor_pipeline.definitions import bucket_build_job_def
from petrichor_pipeline.executors import celery_execution
from petrichor_pipeline.jobs import asset_keys, bucket_assets
from petrichor_pipeline.resources import PetrichorResource, build_context


def main(first: str, last: str) -> dict:
    execution = celery_execution()
    if execution is None:
        raise SystemExit("PETRICHOR_CELERY_CONFIG names no Celery executor file")
    ctx = build_context(full_rebuild=True)
    run_config = {**execution, "resources": PetrichorResource.for_build(ctx).run_config()}
    with (
        DagsterInstance.get() as instance,
        execute_job(
            reconstructable(bucket_build_job_def),
            instance=instance,
            run_config=run_config,
            raise_on_error=False,
            tags={"dagster/asset_partition_range_start": first, "dagster/asset_partition_range_end": last},
            asset_selection=asset_keys(bucket_assets(ctx.settings)),
        ) as result,
    ):
        return {"run_id": result.run_id, "success": result.success}


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:3])))
