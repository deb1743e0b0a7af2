"""The Dagster resource that hands assets their build context; configured per environment."""

from __future__ import annotations

import threading
from pathlib import Path

from dagster import ConfigurableResource

from petrichor_pipeline.build.context import BuildContext
from petrichor_pipeline.config import load_settings

_contexts: dict[tuple[str, str, bool], BuildContext] = {}
_lock = threading.Lock()


def build_context(data_dir: str = "", corpus_dir: str = "", full_rebuild: bool = False) -> BuildContext:
    """One context per (paths, mode) per process, so its usage meter totals a whole build."""
    settings = load_settings()
    if data_dir or corpus_dir:
        settings = settings.with_paths(data_dir or settings.data_dir, corpus_dir or None)
    key = (str(Path(settings.data_dir).resolve()), str(Path(settings.corpus_dir).resolve()), full_rebuild)
    with _lock:
        if key not in _contexts:
            _contexts[key] = BuildContext(settings=settings, full_rebuild=full_rebuild)
        return _contexts[key]


class PetrichorResource(ConfigurableResource):
    """Where a build reads (corpus) and writes (data dir); empty means PETRICHOR_CORPUS / PETRICHOR_DATA."""

    data_dir: str = ""
    corpus_dir: str = ""
    full_rebuild: bool = False

    def context(self) -> BuildContext:
        return build_context(self.data_dir, self.corpus_dir, self.full_rebuild)
