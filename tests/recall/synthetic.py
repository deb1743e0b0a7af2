"""Tiny hand-made snapshots for recall tests: rows are written with the contract schemas, so the index is
built from exactly what a published snapshot holds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from petrichor_core.contract.schemas import to_table
from petrichor_core.text.index_text import index_text
from petrichor_core.text.tokenize import DEFAULT_TOKENIZER
from petrichor_serving.recall import RecallIndex, routes

MODEL_FINGERPRINT = "openai:test-model:1"


@dataclass
class SnapshotRows:
    articles: list[dict[str, Any]] = field(default_factory=list)
    chunks: list[dict[str, Any]] = field(default_factory=list)
    questions: list[dict[str, Any]] = field(default_factory=list)
    wiki_pages: list[dict[str, Any]] = field(default_factory=list)
    tree_nodes: list[dict[str, Any]] = field(default_factory=list)
    chunk_windows: list[dict[str, Any]] = field(default_factory=list)

    def article(
        self,
        article_id: str,
        title: str,
        *,
        kb: str = "kb",
        tenant: str = "default",
        visibility: str = "private",
        share_expires_at: str | None = None,
        password_protected: bool = False,
        sections: list[tuple[tuple[str, ...], str, list[str]]] = (),
        chat_fingerprint: str = MODEL_FINGERPRINT,
    ) -> None:
        """An article with one chunk per (heading_path, content, questions) section and a tree node each;
        its questions count as a configured model's unless `chat_fingerprint` says otherwise."""
        self.articles.append(
            dict(
                article_id=article_id,
                kb_id=kb,
                title=title,
                tenant=tenant,
                visibility=visibility,
                share_expires_at=share_expires_at,
                password_protected=password_protected,
                chat_fingerprint=chat_fingerprint,
                content="\n\n".join(content for _, content, _ in sections),
            )
        )
        self.tree_nodes.append(
            dict(
                node_key=f"{article_id}-0",
                parent_key=None,
                article_id=article_id,
                kb_id=kb,
                tenant=tenant,
                depth=0,
                position=0,
                title=title,
                summary="",
                content="",
            )
        )
        for i, (path, content, questions) in enumerate(sections, start=1):
            chunk_id = f"{article_id}:chunk-{i:03d}"
            heading = path[-1] if path else title
            self.chunks.append(
                dict(
                    chunk_id=chunk_id,
                    article_id=article_id,
                    kb_id=kb,
                    tenant=tenant,
                    key=f"chunk-{i:03d}",
                    position=i - 1,
                    heading=heading,
                    heading_path=list(path),
                    content=content,
                    index_text=index_text(title, path, content),
                )
            )
            for q, question in enumerate(questions):
                self.questions.append(
                    dict(
                        question_id=f"{chunk_id}:q{q}",
                        chunk_id=chunk_id,
                        article_id=article_id,
                        kb_id=kb,
                        tenant=tenant,
                        position=q,
                        question=question,
                        index_text=index_text(title, path, question),
                    )
                )
            self.tree_nodes.append(
                dict(
                    node_key=f"{article_id}-{i}",
                    parent_key=f"{article_id}-0",
                    article_id=article_id,
                    kb_id=kb,
                    tenant=tenant,
                    depth=len(path) or 1,
                    position=i,
                    title=heading,
                    summary=content[:40],
                    content=content,
                )
            )

    def wiki(
        self,
        page_key: str,
        title: str,
        summary: str,
        content: str,
        article_ids: list[str],
        *,
        kb: str = "kb",
        tenant: str = "default",
        kind: str = "entity",
        aliases: list[str] = (),
    ) -> None:
        self.wiki_pages.append(
            dict(
                page_key=page_key,
                kb_id=kb,
                tenant=tenant,
                kind=kind,
                title=title,
                summary=summary,
                content_md=content,
                aliases=list(aliases),
                category_path=["主题"],
                article_ids=article_ids,
            )
        )

    def window(self, chunk_id: str, position: int, content: str, start: int = 0) -> str:
        """A child window of a chunk already added; returns its id."""
        chunk = next(c for c in self.chunks if c["chunk_id"] == chunk_id)
        title = next(a["title"] for a in self.articles if a["article_id"] == chunk["article_id"])
        window_id = f"{chunk_id}:w{position:02d}"
        self.chunk_windows.append(
            dict(
                window_id=window_id,
                chunk_id=chunk_id,
                article_id=chunk["article_id"],
                kb_id=chunk["kb_id"],
                tenant=chunk["tenant"],
                position=position,
                heading_path=chunk["heading_path"],
                content=content,
                start=start,
                end=start + len(content),
                index_text=index_text(title, chunk["heading_path"], content),
            )
        )
        return window_id

    def tables(self) -> dict[str, Any]:
        return {
            name: to_table(name, getattr(self, name)) for name in ("articles", "chunks", "questions", "wiki_pages", "tree_nodes", "chunk_windows")
        }

    def index(self, **kwargs: Any) -> RecallIndex:
        """The index as a snapshot built with `tokenizer` (bigram unless given) would be served."""
        return RecallIndex.build(**self.tables(), vector_tables=routes.vector_tables(), **{"tokenizer": DEFAULT_TOKENIZER, **kwargs})


class FixedEmbedder:
    """Query-side test double: returns the vector registered for each text (unit-normalised)."""

    model_id = "fixed"

    def __init__(self, vectors: dict[str, list[float]], fingerprint: str = "fixed:4:v1"):
        self._vectors = vectors
        self._fingerprint = fingerprint
        self.calls: list[list[str]] = []

    @property
    def dim(self) -> int:
        return 4

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    def embed_queries(self, texts):
        self.calls.append(list(texts))
        rows = np.array([self._vectors.get(t, [0.0, 0.0, 0.0, 1.0]) for t in texts], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    embed_passages = embed_queries


class FailingEmbedder(FixedEmbedder):
    def __init__(self) -> None:
        super().__init__({})

    def embed_queries(self, texts):
        raise RuntimeError("embedding endpoint unavailable")
