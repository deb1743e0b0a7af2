"""The shared evaluation sets fit the metric definitions: every gold passage of the first questions is found
in a gold document by the chunk-level test, every gold section exists as a heading path, and every group of
a `gold_doc_groups` question holds gold documents. Reads a few lines only (RGB's questions are spread over
its subsets); skipped when `../shared/eval` is absent."""

from __future__ import annotations

import itertools
import json

import pytest

from petrichor.evaluation.baselines import naive_chunks
from petrichor.evaluation.dataset import EvalDoc, parse_question
from petrichor.evaluation.metrics import GoldPassage
from tests.conftest import SHARED_EVAL

SETS = ("rhdh_docs_en", "cmrc2018_zh", "multihop_rag_en", "rgb_zh")
QUESTIONS = 5


def _lines(path, limit=None):
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in itertools.islice(fh, limit) if line.strip()]


@pytest.mark.parametrize("name", SETS)
def test_gold_evidence_is_found_in_gold_documents(name):
    folder = SHARED_EVAL / name
    if not (folder / "qa.jsonl").is_file():
        pytest.skip(f"{folder} is not available")
    parsed = [parse_question(r) for r in _lines(folder / "qa.jsonl")]
    by_subset: dict[str, list] = {}
    for q in parsed:
        if q.has_gold and len(by_subset.setdefault(q.subset, [])) < QUESTIONS:
            by_subset[q.subset].append(q)
    questions = [q for qs in by_subset.values() for q in qs]
    wanted = {d for q in questions for d in q.gold_doc_ids}
    docs = {}
    with (folder / "docs.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            if any(f'"{d}"' in line for d in wanted - set(docs)):
                row = json.loads(line)
                if row["doc_id"] in wanted:
                    docs[row["doc_id"]] = EvalDoc(row["doc_id"], row["title"], row["content"])
            if len(docs) == len(wanted):
                break
    assert set(docs) == wanted
    for q in questions:
        assert q.gold_passages or q.answers_all, q.qid
        assert all(set(g) <= set(q.gold_doc_ids) for g in q.gold_doc_groups), q.qid
        assert q.gold_match == "any" or len(q.needed_docs) == len(q.gold_doc_ids) > 1, q.qid
        for passage in q.gold_passages:
            gold = GoldPassage.of(passage, q.lang)
            assert any(gold.found_in(docs[d].content) for d in q.gold_doc_ids), (q.qid, passage[:80])
        for section in q.gold_sections:
            paths = {c.heading_path for c in naive_chunks(docs[section.doc_id], size=200, overlap=0)}
            assert any(p[-len(section.heading_path) :] == section.heading_path for p in paths), (q.qid, section)
