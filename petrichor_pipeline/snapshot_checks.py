"""Every asset check of the snapshot as one multi-asset check: the integrity checks (`checks`, blocking) and
the wiki lint (`lint_checks`, reported only), evaluated in one step from one read of each table."""

from collections.abc import Iterator

from dagster import AssetCheckExecutionContext, AssetCheckResult, AssetCheckSpec, multi_asset_check

from petrichor_pipeline.checks import SNAPSHOT_CHECKS, run_checks
from petrichor_pipeline.lint_checks import LINT_CHECKS, LINT_TABLES
from petrichor_pipeline.resources import PetrichorResource

BLOCKING = frozenset(SNAPSHOT_CHECKS)
"""The checks whose failure refuses the snapshot: Dagster skips `published_snapshot` and the run fails."""
CHECKS = {**LINT_CHECKS, **SNAPSHOT_CHECKS}
"""The lint first: its scans of the page bodies (Python) overlap the reading of the tables the others need."""


@multi_asset_check(
    specs=[AssetCheckSpec(name, asset="snapshot", blocking=name in BLOCKING, description=description) for name, (description, _) in CHECKS.items()],
    can_subset=True,
    description="The snapshot's integrity checks (blocking) and wiki lint, from one read of each table.",
)
def snapshot_checks(context: AssetCheckExecutionContext, petrichor: PetrichorResource) -> Iterator[AssetCheckResult]:
    yield from run_checks(context, petrichor, CHECKS, read_first=LINT_TABLES)


ASSET_CHECKS = [snapshot_checks]
