"""What every build step of one run needs: settings, the warehouse, and that run's models, meter and caches.

A context lives for one Dagster run (`resources.PetrichorResource` sets one up per run) or for one planning
pass of `petrichor build`. Its corpus scan, model clients, embedding caches and usage meter belong to it
alone, so one run's counts and state never leak into another's; only the embedder's weights are shared by
the process (`models.embedding`).
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from petrichor_pipeline.build.embedding_cache import EmbeddingCache
from petrichor_pipeline.build.warehouse import Warehouse
from petrichor_pipeline.config import Settings
from petrichor_pipeline.models.protocols import ChatModel, Embedder
from petrichor_pipeline.models.usage import RunMeter
from petrichor_pipeline.sources.corpus import CorpusScan, scan_corpus
from petrichor_pipeline.versions import BUILD_VERSION, CHUNK_ALGORITHM_VERSION

class StageListener:
    """Hears an asset name each time one of its bucket steps finishes (the CLI's progress bars).

    Without a callback it hears nothing: the runs of the Dagster UI, sensors and schedules.
    """

    def __init__(self, callback: Callable[[str], None] | None = None):
        self._callback = callback

    def __call__(self, asset: str) -> None:
        if self._callback is not None:
            self._callback(asset)


@dataclass
class BuildContext:
    settings: Settings
    full_rebuild: bool = False
    on_stage: StageListener = field(default_factory=StageListener)
    embed_dim: int | None = None
    """The embedding dimension when the build already knows it (its planning pass asked), so a run's
    fresh embedder sends no probe request."""
    meter: RunMeter = field(init=False)
    """This run's usage, and the request slots its model clients share (sized by `model_concurrency`)."""
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _scan: CorpusScan | None = field(default=None, init=False, repr=False)
    _chat: ChatModel | None = field(default=None, init=False, repr=False)
    _embedder: Embedder | None = field(default=None, init=False, repr=False)
    _caches: dict[str, EmbeddingCache] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.meter = RunMeter(self.settings.limits.model_concurrency)

    @property
    def bucket_workers(self) -> int:
        """Buckets a step works on at once: one per core (their model calls share this run's slots)."""
        return max(1, os.cpu_count() or 1)

    def stage_done(self, asset: str) -> None:
        self.on_stage(asset)

    @property
    def warehouse(self) -> Warehouse:
        return Warehouse(self.settings.warehouse_dir)

    def scan(self) -> CorpusScan:
        """The corpus as this run first saw it: every step of the run works from the same listing."""
        with self._lock:
            if self._scan is None:
                self._scan = scan_corpus(
                    Path(self.settings.corpus_dir).resolve(),
                    max_file_bytes=self.settings.limits.max_file_bytes,
                    pdf_transcriber=self._transcriber(),
                )
            return self._scan

    def adopt_scan(self, scan_id: str) -> None:
        """Work from the build's planning scan (`scan_handoff`) instead of scanning the corpus again."""
        from petrichor_pipeline.build.scan_handoff import read_scan

        with self._lock:
            if self._scan is None:
                self._scan = read_scan(self.settings.data_dir, scan_id)

    def _transcriber(self):
        if not self.settings.vision.configured:  # no vision model: spare the import of its HTTP client
            return None
        from petrichor_pipeline.sources.vision import page_transcriber

        # cached by page image, so a rebuild neither repeats requests nor changes the article's version
        cache_dir = self.settings.data_dir / "cache" / "vision"
        return page_transcriber(self.settings.vision, cache_dir, self.settings.limits, self.meter)

    def chat(self) -> ChatModel:
        from petrichor_pipeline.models.providers import make_chat_model

        with self._lock:
            if self._chat is None:
                self._chat = make_chat_model(self.settings, self.meter)
            return self._chat

    def embedder(self) -> Embedder | None:
        """The passage embedder, or None when embedding is switched off."""
        if not self.settings.embed_enabled:
            return None
        from petrichor_pipeline.models.providers import make_embedder

        with self._lock:
            if self._embedder is None:
                self._embedder = make_embedder(self.settings, self.meter, self.embed_dim)
            return self._embedder

    def embed_fingerprint(self) -> str:
        """The embedder's fingerprint; "off" or "unavailable" when there is none to use."""
        embedder = self.embedder()
        if embedder is None:
            return "off"
        try:
            return embedder.fingerprint
        except Exception:  # an unreachable endpoint: vectors stay pending, the build goes on
            return "unavailable"

    def known_embed_dim(self) -> int | None:
        """The embedder's dimension if it can be had; None when embedding is off or unreachable."""
        if self.embed_fingerprint() in ("off", "unavailable"):
            return None
        return self.embedder().dim  # type: ignore[union-attr]

    def embedding_cache(self, fingerprint: str) -> EmbeddingCache:
        """The vector cache of `fingerprint`, read once per run however many buckets ask."""
        with self._lock:
            if fingerprint not in self._caches:
                self._caches[fingerprint] = EmbeddingCache(self.settings.embed_cache_dir, fingerprint)
            return self._caches[fingerprint]

    def build_key(self) -> str:
        """Everything besides the articles and the step code that decides a bucket's outputs.

        Recorded on every bucket materialization (`staleness.BUCKET_STATE`); code versions Dagster records itself.
        """
        parts = [self.chunk_key, self.chat().fingerprint, self.embed_fingerprint()]
        if self.settings.question_routes != "model":  # which tables are embedded (`route_tables`); the default adds nothing
            parts.append(f"question-routes:{self.settings.question_routes}")
        return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]

    @property
    def chunk_key(self) -> str:
        """What invalidates chunks: the chunker's algorithm version and the build version."""
        return f"chunk-v{CHUNK_ALGORITHM_VERSION}:build-v{BUILD_VERSION}"
