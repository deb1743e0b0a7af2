"""Dagster assets: thin wrappers that call the plain build steps in `petrichor_pipeline.builder`."""

import warnings

from dagster import BetaWarning

# the two beta APIs the bucket assets rely on (single-run backfills, the observable corpus): said once here,
# not on every import of the code location
warnings.filterwarnings("ignore", message=r"(Parameter `backfill_policy`|Function `observable_source_asset`)", category=BetaWarning)
