"""Build an evaluation set into its own data directory with the ordinary pipeline, then load it as serving does.

The set gets a separate data directory and Dagster instance, so evaluating never touches the project's own
snapshots or run history; the build is the incremental one, so an unchanged set costs a scan and no runs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from petrichor.evaluation.corpus import materialise_corpus
from petrichor.evaluation.dataset import Dataset


@dataclass(frozen=True)
class EvalLayout:
    """Where one set lives: `root/corpus/eval/*.md`, `root/{warehouse,lance,snapshots}`, `root/dagster_home`."""

    root: Path

    @property
    def corpus_dir(self) -> Path:
        return self.root / "corpus"

    @property
    def data_dir(self) -> Path:
        return self.root

    @property
    def dagster_home(self) -> Path:
        return self.root / "dagster_home"


@dataclass
class BuiltSet:
    snapshot: Any
    """The loaded `petrichor_serving.snapshot.Snapshot`."""
    embedder: Any
    article_of: dict[str, str]
    """doc_id -> article_id"""
    build: dict[str, Any]
    """The build summary (`petrichor build --json` shape)."""


def _dagster_instance(home: Path):
    """The set's own embedded Dagster instance (created with telemetry off), so eval runs never mix with the
    project's run history."""
    from dagster import DagsterInstance

    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists():
        config.write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    return DagsterInstance.from_config(str(home.resolve()))


def build_set(dataset: Dataset, layout: EvalLayout, on_progress: Callable[[str, int, int], None] | None = None) -> BuiltSet:
    """Materialise the corpus (or take the set's own corpus folder as it is), run the incremental build, and load
    the published snapshot."""
    from petrichor_core.models.providers import make_embedder
    from petrichor_pipeline.resources import build_context
    from petrichor_pipeline.runner import run_build
    from petrichor_serving.snapshot import SnapshotStore

    if dataset.corpus_dir is not None:
        from petrichor_pipeline.sources.identity import article_id_of

        corpus_dir = dataset.corpus_dir
        article_of = {d.doc_id: article_id_of(d.doc_id) for d in dataset.docs}
    else:
        corpus_dir = layout.corpus_dir
        article_of = materialise_corpus(dataset.docs, corpus_dir)
    logging.getLogger("dagster").setLevel(logging.ERROR)
    ctx = build_context(data_dir=str(layout.data_dir), corpus_dir=str(corpus_dir))
    with _dagster_instance(layout.dagster_home) as instance:
        summary = run_build(ctx, instance=instance, on_progress=on_progress)
    if not summary.ok:
        raise RuntimeError(f"building {dataset.name} failed: {summary.failed_run}; errors: {summary.errors[:5]}")
    embedder = make_embedder(ctx.settings)
    store = SnapshotStore(layout.data_dir, embed_fingerprint=embedder.fingerprint)
    store.refresh()
    if store.current is None:
        raise RuntimeError(f"no snapshot could be loaded from {layout.data_dir}: {store.status()['refused']}")
    return BuiltSet(store.current, embedder, article_of, summary.to_json())
