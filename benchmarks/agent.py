"""The offline agent against a built snapshot: structure-question coverage and latency beside one search.

    python benchmarks/agent.py --data /work/evaldata/eval/rhdh_docs_en            # the rhdh structure set
    python benchmarks/agent.py --data <PETRICHOR_DATA of the bundled corpus> --bundled
    python benchmarks/agent.py --data /work/evaldata/eval/cmrc2018_zh --questions ../shared/eval/cmrc2018_zh/qa.jsonl --limit 50

For each question it times one `loop.answer` (offline plans, no model) and one `tools.search` of the same
question in the same run, and reports both p50s and their ratio (goal ≤ 3×). With structure questions
(`benchmarks/data/rhdh_structure.jsonl`, see `structure_questions.py`) it also reports the share of answers
that name ≥ 80 % of the section's children in order (goal ≥ 80 % of questions) and cite the guide.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

STRUCTURE_SET = REPO / "benchmarks" / "data" / "rhdh_structure.jsonl"
CHILD_COVERAGE = 0.8
BUNDLED_QUESTIONS = (
    "快速开始需要哪些步骤？",
    "Which sections does the configuration reference have?",
    "快照默认保留多少个版本？",
    "What is the default RRF constant?",
    "默认的最大文件大小是多少？",
    "切片算法这篇文档有哪些章节？",
    "What is the difference between BM25 and vector search?",
    "How do I start the HTTP service?",
    "What is the capital of Mongolia?",
)


def in_order_coverage(answer: str, children: list[str]) -> float:
    """The share of children named in the answer, each after the previous one found."""
    pos, found = 0, 0
    for child in children:
        at = answer.find(child, pos)
        if at >= 0:
            found += 1
            pos = at + len(child)
    return found / len(children) if children else 1.0


def p50(values: list[float]) -> float:
    return round(statistics.median(values), 2) if values else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, type=Path, help="a data directory holding a published snapshot")
    parser.add_argument("--questions", type=Path, default=STRUCTURE_SET)
    parser.add_argument("--bundled", action="store_true", help="time the bundled-corpus questions instead")
    parser.add_argument("--limit", type=int, default=0, help="only the first N questions (0: all)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    from petrichor_core.config import load_settings
    from petrichor_core.models.providers import make_embedder
    from petrichor_serving.agent import loop, tools
    from petrichor_serving.answer.answerer import OfflineAnswerer
    from petrichor_serving.recall.access import Scope
    from petrichor_serving.recall.pipeline import QUERY_VECTORS
    from petrichor_serving.snapshot import SnapshotStore

    answerer = OfflineAnswerer()
    settings = load_settings()
    embedder = make_embedder(settings) if settings.embed_enabled else None
    store = SnapshotStore(args.data, embed_fingerprint=embedder.fingerprint if embedder else None)
    store.refresh()
    snap = store.current
    if snap is None:
        raise SystemExit(f"no snapshot in {args.data}: {store.status()['refused']}")
    rows = (
        [{"qid": f"b{i}", "question": q} for i, q in enumerate(BUNDLED_QUESTIONS, 1)]
        if args.bundled
        else [json.loads(line) for line in args.questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    )
    if args.limit > 0:
        rows = rows[: args.limit]
    tools.search(snap, Scope(), "warm up", embedder=embedder, limit=10)  # loads jieba and the query embedder once
    load_start = round(os.getloadavg()[0], 2)
    agent_ms, search_ms, results = [], [], []
    for row in rows:
        QUERY_VECTORS._items.clear()  # both timings embed the question afresh, as a new question would
        started = time.perf_counter()
        tools.search(snap, Scope(), row["question"], embedder=embedder, limit=10)
        search_ms.append((time.perf_counter() - started) * 1000)
        QUERY_VECTORS._items.clear()
        started = time.perf_counter()
        doc = loop.answer(snap, row["question"], Scope(), chat=answerer, embedder=embedder)
        agent_ms.append((time.perf_counter() - started) * 1000)
        result = {
            "qid": row["qid"],
            "class": doc["trace"]["question_class"],
            "plan": doc["trace"]["plan"],
            "stop_reason": doc["stop_reason"],
            "ms": round(agent_ms[-1], 1),
        }
        if "children" in row:
            result["coverage"] = round(in_order_coverage(doc["answer"], row["children"]), 3)
            result["cites_guide"] = any(c["title"] == row["guide"] for c in doc["citations"])
        results.append(result)
    report = {
        "snapshot": snap.version,
        "questions": len(rows),
        "agent_p50_ms": p50(agent_ms),
        "search_p50_ms": p50(search_ms),
        "ratio": round(p50(agent_ms) / max(p50(search_ms), 1e-9), 2),
        "agent_p50_ms_by_class": {kind: p50([r["ms"] for r in results if r["class"] == kind]) for kind in sorted({r["class"] for r in results})},
        "cpu_count": os.cpu_count(),
        "load_average": [load_start, round(os.getloadavg()[0], 2)],
    }
    scored = [r for r in results if "coverage" in r]
    if scored:
        report["children_in_order_share"] = round(sum(r["coverage"] >= CHILD_COVERAGE for r in scored) / len(scored), 3)
        report["mean_coverage"] = round(statistics.mean(r["coverage"] for r in scored), 3)
        report["cites_guide_share"] = round(sum(r["cites_guide"] for r in scored) / len(scored), 3)
    if args.json:
        print(json.dumps({**report, "results": results}, ensure_ascii=False, indent=2))
    else:
        for r in results:
            print(json.dumps(r, ensure_ascii=False))
        print(json.dumps(report, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
