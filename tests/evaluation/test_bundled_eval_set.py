"""The bundled corpus's hand-written set (`tests/fixtures/bundled_eval`) through the harness, on the suite's build.

In-domain questions the docs do not answer (a price, a person, a platform, a limit, a year), answerable ones and
follow-ups, in both languages. The test asserts that every figure is computed, not what it is: the figures are
read from `petrichor eval --dataset tests/fixtures/bundled_eval --answers`.
"""

from __future__ import annotations

import pytest

from petrichor.evaluation.build import BuiltSet
from petrichor.evaluation.dataset import load_dataset
from petrichor.evaluation.harness import EvalConfig, evaluate
from petrichor_pipeline.sources.identity import article_id_of
from tests.conftest import EMBED_CACHE, REPO

pytestmark = pytest.mark.slow  # uses the session's bundled build and embeds the naive baseline's chunks

SET = REPO / "tests" / "fixtures" / "bundled_eval"


def test_the_set_names_only_articles_of_the_bundled_corpus():
    dataset = load_dataset(SET)
    docs = {d.doc_id for d in dataset.docs}
    assert {d.split("/")[0] for d in docs} == {"petrichor-en", "petrichor-zh"}
    assert all(set(q.gold_doc_ids) <= docs for q in dataset.questions)
    langs = [q.lang for q in dataset.unanswerable]
    assert langs.count("en") >= 15 and langs.count("zh") >= 15
    assert sum(q.lang == "en" for q in dataset.questions) >= 10 and sum(q.lang == "zh" for q in dataset.questions) >= 10


def test_the_harness_scores_the_set_on_the_bundled_build(served_snapshot, monkeypatch, tmp_path):
    for name in ("PETRICHOR_LLM_BASE_URL", "PETRICHOR_EMBED_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    snapshot, embedder = served_snapshot
    dataset = load_dataset(SET)
    built = BuiltSet(snapshot, embedder, {d.doc_id: article_id_of(d.doc_id) for d in dataset.docs}, {})
    assert set(built.article_of.values()) <= set(snapshot.articles)
    config = EvalConfig(dataset_dir=SET, root=tmp_path, embed_cache_dir=EMBED_CACHE, answers=True, ablation=False)
    report = evaluate(config, dataset, built, log=lambda _: None)

    assert report["unanswerable_questions"]["null"] == len(dataset.unanswerable)
    assert report["followups"] == {"constructed": 0, "written": 10}
    for block in (report["methods"]["petrichor"]["answer"], report["answer_baseline"]):
        assert block["questions"] == len(dataset.questions)
        assert block["false_not_found"] is not None and block["short_exact_match"] is not None
        assert block["wrong_lead_ins"] is not None and block["reference_f1"] is not None
        in_domain = block["not_found"]["in_domain"]
        assert in_domain["questions"] == len(dataset.unanswerable) and 0.0 <= in_domain["rate"] <= 1.0
        assert block["followups"]["written"]["questions"] == 10 and block["followups"]["written"]["hit"] is not None
    assert report["methods"]["petrichor"]["answer"]["followups"]["written"]["without_history"]["questions"] == 10
    assert report["answer_baseline"]["not_found"]["in_domain"]["rate"] == 0.0  # the baseline never says "not found"
