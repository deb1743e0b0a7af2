"""Naive baselines: fixed windows, their heading paths, BM25 and vector ranking, the shared vector cache."""

from __future__ import annotations

import numpy as np

from petrichor.evaluation.baselines import (
    NaiveBM25Retriever,
    NaiveVectorRetriever,
    QueryEmbeddings,
    chunk_corpus,
    embed_chunks,
    naive_chunks,
)
from petrichor.evaluation.dataset import EvalDoc


def test_windows_are_512_code_points_overlapping_by_64():
    doc = EvalDoc("d", "T", "字" * 1000)
    spans = [(c.start, c.end) for c in naive_chunks(doc)]
    assert spans == [(0, 512), (448, 960), (896, 1000)]
    assert naive_chunks(EvalDoc("e", "T", " \n ")) == []
    assert [(c.start, c.end) for c in naive_chunks(EvalDoc("s", "T", "short"))] == [(0, 5)]


def test_a_window_takes_the_heading_path_at_its_midpoint():
    text = "# Guide\n\n" + "a" * 300 + "\n\n## Install\n\n" + "b" * 700 + "\n\n```\n# not a heading\n```\n"
    paths = [c.heading_path for c in naive_chunks(EvalDoc("d", "T", text))]
    assert paths == [("Guide",), ("Guide", "Install"), ("Guide", "Install")]


class CountingEmbedder:
    """Vectors from letter counts of a, b, c: deterministic, and counts every passage it embeds."""

    dim = 3
    fingerprint = "counting:3:v1"

    def __init__(self):
        self.embedded = 0
        self.queries = 0

    def _vectors(self, texts):
        m = np.array([[t.count("a") + 0.01, t.count("b") + 0.01, t.count("c") + 0.01] for t in texts], np.float32)
        return m / np.linalg.norm(m, axis=1, keepdims=True)

    def embed_passages(self, texts):
        self.embedded += len(texts)
        return self._vectors(texts)

    def embed_queries(self, texts):
        self.queries += len(texts)
        return self._vectors(texts)


DOCS = [
    EvalDoc("A", "A", "a" * 600),  # two windows: 512 and 152 code points
    EvalDoc("B", "B", "b" * 500),
    EvalDoc("C", "C", "c" * 100 + " a"),
    EvalDoc("D", "D", "b" * 500),  # the same text as B: embedded once
]


def test_vector_baseline_ranks_by_cosine_and_reuses_cached_vectors(tmp_path):
    chunks = chunk_corpus(DOCS)
    embedder = CountingEmbedder()
    vectors = embed_chunks(chunks, embedder, tmp_path)
    assert len(chunks) == 5 and embedder.embedded == 4
    again = CountingEmbedder()
    assert np.allclose(embed_chunks(chunks, again, tmp_path), vectors) and again.embedded == 0
    ranking = NaiveVectorRetriever(chunks, vectors, QueryEmbeddings(embedder)).retrieve("bbb")
    assert [i.doc_id for i in ranking.items][:2] == ["B", "D"] and len(ranking.items) == 5
    assert ranking.latency_ms >= ranking.recall_ms >= 0


def test_bm25_baseline_ranks_by_the_projects_bm25():
    docs = [
        EvalDoc("redis", "R", "Redis Sentinel elects a new primary after a failover."),
        EvalDoc("kafka", "K", "Kafka consumer groups read each partition once."),
        EvalDoc("zh", "Z", "马齐去世后谥号文穆。"),
    ]
    retriever = NaiveBM25Retriever(chunk_corpus(docs))
    assert [i.doc_id for i in retriever.retrieve("Which primary does Sentinel elect?").items] == ["redis"]
    assert [i.doc_id for i in retriever.retrieve("马齐的谥号").items] == ["zh"]
    assert retriever.retrieve("nothing matches").items == []
