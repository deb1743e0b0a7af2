"""One evaluation run: build the set, run every question through each method, score, and assemble the report.

Petrichor and the baselines (naive_hybrid, the bar; naive_vector; naive_bm25) are measured in the same
process on the same questions. Latency is measured per question with a cold query-vector cache (query
embedding included); ablation variants reuse the warm cache, so their `recall_ms` is recall work alone.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
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
from petrichor.evaluation.dataset import Dataset, cross_questions, load_dataset
from petrichor.evaluation.followups import FollowUp, construct, load_written
from petrichor.evaluation.hybrid import NaiveHybridRetriever
from petrichor.evaluation.leave_gold_out import variant_dataset
from petrichor.evaluation.retrieval import PetrichorRetriever, Retriever
from petrichor.evaluation.scoring import (
    Outcome,
    Scorer,
    level_ranks,
    recall_curve,
    summarise,
    summarise_subsets,
)
from petrichor_core.text.tokenize import warm_tokenizer

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
    unanswerable_from: tuple[Path, ...] = ()
    """Other sets whose questions are asked of this set's corpus as unanswerable questions (`--answers`)."""
    unanswerable_sample: int = 50
    """How many questions of each such set (evenly spread)."""
    signals_path: Path | None = None
    """Where to write Petrichor's answerability signals, one JSON line per question (`answerability_sweep`)."""
    leave_gold_out: int = 0
    """With `answers`: about this many answerable questions lose their gold evidence from a corpus variant built
    in `root` (`leave_gold_out`) and are asked as in-domain unanswerable questions; 0: the set as it is."""
    followups: int = 0
    """With `answers`: this many follow-ups constructed from the set's questions (`followups.construct`);
    a set's hand-written `followups.jsonl` is asked whenever answers are."""
    variants: tuple[str, ...] = ()
    """The ablation's variants to run (`ablation.variants()` names); empty: every one."""
    ranker_features: Path | None = None
    """Where to write the learned ranker's training rows (`ranker_data`), one JSON line per rerank pool."""


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


ANSWER_BASELINE = "naive_top_sentence"
UNANSWERED_BY = ("petrichor", "naive_hybrid", ANSWER_BASELINE)
"""The methods also asked the unanswerable questions (the others answer the answerable ones only)."""


@dataclass(frozen=True)
class AnswerRun:
    methods: dict[str, Any]
    """Answer figures per method: the retrievers' and `ANSWER_BASELINE`'s."""
    signals: list[dict[str, Any]]
    """Petrichor's answerability record per question, answerable and not."""


def _answers(
    dataset: Dataset,
    built: BuiltSet,
    retrievers: dict[str, Retriever],
    scorer: Scorer,
    unanswerable: tuple[Any, ...],
    log: Log,
    followups: dict[str, tuple[FollowUp, ...]] | None = None,
) -> AnswerRun:
    from petrichor.evaluation.answers import (
        agent_answer,
        answer_contains,
        retrieval_answer,
        summarise_answers,
        summarise_not_found,
        top_sentence_answer,
        unanswerable_kind,
        unanswerable_scope,
        without_gate,
    )
    from petrichor_core.config import load_settings
    from petrichor_core.models.providers import make_answer_model
    from petrichor_serving.answer.answerer import OFFLINE

    chat = make_answer_model(load_settings()) or OFFLINE  # what serving answers with
    doc_of_article = {a: d for d, a in built.article_of.items()}
    titles = {d.doc_id: d.title for d in dataset.docs}
    answerers = {
        **{
            name: (
                (lambda q: agent_answer(q, built.snapshot, chat, built.embedder, doc_of_article))
                if name == "petrichor"
                else partial(retrieval_answer, retriever=retriever, chat=chat, titles=titles)
            )
            for name, retriever in retrievers.items()
        },
        ANSWER_BASELINE: lambda q: top_sentence_answer(q, retrievers["naive_hybrid"]),
    }
    out: dict[str, Any] = {}
    signals: list[dict[str, Any]] = []
    asked: dict[str, Any] = {}
    for name, answer_one in answerers.items():
        outcomes = [answer_one(q) for q in dataset.questions]
        out[name] = summarise_answers(dataset.questions, outcomes, scorer)
        unanswered = [answer_one(q) for q in unanswerable] if unanswerable and name in UNANSWERED_BY else []
        if unanswered:
            out[name]["not_found"] = summarise_not_found(unanswerable, unanswered)
        log(f"{name}: answered {len(outcomes)} questions and {len(unanswered)} unanswerable ones")
        if name != "petrichor":
            continue
        asked = {q.qid: o for q, o in zip(dataset.questions, outcomes)}
        ungated = [without_gate(o, doc_of_article, q.lang) for q, o in zip(dataset.questions, outcomes)]
        before = summarise_answers(dataset.questions, ungated, scorer)
        if unanswered:
            before["not_found"] = summarise_not_found(
                unanswerable, [without_gate(o, doc_of_article, q.lang) for q, o in zip(unanswerable, unanswered)]
            )
        out[name]["without_gate"] = before
        for q, o, u in [*zip(dataset.questions, outcomes, ungated), *zip(unanswerable, unanswered, unanswered)]:
            signals.append(
                {
                    "dataset": dataset.name,
                    "qid": q.qid,
                    "kind": "answerable" if q.has_gold and q.subset != "leave-gold-out" else unanswerable_kind(q),
                    "scope": None if q.has_gold and q.subset != "leave-gold-out" else unanswerable_scope(q),
                    "lang": q.lang,
                    "cited": bool(o.quotes),
                    "answerability": o.answerability,
                    "holds_gold": answer_contains(u.answer, q.answers_all, q.lang) if q.has_gold and q.answers_all else None,
                }
            )
    for source, pairs in (followups or {}).items():
        if not pairs:
            continue
        agent = lambda q, history=(): agent_answer(q, built.snapshot, chat, built.embedder, doc_of_article, history)  # noqa: E731
        runs = _followup_runs(pairs, agent, answerers[ANSWER_BASELINE], asked)
        for name, summary in runs.items():
            out.setdefault(name, {}).setdefault("followups", {})[source] = summary
        log(f"follow-ups ({source}): {len(pairs)} asked")
    return AnswerRun(out, signals)


def _followup_runs(pairs: tuple[FollowUp, ...], agent: Callable[..., Any], baseline: Callable[[Any], Any], asked: dict[str, Any]) -> dict[str, Any]:
    """Petrichor asked each follow-up with the first question and its answer as history (the first answered
    afresh unless it was asked already), and without history; the answer baseline on the follow-up as asked."""
    from petrichor.evaluation.answers import summarise_followups

    questions = [p.question for p in pairs]
    with_history, alone, base = [], [], []
    for pair in pairs:
        first = asked.get(pair.first.qid) or agent(pair.first)
        history = [{"role": "user", "content": pair.first.question}, {"role": "assistant", "content": first.answer}]
        with_history.append(agent(pair.question, history))
        alone.append(agent(pair.question))
        base.append(baseline(pair.question))
    return {
        "petrichor": {**summarise_followups(questions, with_history), "without_history": summarise_followups(questions, alone)},
        ANSWER_BASELINE: summarise_followups(questions, base),
    }


def _ablation(
    dataset: Dataset, built: BuiltSet, petrichor: PetrichorRetriever, full: list[Outcome], scorer: Scorer, log: Log, only: tuple[str, ...] = ()
) -> dict[str, Any]:
    out: dict[str, Any] = {"full": {"description": "the product's defaults", **summarise(dataset.questions, full, with_latency=False)}}
    indexes = {"bigram": petrichor.index}
    chosen = [v for v in variants() if not only or v.name in only]
    unknown = set(only) - {v.name for v in chosen}
    if unknown:
        raise ValueError(f"unknown ablation variants {sorted(unknown)}; expected some of {[v.name for v in variants()]}")
    for variant in chosen:
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
            config=variant.config,
            cache=petrichor.cache,
        )
        outcomes = _run_questions(dataset, retriever, scorer, log)
        out[variant.name] = {"description": variant.description, **summarise(dataset.questions, outcomes, with_latency=False)}
    return out


def _limited(dataset: Dataset, limit: int) -> Dataset:
    """The first `limit` answerable and unanswerable questions (all when `limit` is 0); documents untouched."""
    if limit <= 0:
        return dataset
    return replace(dataset, questions=dataset.questions[:limit], unanswerable=dataset.unanswerable[:limit])


def prepare(config: EvalConfig, log: Log) -> tuple[Dataset, dict[str, Any], tuple[FollowUp, ...]]:
    """The set as evaluated (its leave-gold-out variant with `leave_gold_out`), what the variant left out, and
    the constructed follow-ups. The variant and the follow-ups come from the whole set, so `limit` changes
    neither the corpus built nor the follow-ups asked."""
    dataset = load_dataset(config.dataset_dir)
    pairs = construct(dataset.questions, dataset.docs, config.followups) if config.answers and config.followups else ()
    if not config.leave_gold_out:
        return _limited(dataset, config.limit), {}, pairs
    if dataset.corpus_dir is not None:
        raise ValueError(f"{dataset.name} is built from its corpus folder as it is; leave-gold-out needs a set with docs.jsonl")
    variant, made = variant_dataset(dataset, config.leave_gold_out)
    kept = {d.doc_id: d.content for d in made.docs}
    info = {
        "sampled": len(made.sampled),
        "unanswerable": len(made.unanswerable),
        "passed_over": made.passed_over,
        "answerable": len(made.answerable),
        "docs_dropped": sum(d.doc_id not in kept for d in dataset.docs),
        "docs_cut": sum(d.doc_id in kept and kept[d.doc_id] != d.content for d in dataset.docs),
    }
    log(
        f"leave-gold-out: {info['sampled']} questions sampled, {info['unanswerable']} lost their evidence "
        f"({info['passed_over']} passed over), {info['docs_dropped']} documents dropped, {info['docs_cut']} cut"
    )
    if pairs:
        pairs = construct(variant.questions, variant.docs, config.followups)
    return _limited(variant, config.limit), info, pairs


def run_eval(config: EvalConfig, log: Log) -> dict[str, Any]:
    """The report: `{dataset, questions, skipped_questions, snapshot, methods: {petrichor, naive_hybrid,
    naive_vector, naive_bm25}, answer_baseline, unanswerable_questions, subsets, ablation, curves, seconds}`;
    `answer_baseline` and each method's `answer` only with `answers`."""
    started = time.perf_counter()
    dataset, left_out, pairs = prepare(config, log)
    log(f"{dataset.name}: {len(dataset.docs)} documents, {len(dataset.questions)} questions ({dataset.skipped} without gold skipped)")
    built = build_set(dataset, EvalLayout(config.root), on_progress=lambda stage, done, total: log(f"build {stage}: {done}/{total}"))
    log(f"snapshot {built.snapshot.version} ready in {time.perf_counter() - started:.1f}s")
    return evaluate(config, dataset, built, log, started=started, left_out=left_out, followups=pairs)


def evaluate(
    config: EvalConfig,
    dataset: Dataset,
    built: BuiltSet,
    log: Log,
    *,
    started: float | None = None,
    left_out: dict[str, Any] | None = None,
    followups: tuple[FollowUp, ...] | None = None,
) -> dict[str, Any]:
    """Everything after the build, on a built set (`run_eval`'s report); `started` dates the build's start;
    `followups`: the constructed follow-ups (None: constructed here from `dataset`)."""
    started = time.perf_counter() if started is None else started
    build_seconds = time.perf_counter() - started
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
    warm_tokenizer()  # as a server does at start-up
    PetrichorRetriever(built.snapshot, doc_of_article, embedder=embedder).retrieve("warm-up")
    retrievers["naive_hybrid"].retrieve("warm-up 预热")  # jieba's dictionary and bm25s's first call
    if config.ranker_features is not None:
        from petrichor.evaluation.ranker_data import write_ranker_rows

        pools = write_ranker_rows(config.ranker_features, dataset, built.snapshot, embedder, doc_of_article)
        log(f"ranker rows: {pools} pools written to {config.ranker_features}")

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
    unanswerable: tuple[Any, ...] = ()
    answer_baseline: dict[str, Any] = {}
    followup_sets: dict[str, tuple[FollowUp, ...]] = {}
    if config.answers:
        unanswerable = dataset.unanswerable + tuple(
            q for other in config.unanswerable_from for q in cross_questions(other, config.unanswerable_sample)
        )
        followup_sets = {
            "constructed": construct(dataset.questions, dataset.docs, config.followups) if followups is None else followups,
            "written": load_written(config.dataset_dir),
        }
        answered = _answers(dataset, built, retrievers, scorer, unanswerable, log, followup_sets)
        for name, summary in answered.methods.items():
            if name in methods:
                methods[name]["answer"] = summary
        answer_baseline = {"name": ANSWER_BASELINE, **answered.methods[ANSWER_BASELINE]}
        if config.signals_path is not None:
            config.signals_path.parent.mkdir(parents=True, exist_ok=True)
            with config.signals_path.open("w", encoding="utf-8") as fh:
                fh.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in answered.signals)
            log(f"answerability signals of {len(answered.signals)} questions written to {config.signals_path}")
    ablation = _ablation(dataset, built, petrichor, outcomes["petrichor"], scorer, log, config.variants) if config.ablation else {}
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
        "answer_baseline": answer_baseline,
        "unanswerable_questions": {
            "null": sum(q.subset != "leave-gold-out" for q in dataset.unanswerable),
            "leave-gold-out": sum(q.subset == "leave-gold-out" for q in dataset.unanswerable),
            **{f"cross:{p.resolve().name}": sum(q.subset == f"cross:{p.resolve().name}" for q in unanswerable) for p in config.unanswerable_from},
        },
        "leave_gold_out": left_out or {},
        "followups": {source: len(pairs) for source, pairs in followup_sets.items()},
        "subsets": {name: s for name, s in subsets.items() if s},
        "ablation": ablation,
        "curves": curves,
        "seconds": round(time.perf_counter() - started, 1),
    }
