"""What every build step of one run needs: settings, the warehouse, and that run's models, meter and caches.

A context lives for one Dagster run (`resources.PetrichorResource` sets one up per run) or for one planning
pass of `petrichor build`. Its corpus scan, model clients, embedding caches and usage meter belong to it
alone, so one run's counts and state never leak into another's; only the embedder's weights are shared by
the process (`models.embedding`).
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from petrichor_core.config import PROGRESS_LINE_S, PublishOptions, Settings
from petrichor_core.models.protocols import ChatModel, Embedder
from petrichor_core.models.usage import RunMeter
from petrichor_core.versions import BUILD_VERSION, CHUNK_ALGORITHM_VERSION
from petrichor_pipeline.builder.embedding_cache import EmbeddingCache
from petrichor_pipeline.builder.warehouse import Warehouse
from petrichor_pipeline.sources.corpus import CorpusScan, scan_corpus


@dataclass(frozen=True)
class StepCount:
    """A long step's running count over the buckets of its run: `done` of the `total` texts it has found to
    work on so far (a bucket adds its own when it starts), `seconds` after its first."""

    asset: str
    activity: str
    done: int
    total: int
    seconds: float
    unit: str = "texts"

    def line(self) -> str:
        """One line for a terminal or a log: "chunk_vectors: embedding 1,240/2,963 texts, 11/s, ETA 3m"."""
        rate = self.done / self.seconds if self.seconds > 0 else 0.0
        shown = f"{self.asset}: {self.activity} {self.done:,}/{self.total:,} {self.unit}"
        if not rate:
            return shown
        eta = f", ETA {_duration((self.total - self.done) / rate)}" if self.done < self.total else ""
        return f"{shown}, {rate:,.0f}/s{eta}" if rate >= 10 else f"{shown}, {rate:.1f}/s{eta}"

    @classmethod
    def parse(cls, line: str) -> StepCount | None:
        """A count read back from its `line` (a run's log), its `seconds` unknown (0); None for other lines."""
        match = _COUNT_LINE.match(line)
        if match is None:
            return None
        done, total = (int(match[name].replace(",", "")) for name in ("done", "total"))
        return cls(match["asset"], match["activity"], done, total, 0.0, match["unit"])


_COUNT_LINE = re.compile(r"(?P<asset>\w+): (?P<activity>\w+) (?P<done>[\d,]+)/(?P<total>[\d,]+) (?P<unit>\w+)(?:,|$)")


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f}s"
    minutes = round(seconds / 60)
    return f"{minutes}m" if minutes < 60 else f"{minutes // 60}h {minutes % 60}m"


class StageListener:
    """Hears an asset name each time one of its bucket steps finishes, and the long steps' running counts
    (`StepCount`): the CLI's progress display.

    Without callbacks it hears nothing: the runs of the Dagster UI, sensors and schedules (their counts go to
    the run's log, `StepCounter`).
    """

    def __init__(self, callback: Callable[[str], None] | None = None, counts: Callable[[StepCount], None] | None = None):
        self._callback = callback
        self._counts = counts

    def __call__(self, asset: str) -> None:
        if self._callback is not None:
            self._callback(asset)

    def count(self, step: StepCount) -> None:
        if self._counts is not None:
            self._counts(step)


class StepCounter:
    """The running counts of a run's long steps, summed over the buckets its threads work on. Every change
    goes to the run's listener; to the run's log (Dagster's, where the run shows it) at most once per
    `PROGRESS_LINE_S` per step, and whenever a step has done all it has found."""

    def __init__(self, listener: StageListener, log: Callable[[str], None] | None = None):
        self._listener = listener
        self._log = log
        self._lock = threading.Lock()
        self._counts: dict[str, tuple[int, int]] = {}
        self._started: dict[str, float] = {}
        self._logged: dict[str, float] = {}

    @contextmanager
    def counting(self, asset: str, activity: str, total: int) -> Iterator[Callable[[int], None]]:
        """Count one bucket's `total` texts in: the function yielded adds the ones done; those never done are
        taken out of the step's total again at the end (a failed call leaves them pending)."""
        done = 0

        def advance(n: int) -> None:
            nonlocal done
            done += n
            self._change(asset, activity, n, 0)

        if total:
            self._change(asset, activity, 0, total)
        try:
            yield advance
        finally:
            if done < total:
                self._change(asset, activity, 0, done - total)

    def _change(self, asset: str, activity: str, done: int, total: int) -> None:
        """Under the lock, so every listener and the log hear a step's counts in the order they changed."""
        now = time.monotonic()
        with self._lock:
            was_done, was_total = self._counts.get(asset, (0, 0))
            self._counts[asset] = (was_done + done, was_total + total)
            step = StepCount(asset, activity, was_done + done, was_total + total, now - self._started.setdefault(asset, now))
            self._listener.count(step)
            due = asset not in self._logged or now - self._logged[asset] >= PROGRESS_LINE_S
            if self._log is not None and (due or step.done >= step.total):
                self._logged[asset] = now
                self._log(step.line())


@dataclass
class BuildContext:
    settings: Settings
    full_rebuild: bool = False
    on_stage: StageListener = field(default_factory=StageListener)
    run_log: Callable[[str], None] | None = None
    """Where the run's progress lines are written: the Dagster run's log (`StepCounter`)."""
    publish: PublishOptions = field(default_factory=PublishOptions)
    """What the build allows its publish to do to the live snapshot (`publish_guard`)."""
    embed_dim: int | None = None
    """The embedding dimension when the build already knows it (its planning pass asked), so a run's
    fresh embedder sends no probe request."""
    meter: RunMeter = field(init=False)
    """This run's usage, and the request slots its model clients share (sized by `model_concurrency`)."""
    counter: StepCounter = field(init=False)
    """The running counts of the run's long steps (`StepCounter`)."""
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _scan: CorpusScan | None = field(default=None, init=False, repr=False)
    _chat: ChatModel | None = field(default=None, init=False, repr=False)
    _embedder: Embedder | None = field(default=None, init=False, repr=False)
    _caches: dict[str, EmbeddingCache] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.meter = RunMeter(self.settings.limits.model_concurrency)
        self.counter = StepCounter(self.on_stage, self.run_log)

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
        from petrichor_pipeline.builder.scan_handoff import read_scan

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
        from petrichor_core.models.providers import make_chat_model

        with self._lock:
            if self._chat is None:
                self._chat = make_chat_model(self.settings, self.meter)
            return self._chat

    def embedder(self) -> Embedder | None:
        """The passage embedder, or None when embedding is switched off."""
        if not self.settings.embed_enabled:
            return None
        from petrichor_core.models.providers import make_embedder

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
