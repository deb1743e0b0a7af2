"""The local rerank's cost per search, with and without the best-sentence field, on generated pools.

Each pool is `RecallConfig.rerank_top_k` hits of 1,200–3,200 code points (the chunk sizes of the product guides), English
or Chinese, and a question that shares some of their words. The rerank is timed with the sentence points off
and on, with the sentence cache cold (cleared before every pool) and warm (the same pools again): a search
meets cold chunks the first time and warm ones when a question comes back to the same articles. Both
settings run in the same process, alternately, so load on a shared machine hits them alike.

    .venv/bin/python benchmarks/rerank.py [--pools 300] [--seed 7] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time

from petrichor_core.text.tokenize import query_tokens
from petrichor_serving.recall.config import DEFAULT_CONFIG
from petrichor_serving.recall.hits import Hit, knowledge_sentences
from petrichor_serving.recall.rerank import rerank

_EN = (
    "install configure the helm chart operator route secret plugin catalog backstage cluster database "
    "upgrade namespace token policy audit log metrics"
).split()
_ZH = list("春节档首日票房冠军电影上映时间北京冬奥会开幕日期经济增长发布会主演导演举办城市")


def _sentence(rng: random.Random, zh: bool) -> str:
    if zh:
        return "".join(rng.choice(_ZH) for _ in range(rng.randint(12, 40))) + "。"
    return " ".join(rng.choice(_EN) for _ in range(rng.randint(8, 24))).capitalize() + ". "


def _text(rng: random.Random, zh: bool) -> str:
    target, out = rng.randint(1200, 3200), []
    while sum(map(len, out)) < target:
        out.append(_sentence(rng, zh))
        if rng.random() < 0.2:
            out.append("\n")
    return "".join(out)[:target]


def _pools(n: int, seed: int) -> list[tuple[str, list[Hit]]]:
    rng = random.Random(seed)
    pools = []
    for p in range(n):
        zh = p % 2 == 1
        hits = [
            Hit(
                kb_id="kb",
                article_id=f"a{p}-{i}",
                title="",
                path="",
                heading_path=(),
                snippet="",
                content=_text(rng, zh),
                score=1.0 / (61 + i),
                routes=["chunk_bm25"],
                chunk_id=f"c{p}-{i}",
            )
            for i in range(DEFAULT_CONFIG.rerank_top_k)
        ]
        words = rng.sample(_ZH, 8) if zh else rng.sample(_EN, 6)
        pools.append(("".join(words) if zh else " ".join(words), hits))
    return pools


def _time(pools: list[tuple[str, list[Hit]]], weight: float, cold: bool) -> list[float]:
    out = []
    for question, hits in pools:
        if cold:
            knowledge_sentences.cache_clear()
        started = time.perf_counter()
        rerank(question, hits, query_tokens, sentence_weight=weight)
        out.append((time.perf_counter() - started) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pools", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    pools = _pools(args.pools, args.seed)
    samples: dict[str, list[float]] = {"off": [], "cold": [], "warm": []}
    for round_ in range(3):  # alternate the order each round
        order = ["off", "cold", "warm"] if round_ % 2 == 0 else ["warm", "cold", "off"]
        for name in order:
            if name == "warm":
                _time(pools, DEFAULT_CONFIG.rerank_sentence, cold=False)  # fill the cache first
            samples[name] += _time(pools, 0.0 if name == "off" else DEFAULT_CONFIG.rerank_sentence, cold=name == "cold")
    report = {
        name: {"p50_ms": round(statistics.median(v), 3), "p95_ms": round(sorted(v)[int(0.95 * (len(v) - 1))], 3)} for name, v in samples.items()
    }
    base = report["off"]["p50_ms"]
    for name in ("cold", "warm"):
        report[name]["p50_vs_off"] = round(report[name]["p50_ms"] / base, 2) if base else None
    report["cpu_count"] = os.cpu_count()
    report["load_average"] = [round(x, 2) for x in os.getloadavg()]
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(
        f"rerank of {DEFAULT_CONFIG.rerank_top_k} hits of 1,200–3,200 code points, {args.pools} pools × 3 rounds, "
        f"{report['cpu_count']} cores, load {report['load_average']}"
    )
    print("| sentence points | p50 ms | p95 ms | p50 against off |")
    print("|---|---:|---:|---:|")
    print(f"| off | {report['off']['p50_ms']} | {report['off']['p95_ms']} | 1.00 |")
    for name in ("cold", "warm"):
        r = report[name]
        print(f"| {DEFAULT_CONFIG.rerank_sentence}, {name} cache | {r['p50_ms']} | {r['p95_ms']} | {r['p50_vs_off']} |")


if __name__ == "__main__":
    main()
