"""Throughput of loading (read + decode + normalise) and chunking Markdown articles.

Generates a deterministic corpus of mixed Chinese/English articles (median about 6 KB, about 1 % near
200 KB) in a temporary folder, then measures one process and one process per core. The goal is at least
50 MB/s per core for loading plus chunking.

    .venv/bin/python benchmarks/chunking.py [--articles 10000] [--seed 7] [--processes N]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from dataclasses import dataclass
from multiprocessing import Pool
from pathlib import Path

from petrichor_core.text.chunking import chunk_markdown
from petrichor_core.text.normalize import normalize_text

ZH_WORDS = (
    "知识 检索 切片 向量 部署 缓存 数据库 模型 问题 回答 索引 文档 章节 标题 服务 配置 集群 节点 日志 监控 "
    "权限 用户 租户 快照 版本 构建 增量 分区 查询 召回 重排 引用 证据 摘要 目录 结构 概念 实体 关系 流程"
).split()
EN_WORDS = (
    "the index stores chunks with their heading path so that answers can cite the exact section of a "
    "document while the service keeps serving the previous snapshot until the next build is published"
).split()
CODE_LINES = (
    "# install the service",
    "pip install petrichor",
    "petrichor build --json",
    "export PETRICHOR_DATA=./data",
    "def handler(request):",
    "    return JSONResponse({'ok': True})",
    "",
)


@dataclass(frozen=True)
class Figures:
    articles: int
    megabytes: float
    load_seconds: float
    chunk_seconds: float
    wall_seconds: float
    chunks: int


class CorpusWriter:
    """Deterministic article generator; sentences are drawn from pre-built pools to keep generation fast."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.zh = [self._zh_sentence() for _ in range(3000)]
        self.en = [self._en_sentence() for _ in range(3000)]

    def _zh_sentence(self) -> str:
        words = self.rng.choices(ZH_WORDS, k=self.rng.randint(6, 24))
        return "".join(words) + self.rng.choice("。。。！？；，")

    def _en_sentence(self) -> str:
        words = self.rng.choices(EN_WORDS, k=self.rng.randint(6, 20))
        return " ".join(words).capitalize() + self.rng.choice("..!?;") + " "

    def _paragraph(self) -> str:
        pool = self.zh if self.rng.random() < 0.6 else self.en
        return "".join(self.rng.choices(pool, k=self.rng.randint(2, 9)))

    def _block(self) -> str:
        kind = self.rng.random()
        if kind < 0.62:
            return self._paragraph()
        if kind < 0.74:
            lines = self.rng.choices(CODE_LINES, k=self.rng.randint(3, 30))
            return "```bash\n" + "\n".join(lines) + "\n```"
        if kind < 0.86:
            rows = [
                f"| {self.rng.choice(ZH_WORDS)} | {self.rng.choice(EN_WORDS)} | {self.rng.randint(1, 999)} |" for _ in range(self.rng.randint(2, 12))
            ]
            return "| 名称 | name | value |\n|---|---|---|\n" + "\n".join(rows)
        items = self.rng.choices(self.zh + self.en, k=self.rng.randint(2, 8))
        return "\n".join("- " + item for item in items)

    def article(self) -> str:
        target = 200_000 if self.rng.random() < 0.01 else int(self.rng.lognormvariate(8.7, 0.55))
        parts = [self._paragraph()]
        size = len(parts[0].encode())
        while size < target:
            if self.rng.random() < 0.3:
                part = "#" * self.rng.choice((1, 2, 2, 3, 3, 4)) + " " + self.rng.choice(self.zh + self.en)[:24].strip()
            else:
                part = self._block()
            parts.append(part)
            size += len(part.encode()) + 2
        return "\n\n".join(parts) + "\n"


def write_corpus(folder: Path, count: int, seed: int) -> list[Path]:
    writer = CorpusWriter(seed)
    paths = []
    for i in range(count):
        path = folder / f"article-{i:05d}.md"
        path.write_text(writer.article(), encoding="utf-8")
        paths.append(path)
    return paths


def process(paths: list[Path]) -> tuple[int, float, float, int]:
    """Load and chunk `paths`; returns (bytes, load seconds, chunk seconds, chunks)."""
    size = chunks = 0
    load = chunk = 0.0
    for path in paths:
        started = time.perf_counter()
        data = path.read_bytes()
        text = normalize_text(data.decode("utf-8"))
        loaded = time.perf_counter()
        chunks += len(chunk_markdown(text, path.stem).chunks)
        load += loaded - started
        chunk += time.perf_counter() - loaded
        size += len(data)
    return size, load, chunk, chunks


def measure(paths: list[Path], processes: int) -> Figures:
    batches = [paths[i : i + 50] for i in range(0, len(paths), 50)]
    if processes == 1:
        started = time.perf_counter()
        results = [process(batch) for batch in batches]
        wall = time.perf_counter() - started
    else:
        with Pool(processes) as pool:
            pool.map(abs, range(processes))  # start the workers before timing
            started = time.perf_counter()
            results = pool.map(process, batches, chunksize=1)
            wall = time.perf_counter() - started
    return Figures(
        articles=len(paths),
        megabytes=sum(r[0] for r in results) / 1e6,
        load_seconds=sum(r[1] for r in results),
        chunk_seconds=sum(r[2] for r in results),
        wall_seconds=wall,
        chunks=sum(r[3] for r in results),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()

    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="petrichor-chunking-") as folder:
        started = time.perf_counter()
        paths = write_corpus(Path(folder), args.articles, args.seed)
        sizes = sorted(p.stat().st_size for p in paths)
        print(
            f"corpus: {len(paths)} articles, {sum(sizes) / 1e6:.1f} MB, "
            f"median {statistics.median(sizes) / 1e3:.1f} KB, max {sizes[-1] / 1e3:.0f} KB "
            f"(generated in {time.perf_counter() - started:.1f} s); os.cpu_count() = {cores}"
        )
        process(paths[:20])  # warm the caches and regex compilation
        rows = [("1 process", measure(paths, 1))]
        if args.processes > 1:
            rows.append((f"{args.processes} processes", measure(paths, args.processes)))

    header = f"{'mode':<13} {'MB':>7} {'wall s':>7} {'MB/s':>7} {'articles/s':>10} {'MB/s/proc':>9} {'load MB/s':>9} {'chunk MB/s':>10} {'chunks':>7}"
    print(header)
    print("-" * len(header))
    for name, f in rows:
        processes = 1 if name.startswith("1 ") else args.processes
        print(
            f"{name:<13} {f.megabytes:>7.1f} {f.wall_seconds:>7.2f} {f.megabytes / f.wall_seconds:>7.1f} "
            f"{f.articles / f.wall_seconds:>10.0f} {f.megabytes / f.wall_seconds / processes:>9.1f} "
            f"{f.megabytes / f.load_seconds:>9.1f} {f.megabytes / f.chunk_seconds:>10.1f} {f.chunks:>7}"
        )
    print("load/chunk MB/s: CPU time of each stage summed over processes (per-process throughput of that stage)")


if __name__ == "__main__":
    main()
