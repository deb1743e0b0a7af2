"""One evaluation run: build the set, run every question through each method, score, and assemble the report.

Petrichor and the baselines (naive_hybrid, the bar; naive_vector; naive_bm25) are measured in the same
process on the same questions. Latency is measured per question with a cold query-vector cache (query
embedding included); ablation variants reuse the warm cache, so their `recall_ms` is recall work alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from petrichor.evaluation.ablation import rebuild_index, variants
from petrichor.evaluation.baselines import (
    NaiveBM25Retriever,
    NaiveVectorRetriever,
    QueryEmbeddings,
    chunk_corpus,
    embed_chunks,
)
from petrichor.evaluation.build import BuiltSet, EvalLayout, build_set
from petrichor.evaluation.dataset import Dataset, load_dataset
from petrichor.evaluation.hybrid import NaiveHybridRetriever
from petrichor.evaluation.retrieval import PetrichorRetriever, Retriever
from petrichor.evaluation.scoring import (
    Outcome,
    Scorer,
    level_ranks,
    recall_curve,
    summarise,
    summarise_subsets,
)

Log = Callable[[str], None]
PROGRESS_EVERY = 50


@dataclass(frozen=True)
class EvalConfig:
    dataset_dir: Path
    root: Path
    """The set's own data directory (corpus, warehouse, snapshots, Dagster instance)."""
    embed_cache_dir: Path
    limit: int = 0
    answers: bool = False
    ablation: bool = True


def _run_questions(dataset: Dataset, retriever: Retriever, scorer: Scorer, log: Log) -> list[Outcome]:
    return _run_interleaved(dataset, {retriever.name: retriever}, scorer, log)[retriever.name]


def _run_interleaved(dataset: Dataset, retrievers: dict[str, Retriever], scorer: Scorer, log: Log) -> dict[str, list[Outcome]]:
    """Every retriever answers each question before the next question, starting one place later each time,
    so a burst of load on a shared machine slows all of them alike and latency ratios stay comparable."""
    names = list(retrievers)
    outcomes: dict[str, list[Outcome]] = {name: [] for name in names}
    for n, q in enumerate(dataset.questions, 1):
        shift = (n - 1) % len(names)
        for name in names[shift:] + names[:shift]:
            outcomes[name].append(scorer.outcome(q, retrievers[name].retrieve(q.question)))
        if n % PROGRESS_EVERY == 0 or n == len(dataset.questions):
            log(f"{', '.join(names)}: {n}/{len(dataset.questions)} questions")
    return outcomes


def _curves(dataset: Dataset, outcomes: list[Outcome]) -> dict[str, list[float | None]]:
    out = {}
    for level in ("doc", "all_doc", "passage", "section"):
        ranks = level_ranks(dataset.questions, outcomes, level)
        if ranks:
            out[level] = recall_curve(ranks)
    return out


def _answers(dataset: Dataset, built: BuiltSet, retrievers: dict[str, Retriever], scorer: Scorer, log: Log) -> dict[str, Any]:
    from petrichor_pipeline.config import load_settings
    from petrichor.evaluation.answers import (
        agent_answer,
        retrieval_answer,
        summarise_answers,
    )
    from petrichor_pipeline.models.providers import make_chat_model

    chat = make_chat_model(load_settings())
    doc_of_article = {a: d for d, a in built.article_of.items()}
    titles = {d.doc_id: d.title for d in dataset.docs}
    out = {}
    for name, retriever in retrievers.items():
        if name == "petrichor":
            outcomes = [agent_answer(q, built.snapshot, chat, built.embedder, doc_of_article) for q in dataset.questions]
        else:
            outcomes = [retrieval_answer(q, retriever, chat, titles) for q in dataset.questions]
        log(f"{name}: answered {len(outcomes)} questions")
        out[name] = summarise_answers(dataset.questions, outcomes, scorer)
    return out


def _ablation(dataset: Dataset, built: BuiltSet, petrichor: PetrichorRetriever, full: list[Outcome], scorer: Scorer, log: Log) -> dict[str, Any]:
    out: dict[str, Any] = {
        "full": {"description": "the product's defaults", **summarise(dataset.questions, full, with_latency=False)}
    }
    indexes = {"bigram": petrichor.index}
    for variant in variants():
        if variant.tokenizer not in indexes:
            started = time.perf_counter()
            indexes[variant.tokenizer] = rebuild_index(built.snapshot, variant.tokenizer)
            log(f"recall index rebuilt with the {variant.tokenizer} tokenizer in {time.perf_counter() - started:.1f}s")
        retriever = PetrichorRetriever(
            built.snapshot,
            petrichor.doc_of_article,
            embedder=built.embedder,
            name=variant.name,
            index=indexes[variant.tokenizer],
            options=variant.options,
            cache=petrichor.cache,
        )
        outcomes = _run_questions(dataset, retriever, scorer, log)
        out[variant.name] = {"description": variant.description, **summarise(dataset.questions, outcomes, with_latency=False)}
    return out


def run_eval(config: EvalConfig, log: Log) -> dict[str, Any]:
    """The report: `{dataset, questions, skipped_questions, snapshot, methods: {petrichor, naive_hybrid,
    naive_vector, naive_bm25}, subsets, ablation, curves, seconds}`."""
    started = time.perf_counter()
    dataset = load_dataset(config.dataset_dir, config.limit)
    log(f"{dataset.name}: {len(dataset.docs)} documents, {len(dataset.questions)} questions ({dataset.skipped} without gold skipped)")
    built = build_set(dataset, EvalLayout(config.root), on_progress=lambda stage, done, total: log(f"build {stage}: {done}/{total}"))
    build_seconds = time.perf_counter() - started
    log(f"snapshot {built.snapshot.version} ready in {build_seconds:.1f}s")
    embedder = built.embedder

    naive = chunk_corpus(dataset.docs)
    vectors = embed_chunks(naive, embedder, config.embed_cache_dir, lambda done, total: log(f"naive chunk vectors: {done}/{total}"))
    doc_of_article = {a: d for d, a in built.article_of.items()}
    petrichor = PetrichorRetriever(built.snapshot, doc_of_article, embedder=embedder)
    naive_vector = NaiveVectorRetriever(naive, vectors, QueryEmbeddings(embedder))
    retrievers: dict[str, Retriever] = {
        "petrichor": petrichor,
        "naive_hybrid": NaiveHybridRetriever(naive, naive_vector),
        "naive_vector": naive_vector,
        "naive_bm25": NaiveBM25Retriever(naive),
    }
    embedder.embed_queries(["warm-up"])  # loads the model outside the timed loop
    PetrichorRetriever(built.snapshot, doc_of_article, embedder=embedder).retrieve("warm-up")
    retrievers["naive_hybrid"].retrieve("warm-up 预热")  # jieba's dictionary and bm25s's first call

    scorer = Scorer(dataset.questions)
    methods: dict[str, Any] = {}
    subsets: dict[str, Any] = {}
    curves: dict[str, Any] = {}
    outcomes = _run_interleaved(dataset, retrievers, scorer, log)
    for name, retriever in retrievers.items():
        methods[name] = summarise(dataset.questions, outcomes[name])
        methods[name]["chunk"]["reachable"] = scorer.reachable(retriever.all_chunks())
        curves[name] = _curves(dataset, outcomes[name])
        subsets[name] = summarise_subsets(dataset.questions, outcomes[name])
    if config.answers:
        for name, summary in _answers(dataset, built, retrievers, scorer, log).items():
            methods[name]["answer"] = summary
    ablation = _ablation(dataset, built, petrichor, outcomes["petrichor"], scorer, log) if config.ablation else {}
    rows = built.snapshot.manifest.row_counts
    return {
        "dataset": dataset.name,
        "questions": len(dataset.questions),
        "skipped_questions": dataset.skipped,
        "snapshot": {
            "version": built.snapshot.version,
            "articles": rows.get("articles"),
            "chunks": rows.get("chunks"),
            "questions": rows.get("questions"),
            "wiki_pages": rows.get("wiki_pages"),
            "naive_chunks": len(naive),
            "embedder": embedder.fingerprint,
            "build_seconds": round(build_seconds, 1),
            "build_warnings": len(built.build.get("warnings") or []),
        },
        "methods": methods,
        "subsets": {name: s for name, s in subsets.items() if s},
        "ablation": ablation,
        "curves": curves,
        "seconds": round(time.perf_counter() - started, 1),
    }
