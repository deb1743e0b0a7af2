"""What every evaluated method returns: a ranked list of retrieved items, each traced back to its document.

Petrichor's search is wrapped here; the naive baselines live in `baselines.py`. Scoring only ever sees
`Retrieved` items, so every method is measured by the same code.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from petrichor_serving.recall.config import DEFAULT_CONFIG

SEARCH_LIMIT = DEFAULT_CONFIG.limit
"""Every method is scored on lists as long as the product's."""


@dataclass(frozen=True)
class Retrieved:
    doc_id: str | None
    """None for results that are not a document's text (wiki pages)."""
    text: str
    """The chunk's text; empty for results that are not chunks (wiki pages, whole-article title matches)."""
    heading_path: tuple[str, ...] = ()

    @property
    def is_chunk(self) -> bool:
        return bool(self.text)


@dataclass
class Ranking:
    items: list[Retrieved]
    latency_ms: float
    recall_ms: float | None = None
    """Time spent in recall proper (query embedding excluded), when the method reports it."""


class Retriever(Protocol):
    name: str

    def retrieve(self, question: str) -> Ranking: ...

    def all_chunks(self) -> Sequence[Retrieved]:
        """Every chunk the method could return: the ceiling of chunk-level recall."""
        ...


class PetrichorRetriever:
    """`petrichor_serving.recall.search` over a loaded snapshot, candidates mapped back to dataset documents."""

    def __init__(
        self,
        snapshot: Any,
        doc_of_article: dict[str, str],
        *,
        embedder: Any,
        name: str = "petrichor",
        index: Any = None,
        config: Any = None,
        cache: Any = None,
        limit: int = SEARCH_LIMIT,
    ):
        from petrichor_serving.recall.query_vectors import QueryVectorCache

        self.name = name
        self.snapshot = snapshot
        self.doc_of_article = doc_of_article
        self.embedder = embedder
        self.index = index if index is not None else snapshot.recall
        self.config = config or DEFAULT_CONFIG
        self.cache = cache if cache is not None else QueryVectorCache(size=1 << 16)
        self.limit = limit

    def _item(self, candidate: Any) -> Retrieved:
        doc = self.doc_of_article.get(candidate.article_id) if candidate.article_id else None
        if candidate.chunk_id:
            row = self.snapshot.chunks[candidate.chunk_id]
            return Retrieved(doc, row["content"], tuple(row["heading_path"] or ()))
        return Retrieved(doc, "", tuple(candidate.heading_path))

    def retrieve(self, question: str) -> Ranking:
        from petrichor_serving.recall.access import Scope
        from petrichor_serving.recall.pipeline import search

        started = time.perf_counter()
        result = search(
            self.index,
            question,
            scope=Scope(),
            embedder=self.embedder,
            limit=self.limit,
            cache=self.cache,
            config=self.config,
        )
        latency = (time.perf_counter() - started) * 1000
        timings = result.diagnostics.get("timingsMs", {})
        recall_ms = timings.get("total", latency) - timings.get("embed", 0.0)
        return Ranking([self._item(c) for c in result.candidates], latency, recall_ms)

    def all_chunks(self) -> list[Retrieved]:
        return [
            Retrieved(self.doc_of_article.get(r["article_id"]), r["content"], tuple(r["heading_path"] or ())) for r in self.snapshot.chunks.values()
        ]
