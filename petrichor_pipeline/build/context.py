"""What every build step needs: settings, the warehouse, the models, and one corpus scan per process.

The CLI runs one Dagster run per stale bucket in a single process; caching the scan and the models at
module level means the corpus is listed once and the embedder is loaded once per build, not per run.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from petrichor_pipeline.build.warehouse import Warehouse
from petrichor_pipeline.config import BUILD_VERSION, Settings
from petrichor_pipeline.models.protocols import ChatModel, Embedder, UsageMeter
from petrichor_pipeline.sources.corpus import CorpusScan, scan_corpus
from petrichor_pipeline.text.chunking import ALGORITHM_VERSION

_lock = threading.Lock()
_scan_cache: dict[tuple[str, str], CorpusScan] = {}
_model_cache: dict[tuple, object] = {}


def corpus_signature(corpus_dir: Path) -> str:
    """A cheap fingerprint of the corpus listing (paths, sizes, mtimes) to know when a rescan is needed."""
    h = hashlib.sha256()
    if corpus_dir.exists():
        for p in sorted(corpus_dir.rglob("*")):
            if p.is_file():
                st = p.stat()
                h.update(f"{p.relative_to(corpus_dir).as_posix()}|{st.st_size}|{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


@dataclass
class BuildContext:
    settings: Settings
    full_rebuild: bool = False
    meter: UsageMeter = field(default_factory=UsageMeter)
    on_stage: Callable[[str], None] | None = None
    """Called with an asset name each time one of its bucket steps finishes (the CLI's progress bars)."""

    def stage_done(self, asset: str) -> None:
        if self.on_stage is not None:
            self.on_stage(asset)

    @property
    def warehouse(self) -> Warehouse:
        return Warehouse(self.settings.warehouse_dir)

    def scan(self) -> CorpusScan:
        corpus = self.settings.corpus_dir.resolve()
        key = (str(corpus), corpus_signature(corpus))
        with _lock:
            cached = _scan_cache.get(key)
        if cached is None:
            cached = scan_corpus(corpus, max_file_bytes=self.settings.limits.max_file_bytes, pdf_transcriber=self.transcriber())
            with _lock:
                _scan_cache.clear()
                _scan_cache[key] = cached
        return cached

    def transcriber(self):
        from petrichor_pipeline.sources.vision import page_transcriber

        # cached by page image, so a rebuild neither repeats requests nor changes the article's version
        return page_transcriber(self.settings.vision, cache_dir=self.settings.data_dir / "cache" / "vision")

    def chat(self) -> ChatModel:
        from petrichor_pipeline.models.providers import make_chat_model

        key = ("chat", self.settings.chat, id(self.meter))
        with _lock:
            if key not in _model_cache:
                _model_cache[key] = make_chat_model(self.settings, self.meter)
            return _model_cache[key]  # type: ignore[return-value]

    def embedder(self) -> Embedder | None:
        """The passage embedder, or None when embedding is switched off."""
        if not self.settings.embed_enabled:
            return None
        from petrichor_pipeline.models.providers import make_embedder

        key = ("embed", self.settings.embed)
        with _lock:
            if key not in _model_cache:
                _model_cache[key] = make_embedder(self.settings)
            return _model_cache[key]  # type: ignore[return-value]

    def embed_fingerprint(self) -> str:
        """The embedder's fingerprint; "off" or "unavailable" when there is none to use."""
        embedder = self.embedder()
        if embedder is None:
            return "off"
        try:
            return embedder.fingerprint
        except Exception:  # an unreachable endpoint: vectors stay pending, the build goes on
            return "unavailable"

    @property
    def chunk_key(self) -> str:
        """What invalidates chunks: the chunker's algorithm version and the build version."""
        return f"chunk-v{ALGORITHM_VERSION}:build-v{BUILD_VERSION}"
