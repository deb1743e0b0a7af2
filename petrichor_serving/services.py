"""What a running server holds: its settings, the snapshot store, the key file and the model clients.

Serving reads no environment and builds no model provider: the layer above (the CLI) reads the
configuration, builds the clients through `petrichor_core.models.providers`, and hands them in as
`ServingSettings` plus protocol-typed objects.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from petrichor_core.models.protocols import AnswerModel, Embedder
from petrichor_serving.agent.trace import TraceStore
from petrichor_serving.auth import KeyStore
from petrichor_serving.history import RetainedSnapshots
from petrichor_serving.snapshot import SnapshotStore

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServingSettings:
    data_dir: Path
    api_keys_file: Path | None = None
    """None: single-user local mode, every tenant readable."""
    reload_interval_s: float = 2.0
    """How often the store looks for a newly published snapshot."""


@dataclass
class Services:
    settings: ServingSettings
    store: SnapshotStore
    keys: KeyStore | None
    chat: AnswerModel | None
    """The endpoint chat model; None: serving answers offline (`petrichor_serving.answer`), which is also
    the agent's fallback when the model's answer has no verified citation."""
    embedder: Embedder | None
    traces: TraceStore = field(default_factory=TraceStore)
    """The recent agent runs, each readable by its own principal at `GET /api/traces/{trace_id}`."""
    retained: RetainedSnapshots = field(init=False)
    """The snapshots still on disk, for requests naming a `snapshot_version`."""

    def __post_init__(self) -> None:
        self.retained = RetainedSnapshots(self.store)


def build_services(settings: ServingSettings, *, chat: AnswerModel | None, embedder: Embedder | None) -> Services:
    """Wire the store and the key file around the given clients; loads jieba, the tokenizer's astral class
    and the embedder once."""
    from petrichor_core.text.lang import init_jieba
    from petrichor_core.text.tokenize import warm_tokenizer

    init_jieba()
    warm_tokenizer()
    keys = KeyStore.load(settings.api_keys_file) if settings.api_keys_file else None
    fingerprint = None
    if embedder is not None:
        try:
            fingerprint = embedder.fingerprint
        except Exception as exc:  # an unreachable endpoint: serve lexical routes only
            log.warning("embedder unavailable, vector routes off: %s", exc)
            embedder = None
    store = SnapshotStore(settings.data_dir, embed_fingerprint=fingerprint)
    traces = TraceStore(pins_data_dir=settings.data_dir)
    return Services(settings=settings, store=store, keys=keys, chat=chat, embedder=embedder, traces=traces)
