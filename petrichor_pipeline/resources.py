"""The Dagster resource that hands assets their run's build context; configured per environment.

No `from __future__ import annotations` here: Dagster reads the field types at run time.
"""

from typing import Optional

from dagster import ConfigurableResource, InitResourceContext, ResourceDependency
from pydantic import PrivateAttr

from petrichor_pipeline.build.context import BuildContext, StageListener
from petrichor_pipeline.config import load_settings


def build_context(
    data_dir: str = "", corpus_dir: str = "", full_rebuild: bool = False, embed_dim: int | None = None
) -> BuildContext:
    """A fresh context over the environment's settings, with the given paths in place of theirs."""
    settings = load_settings()
    if data_dir or corpus_dir:
        settings = settings.with_paths(data_dir or settings.data_dir, corpus_dir or None)
    return BuildContext(settings=settings, full_rebuild=full_rebuild, embed_dim=embed_dim)


class PetrichorResource(ConfigurableResource):
    """Where a build reads (corpus) and writes (data dir); empty means PETRICHOR_CORPUS / PETRICHOR_DATA.

    Each run gets its own `BuildContext` in `setup_for_execution`: its model clients, embedder, embedding
    caches, corpus scan and usage meter live and die with that run. `progress` hears each finished stage
    (the CLI passes its progress bars; other runs report to nobody).
    """

    data_dir: str = ""
    corpus_dir: str = ""
    full_rebuild: bool = False
    embed_dim: int = 0
    """The embedding endpoint's dimension when the caller knows it; 0 means the run asks the endpoint."""
    progress: ResourceDependency[StageListener] = StageListener()
    _context: Optional[BuildContext] = PrivateAttr(default=None)

    def setup_for_execution(self, context: InitResourceContext) -> None:
        self._context = build_context(self.data_dir, self.corpus_dir, self.full_rebuild, self.embed_dim or None)
        self._context.on_stage = self.progress

    def teardown_after_execution(self, context: InitResourceContext) -> None:
        self._context = None

    def context(self) -> BuildContext:
        if self._context is None:
            raise RuntimeError("PetrichorResource.context() is only available inside a run")
        return self._context
