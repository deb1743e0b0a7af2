"""Loading a set and materialising it as a corpus; scoring rankings against its gold evidence."""

from __future__ import annotations

import json

import pytest

from petrichor.evaluation.corpus import KB_ID, doc_filename, materialise_corpus
from petrichor.evaluation.dataset import EvalDoc, GoldSection, load_dataset
from petrichor.evaluation.retrieval import Ranking, Retrieved
from petrichor.evaluation.scoring import Scorer, summarise, summarise_subsets
from petrichor_pipeline.sources.frontmatter import split_front_matter
from petrichor_pipeline.sources.identity import article_id_of


@pytest.fixture
def dataset_dir(tmp_path):
    d = tmp_path / "tiny"
    d.mkdir()
    docs = [
        {"doc_id": "a/b", "title": "Title: with colon", "content": "# A\n\n## B\n\nThe quick brown fox jumps over the lazy dog."},
        {"doc_id": "z", "title": "中文", "content": "第一段。\n\n乾隆四年去世，谥文穆。"},
    ]
    qa = [
        {
            "qid": "1",
            "question": "What does the fox do?",
            "gold_doc_ids": ["a/b"],
            "gold_passages": ["The quick brown fox jumps over the lazy dog."],
            "gold_sections": [{"doc_id": "a/b", "heading_path": "A > B"}],
            "lang": "en",
        },
        {
            "qid": "2",
            "question": "谥号是什么？",
            "answers_all": ["文穆"],
            "gold_doc_ids": ["z"],
            "gold_passages": ["乾隆四年去世，谥文穆。"],
            "gold_match": "all",
        },
    ]
    (d / "docs.jsonl").write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in docs) + "\n", encoding="utf-8")
    (d / "qa.jsonl").write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in qa) + "\n\n", encoding="utf-8")
    return d


def test_load_dataset(dataset_dir):
    ds = load_dataset(dataset_dir)
    assert ds.name == "tiny" and [d.doc_id for d in ds.docs] == ["a/b", "z"]
    first, second = ds.questions
    assert first.gold_sections == (GoldSection("a/b", ("A", "B")),) and first.gold_match == "any"
    assert second.lang == "zh" and second.answers_all == ("文穆",) and second.gold_match == "all"
    assert len(load_dataset(dataset_dir, limit=1).questions) == 1


def test_materialise_corpus_writes_front_matter_and_is_idempotent(dataset_dir, tmp_path):
    ds = load_dataset(dataset_dir)
    corpus = tmp_path / "corpus"
    ids = materialise_corpus(ds.docs, corpus)
    name = doc_filename("a/b")
    assert name.startswith("a_b-") and name.endswith(".md") and doc_filename("z") == "z.md"
    assert ids == {"a/b": article_id_of(f"{KB_ID}/{name}"), "z": article_id_of(f"{KB_ID}/z.md")}
    meta, body = split_front_matter((corpus / KB_ID / name).read_text(encoding="utf-8"))
    assert meta == {"title": "Title: with colon"} and body.strip() == ds.docs[0].content

    mtime = (corpus / KB_ID / "z.md").stat().st_mtime_ns
    materialise_corpus(ds.docs, corpus)
    assert (corpus / KB_ID / "z.md").stat().st_mtime_ns == mtime  # unchanged text is not rewritten
    materialise_corpus(ds.docs[1:], corpus)
    assert sorted(p.name for p in (corpus / KB_ID).iterdir()) == ["z.md"]  # a dropped document goes away


def test_scoring_a_ranking(dataset_dir):
    ds = load_dataset(dataset_dir)
    scorer = Scorer(ds.questions)
    fox, zh = ds.questions
    ranking = Ranking(
        [
            Retrieved("z", "无关。"),
            Retrieved(None, ""),  # a wiki page: no document, not a chunk
            Retrieved("a/b", "# A\n\n## B\n\nThe quick brown fox jumps over the lazy dog.", ("A", "B")),
        ],
        latency_ms=12.0,
        recall_ms=2.0,
    )
    outcome = scorer.outcome(fox, ranking)
    assert (outcome.doc_rank, outcome.passage_rank, outcome.section_rank) == (2, 3, 3)
    miss = scorer.outcome(zh, Ranking([Retrieved("z", "第一段。")], 30.0))
    assert (miss.doc_rank, miss.passage_rank, miss.section_rank) == (1, None, None)

    summary = summarise(ds.questions, [outcome, miss])
    assert summary["doc"] == {"recall@1": 0.5, "recall@5": 1.0, "recall@10": 1.0, "mrr@10": 0.75}
    assert summary["chunk"] == {"recall@5": 0.5, "recall@10": 0.5}
    assert summary["section"] == {"recall@5": 1.0, "recall@10": 1.0}  # only the first question has sections
    assert summary["latency_ms"] == {"p50": 21.0, "p95": 29.1} and summary["recall_ms"] == {"p50": 2.0, "p95": 2.0}
    assert scorer.reachable([Retrieved("z", "乾隆四年去世，谥文穆。"), Retrieved("a/b", "nothing")]) == 0.5


def test_render_keeps_plain_paragraphs(tmp_path):
    materialise_corpus([EvalDoc("p", "T", "第一段。\n\n第二段。")], tmp_path)
    assert (tmp_path / KB_ID / "p.md").read_text(encoding="utf-8") == "---\ntitle: T\n---\n\n第一段。\n\n第二段。\n"


MULTI_DOC_QUESTIONS = [
    {
        "qid": "mhr_1",
        "question": "Did A and B both report it?",
        "answer": "Yes",
        "gold_match": "all",
        "gold_doc_ids": ["a", "b"],
        "gold_passages": ["alpha one two three four five six", "beta seven eight nine ten eleven twelve"],
    },
    {
        "qid": "mhr_2",
        "question": "Unanswerable?",
        "answer": "Insufficient information.",
        "gold_match": "all",
        "gold_doc_ids": [],
        "gold_passages": [],
        "question_type": "null_query",
    },
    {
        "qid": "zh_int_1",
        "question": "2021年香港和澳门的GDP增长率",
        "answer": ["6.4%", ["18%", "百分之十八"]],
        "gold_doc_ids": ["h1", "h2", "m1"],
        "gold_doc_groups": [["h1", "h2"], ["m1"]],
        "subset": "zh_int",
        "lang": "zh",
    },
    {
        "qid": "zh_refine_1",
        "question": "2023年世界人工智能大会在哪举办",
        "answer": ["上海"],
        "gold_doc_ids": ["s1", "s2"],
        "subset": "zh_refine",
        "lang": "zh",
    },
]


def test_questions_needing_several_documents_load_and_score(tmp_path):
    d = tmp_path / "multi"
    d.mkdir()
    (d / "docs.jsonl").write_text(json.dumps({"doc_id": "a", "title": "A", "content": "x"}) + "\n", encoding="utf-8")
    (d / "qa.jsonl").write_text("\n".join(json.dumps(q, ensure_ascii=False) for q in MULTI_DOC_QUESTIONS), encoding="utf-8")
    ds = load_dataset(d)
    assert [q.qid for q in ds.questions] == ["mhr_1", "zh_int_1", "zh_refine_1"] and ds.skipped == 1
    mhr, zh_int, zh_refine = ds.questions
    assert mhr.needed_docs == (("a",), ("b",)) and zh_refine.needed_docs == ()
    assert zh_int.needed_docs == (("h1", "h2"), ("m1",)) and zh_int.subset == "zh_int"
    assert zh_int.answers_all == ("6.4%", "18%", "百分之十八") and zh_refine.answer == "上海"

    scorer = Scorer(ds.questions)
    outcomes = [
        scorer.outcome(
            mhr,
            Ranking(
                [Retrieved("a", "alpha one two three four five six"), Retrieved("x", "y"), Retrieved("b", "beta seven eight nine ten eleven twelve")],
                5.0,
            ),
        ),
        scorer.outcome(zh_int, Ranking([Retrieved("h2", "香港"), Retrieved("h1", "香港"), Retrieved("m1", "澳门")], 5.0)),
        scorer.outcome(zh_refine, Ranking([Retrieved("x", "无关"), Retrieved("s2", "上海")], 5.0)),
    ]
    assert [(o.doc_rank, o.all_doc_rank, o.passage_rank, o.all_passage_rank) for o in outcomes] == [
        (1, 3, 1, 3),
        (1, 3, None, None),
        (2, None, None, None),
    ]
    summary = summarise(ds.questions, outcomes)
    assert summary["doc"]["recall@1"] == 0.6667
    assert summary["all_gold"] == {
        "recall@5": 1.0,
        "recall@10": 1.0,
        "mrr@10": 0.3333,
        "passage_recall@5": 1.0,
        "passage_recall@10": 1.0,
        "questions": 2,
    }
    by_subset = summarise_subsets(ds.questions, outcomes)
    assert set(by_subset) == {"zh_int", "zh_refine"}
    assert by_subset["zh_int"]["questions"] == 1 and by_subset["zh_int"]["all_gold"]["recall@5"] == 1.0
    assert "all_gold" not in by_subset["zh_refine"] and by_subset["zh_refine"]["doc"]["mrr@10"] == 0.5
