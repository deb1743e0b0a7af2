"""The printed report: Petrichor beside naive_hybrid with the difference in every table."""

from __future__ import annotations

from rich.console import Console

from petrichor.evaluation.report import print_report


def _method(r1, mrr, p50, all_r5=None):
    block = {"doc": {"recall@1": r1, "recall@5": 0.9, "recall@10": 0.95, "mrr@10": mrr},
             "chunk": {"recall@5": 0.5, "recall@10": 0.6},
             "latency_ms": {"p50": p50, "p95": p50 * 2}, "recall_ms": {"p50": 2.0, "p95": 3.0}}
    if all_r5 is not None:
        block["all_gold"] = {"recall@5": all_r5, "recall@10": all_r5, "mrr@10": 0.2, "questions": 4}
    return block


REPORT = {
    "dataset": "tiny",
    "questions": 5,
    "skipped_questions": 1,
    "snapshot": {"version": "v1", "articles": 3, "chunks": 4, "questions": 6, "naive_chunks": 5, "build_seconds": 1.0},
    "seconds": 2.0,
    "methods": {
        "petrichor": _method(0.8, 0.85, 30.0, 0.5),
        "naive_vector": _method(0.6, 0.7, 15.0, 0.25),
        "naive_bm25": _method(0.5, 0.6, 1.0, 0.25),
        "naive_hybrid": _method(0.7, 0.8, 20.0, 0.375),
    },
    "subsets": {
        "petrichor": {"zh_int": {"questions": 4, **_method(0.75, 0.8, 0.0, 0.5)}},
        "naive_hybrid": {"zh_int": {"questions": 4, **_method(0.5, 0.6, 0.0, 0.25)}},
    },
    "ablation": {"full": _method(0.8, 0.85, 0.0, 0.5), "no_rerank": _method(0.9, 0.85, 0.0, 0.5)},
}


def test_every_table_sets_petrichor_beside_naive_hybrid():
    console = Console(record=True, width=250)
    print_report(REPORT, console)
    text = console.export_text()
    assert "5 questions (1 without gold skipped)" in text and "subset zh_int: 4 questions" in text
    header = next(line for line in text.splitlines() if "petrichor − naive_hybrid" in line)
    assert header.index("petrichor") < header.index("naive_hybrid ") < header.index("naive_vector") < header.index("naive_bm25")
    doc_r1 = next(line for line in text.splitlines() if line.strip().startswith("│ doc recall@1"))
    assert "+0.100" in doc_r1  # 0.8 − 0.7
    p50 = next(line for line in text.splitlines() if "latency_ms p50" in line)
    assert "+10.0 (×1.50)" in p50
    all_r5 = next(line for line in text.splitlines() if "all_gold recall@5" in line)
    assert "+0.125" in all_r5
    assert text.count("petrichor − naive_hybrid") == 2  # the set and its subset
    assert "h +0.200" in text  # ablation: no_rerank's doc R@1 against naive_hybrid
