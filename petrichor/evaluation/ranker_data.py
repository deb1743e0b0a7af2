"""The learned ranker's training rows: every rerank pool of a set's searches, each candidate's feature row
(`petrichor_serving.recall.features`) and its label, one JSON line per pool (`petrichor eval --ranker-features FILE`).

Labels: 2 for a chunk holding the gold passage or lying in the gold section, 1 for another chunk of a gold
document, 0 otherwise. Two sources: the set's own questions (`dev`), and the build's generated questions
(`generated`: a question the build wrote for one chunk, that chunk 2, its article's other chunks 1), weakly
labelled extra groups that need no human question. `group` names the article a question is about, so the fit
can keep all of one article's questions on one side of a cross-validation split.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from petrichor.evaluation.dataset import Dataset, EvalQuestion
from petrichor.evaluation.metrics import section_hit
from petrichor.evaluation.retrieval import Retrieved
from petrichor.evaluation.scoring import Scorer

GENERATED_PER_SET = 100
"""Generated questions taken from a set's build, evenly spread over its chunks: about half as many as a set's own."""


def _search_pools(snapshot: Any, embedder: Any, question: str, cache: Any) -> list[Any]:
    from petrichor_serving.recall.access import Scope
    from petrichor_serving.recall.pipeline import search

    pools: list[Any] = []
    search(snapshot.recall, question, scope=Scope(), embedder=embedder, cache=cache, feature_log=pools)
    return pools


def _dev_rows(dataset: Dataset, snapshot: Any, embedder: Any, doc_of_article: dict[str, str], cache: Any) -> Iterator[dict[str, Any]]:
    scorer = Scorer(dataset.questions)
    for q in dataset.questions:
        gold = set(q.gold_doc_ids) | {d for group in q.gold_doc_groups for d in group}
        sections = [(s.doc_id, s.heading_path) for s in q.gold_sections]
        for n, (hits, rows) in enumerate(_search_pools(snapshot, embedder, q.question, cache)):
            labels = [_label(q, scorer, snapshot, doc_of_article, gold, sections, aid, cid) for aid, cid in hits]
            yield {"set": dataset.name, "source": "dev", "qid": q.qid, "group": min(gold, default=q.qid), "pool": n, "labels": labels, "rows": rows}


def _label(
    q: EvalQuestion,
    scorer: Scorer,
    snapshot: Any,
    doc_of_article: dict[str, str],
    gold: set[str],
    sections: list[tuple[str, tuple[str, ...]]],
    article_id: str | None,
    chunk_id: str | None,
) -> int:
    doc = doc_of_article.get(article_id) if article_id else None
    if doc is None or doc not in gold:
        return 0
    row = snapshot.chunks.get(chunk_id) if chunk_id else None
    if row is None:
        return 1
    item = Retrieved(doc, row["content"], tuple(row["heading_path"] or ()))
    return 2 if scorer.passage_hit(q, item) or (sections and section_hit(doc, item.heading_path, sections)) else 1


def _generated_rows(name: str, snapshot: Any, embedder: Any, cache: Any, count: int) -> Iterator[dict[str, Any]]:
    chunk_ids = sorted(cid for cid in snapshot.chunks if snapshot.questions_by_chunk.get(cid))
    if not chunk_ids or count <= 0:
        return
    step = max(1, len(chunk_ids) // count)
    for cid in chunk_ids[::step][:count]:
        article = snapshot.chunks[cid]["article_id"]
        question = snapshot.questions_by_chunk[cid][0]
        for n, (hits, rows) in enumerate(_search_pools(snapshot, embedder, question, cache)):
            labels = [2 if c == cid else 1 if a == article else 0 for a, c in hits]
            yield {"set": name, "source": "generated", "qid": f"generated:{cid}", "group": article, "pool": n, "labels": labels, "rows": rows}


def write_ranker_rows(
    path: Path, dataset: Dataset, snapshot: Any, embedder: Any, doc_of_article: dict[str, str], generated: int = GENERATED_PER_SET
) -> int:
    """Writes the set's pools (its questions', then `generated` of the build's generated questions') to
    `path` as JSON lines; returns how many pools."""
    from petrichor_serving.recall.features import feature_names
    from petrichor_serving.recall.query_vectors import QueryVectorCache

    cache = QueryVectorCache(size=1 << 16)
    written = 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        out.write(json.dumps({"features": list(feature_names())}) + "\n")
        for source in (
            _dev_rows(dataset, snapshot, embedder, doc_of_article, cache),
            _generated_rows(dataset.name, snapshot, embedder, cache, generated),
        ):
            for record in source:
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
                written += 1
    return written
