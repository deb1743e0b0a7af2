"""The printed report: Petrichor beside naive_hybrid with the difference in every table."""

from __future__ import annotations

from rich.console import Console

from petrichor.evaluation.report import print_report


def _method(r1, mrr, p50, all_r5=None):
    block = {
        "doc": {"recall@1": r1, "recall@5": 0.9, "recall@10": 0.95, "mrr@10": mrr},
        "chunk": {"recall@5": 0.5, "recall@10": 0.6},
        "latency_ms": {"p50": p50, "p95": p50 * 2},
        "recall_ms": {"p50": 2.0, "p95": 3.0},
    }
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


def test_answers_show_not_found_apart_and_follow_ups_beside_the_baseline():
    def answer(nf_in, hit):
        return {
            "questions": 5,
            "short_exact_match": 0.4,
            "wrong_lead_ins": 0.2,
            "false_not_found": 0.0,
            "not_found": {
                "all": {"rate": nf_in, "questions": 6},
                "in_domain": {"rate": nf_in, "questions": 4},
                "off_topic": {"rate": 1.0, "questions": 2},
                "null": {"rate": nf_in, "questions": 4},
            },
            "followups": {"constructed": {"questions": 3, "hit": hit, "not_found": 0.0}},
        }

    petrichor = answer(0.75, 0.667)
    petrichor["followups"]["constructed"]["without_history"] = {"questions": 3, "hit": 0.333, "not_found": 0.0}
    report = {
        **REPORT,
        "methods": {**REPORT["methods"], "petrichor": {**REPORT["methods"]["petrichor"], "answer": petrichor}},
        "answer_baseline": {"name": "naive_top_sentence", **answer(0.0, 0.333)},
        "ablation": {},
    }
    console = Console(record=True, width=250)
    print_report(report, console)
    lines = console.export_text().splitlines()
    rows = [line.split("│")[1].strip() for line in lines if line.startswith("│")]
    assert rows.index("answer not_found in_domain") < rows.index("answer not_found off_topic") < rows.index("answer not_found null")
    assert any("wrong_lead_ins" in line and "0.200" in line for line in lines)
    assert any("65.5 EM / 84.5 F1" in line for line in lines)
    hit = next(line for line in lines if "followup hit" in line)
    assert "0.667" in hit and "0.333" in hit
    assert any("petrichor without history" in line for line in lines)
