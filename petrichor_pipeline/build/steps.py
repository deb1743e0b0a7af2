"""One plain function per bucket-partitioned asset; the Dagster assets only call these.

Each step reads its inputs from the warehouse, reuses unchanged articles' rows and writes its bucket.
"""

from __future__ import annotations

import functools
import hashlib
import time
from typing import Any, Callable

import pyarrow as pa

from petrichor_pipeline.build.context import BuildContext
from petrichor_pipeline.build.incremental import ArticleOutput, BucketResult, per_article_step
from petrichor_pipeline.config import BUILD_VERSION
from petrichor_pipeline.contract import SCHEMAS, chunk_id_of
from petrichor_pipeline.sources.identity import article_id_of, bucket_of
from petrichor_pipeline.text.chunking import ALGORITHM_VERSION, chunk_markdown
from petrichor_pipeline.text.index_text import index_text
from petrichor_pipeline.text.normalize import sha256_hex

SOURCE_SCHEMA = pa.schema([f for f in SCHEMAS["articles"] if f.name not in ("chunk_count", "chat_fingerprint")])
"""The `articles` asset stores the sources; the snapshot adds what the build derived (chunk count, model)."""


def bucket_data_version(articles: list[dict[str, Any]], errors: list[dict[str, str]]) -> str:
    """A bucket's data version: its articles' ids, versions and source hashes and its files' errors, order-free."""
    h = hashlib.sha256()
    for aid, ver, src in sorted((a["article_id"], a["article_version"], a["source_sha256"]) for a in articles):
        h.update(f"{aid}:{ver}:{src}\n".encode())
    for e in sorted((e["path"], e["reason"]) for e in errors):
        h.update(f"!{e[0]}:{e[1]}\n".encode())
    return h.hexdigest()[:16]


def scan_buckets(ctx: BuildContext) -> dict[str, tuple[list[dict[str, Any]], list[dict[str, str]]]]:
    """The corpus split into buckets: (article rows, file errors) per bucket key."""
    from petrichor_pipeline.config import BUCKETS

    scan = ctx.scan()
    out: dict[str, tuple[list[dict[str, Any]], list[dict[str, str]]]] = {b: ([], []) for b in BUCKETS}
    for art in scan.articles:
        row = {
            "article_id": art.article_id,
            "kb_id": art.kb_id,
            "path": art.path,
            "title": art.title,
            "tenant": art.tenant,
            "visibility": art.visibility,
            "share_expires_at": art.share_expires_at,
            "password_protected": art.password_protected,
            "article_version": art.article_version,
            "source_sha256": art.source_sha256,
            "content": art.content,
            "chunk_algorithm_version": ALGORITHM_VERSION,
            "build_version": BUILD_VERSION,
            "bucket": art.bucket,
            "warnings": list(art.warnings),
        }
        out[art.bucket][0].append(row)
    for err in scan.errors:
        out[bucket_of(article_id_of(err.path))][1].append({"path": err.path, "reason": err.reason})
    return out


def articles_step(ctx: BuildContext, bucket: str) -> tuple[BucketResult, str]:
    started = time.perf_counter()
    rows, errors = scan_buckets(ctx)[bucket]
    table = pa.Table.from_pylist(rows, schema=SOURCE_SCHEMA)
    ctx.warehouse.write("articles", table, bucket)
    version = bucket_data_version(rows, errors)
    ctx.warehouse.write_json("articles", bucket, {"data_version": version, "errors": errors})
    result = BucketResult("articles", bucket, table, built=[r["article_id"] for r in rows], failed=errors)
    result.warnings = [f"{r['path']}: {w}" for r in rows for w in r["warnings"]]
    result.seconds = time.perf_counter() - started
    return result, version


def _bucket_articles(ctx: BuildContext, bucket: str) -> list[dict[str, Any]]:
    table = ctx.warehouse.read("articles", bucket, SOURCE_SCHEMA)
    return [] if table is None else table.to_pylist()


def _run_articles(
    ctx: BuildContext,
    asset: str,
    bucket: str,
    schema: pa.Schema,
    build_key: Callable[[dict[str, Any]], str],
    build: Callable[[dict[str, Any]], ArticleOutput],
) -> BucketResult:
    """Run one per-article step over the bucket's current articles with the configured limits."""
    return per_article_step(
        warehouse=ctx.warehouse,
        asset=asset,
        bucket=bucket,
        schema=schema,
        articles=_bucket_articles(ctx, bucket),
        build_key=build_key,
        build=build,
        concurrency=ctx.settings.limits.article_concurrency,
        force=ctx.full_rebuild,
        timeout_s=ctx.settings.limits.article_timeout_s,
    )


def chunks_step(ctx: BuildContext, bucket: str) -> BucketResult:
    def build(art: dict[str, Any]) -> ArticleOutput:
        result = chunk_markdown(art["content"], art["title"])
        rows = []
        for c in result.chunks:
            text = index_text(art["title"], c.heading_path, c.content)
            rows.append(
                {
                    "chunk_id": chunk_id_of(art["article_id"], c.key),
                    "article_id": art["article_id"],
                    "kb_id": art["kb_id"],
                    "tenant": art["tenant"],
                    "key": c.key,
                    "position": c.position,
                    "heading": c.heading,
                    "heading_path": list(c.heading_path),
                    "content": c.content,
                    "start": c.start,
                    "end": c.end,
                    "index_text": text,
                    "content_hash": sha256_hex(text),
                }
            )
        return ArticleOutput(rows, list(result.warnings))

    return _run_articles(ctx, "chunks", bucket, SCHEMAS["chunks"], lambda a: f"{a['article_version']}|{a['source_sha256']}|{ctx.chunk_key}|{a['tenant']}|{a['kb_id']}", build)


def _chunks_by_article(ctx: BuildContext, bucket: str) -> dict[str, list[dict[str, Any]]]:
    from petrichor_pipeline.build.incremental import group_rows

    return group_rows(ctx.warehouse.read("chunks", bucket, SCHEMAS["chunks"]))


def guides(ctx: BuildContext) -> dict[str, str]:
    """Every knowledge base's compile guide cleaned for prompts, from one scan: a step asks once, not per article."""
    return {kb_id: _prepared(kb.guide_raw) if kb.guide_raw else "" for kb_id, kb in ctx.scan().kbs.items()}


@functools.lru_cache(maxsize=64)
def _prepared(raw: str) -> str:
    from petrichor_pipeline.knowledge.guide import prepare_guide

    return prepare_guide(raw)


def model_key(ctx: BuildContext, art: dict[str, Any], fingerprint: str, kb_guides: dict[str, str]) -> str:
    """Build key of model-derived rows: article and chunk versions, the model fingerprint and the guide."""
    guide = sha256_hex(kb_guides.get(art["kb_id"], ""))[:12]
    return f"{art['article_version']}|{ctx.chunk_key}|{fingerprint}|{art['tenant']}|{art['kb_id']}|guide-{guide}"


def questions_step(ctx: BuildContext, bucket: str) -> BucketResult:
    from petrichor_pipeline.knowledge.questions import generate_questions
    from petrichor_pipeline.models.protocols import CallContext

    chunks = _chunks_by_article(ctx, bucket)
    model = ctx.chat()
    kb_guides = guides(ctx)

    def build(art: dict[str, Any]) -> ArticleOutput:
        rows_in = chunks.get(art["article_id"], [])
        if not rows_in:
            return ArticleOutput([])
        items = [_ChunkView(r) for r in rows_in]
        call = CallContext(article_id=art["article_id"], kb_id=art["kb_id"], guide=kb_guides.get(art["kb_id"], ""))
        res = generate_questions(items, model, call, concurrency=ctx.settings.limits.question_batch_concurrency)
        rows = []
        for r in rows_in:
            for i, q in enumerate(res.questions.get(r["key"], ())):
                text = index_text(art["title"], r["heading_path"], q)
                rows.append(
                    {
                        "question_id": f"{r['chunk_id']}:q{i}",
                        "chunk_id": r["chunk_id"],
                        "article_id": art["article_id"],
                        "kb_id": art["kb_id"],
                        "tenant": art["tenant"],
                        "position": i,
                        "question": q,
                        "index_text": text,
                        "content_hash": sha256_hex(text),
                    }
                )
        return ArticleOutput(rows, list(res.warnings))

    return _run_articles(ctx, "questions", bucket, SCHEMAS["questions"], lambda a: model_key(ctx, a, model.fingerprint, kb_guides), build)


class _ChunkView:
    """A chunk row seen through the attributes the knowledge layer expects."""

    __slots__ = ("key", "position", "heading", "heading_path", "content", "start", "end")

    def __init__(self, row: dict[str, Any]):
        self.key = row["key"]
        self.position = row["position"]
        self.heading = row["heading"]
        self.heading_path = tuple(row["heading_path"])
        self.content = row["content"]
        self.start = row["start"]
        self.end = row["end"]




CANDIDATE_SCHEMA = pa.schema([("article_id", pa.string()), ("kb_id", pa.string()), ("tenant", pa.string()), ("knowledge_json", pa.string())])
"""One row per article: its wiki contribution (`ArticleKnowledge.to_dict()`), aggregated by `wiki_pages`."""


def wiki_candidates_step(ctx: BuildContext, bucket: str) -> BucketResult:
    import json

    from petrichor_pipeline.knowledge.wiki import ArticleInput, build_article_knowledge
    from petrichor_pipeline.models.protocols import CallContext

    chunks = _chunks_by_article(ctx, bucket)
    questions = ctx.warehouse.read("questions", bucket, SCHEMAS["questions"])
    by_chunk: dict[str, list[str]] = {}
    for q in [] if questions is None else questions.select(["chunk_id", "question"]).to_pylist():
        by_chunk.setdefault(q["chunk_id"], []).append(q["question"])
    model = ctx.chat()
    kb_guides = guides(ctx)
    scan = ctx.scan()

    def build(art: dict[str, Any]) -> ArticleOutput:
        rows_in = chunks.get(art["article_id"], [])
        kb = scan.kbs.get(art["kb_id"])
        knowledge = build_article_knowledge(
            ArticleInput(
                article_id=art["article_id"],
                kb_id=art["kb_id"],
                tenant=art["tenant"],
                title=art["title"],
                content=art["content"],
                article_version=art["article_version"],
                kb_name=kb.name if kb else art["kb_id"],
            ),
            [_ChunkView(r) for r in rows_in],
            model,
            CallContext(article_id=art["article_id"], kb_id=art["kb_id"], guide=kb_guides.get(art["kb_id"], "")),
            questions={r["key"]: by_chunk.get(r["chunk_id"], []) for r in rows_in},
            concurrency=ctx.settings.limits.page_batch_concurrency,
        )
        row = {"article_id": art["article_id"], "kb_id": art["kb_id"], "tenant": art["tenant"], "knowledge_json": json.dumps(knowledge.to_dict(), ensure_ascii=False)}
        return ArticleOutput([row], list(knowledge.warnings))

    return _run_articles(ctx, "wiki_candidates", bucket, CANDIDATE_SCHEMA, lambda a: model_key(ctx, a, model.fingerprint, kb_guides), build)


def page_index_step(ctx: BuildContext, bucket: str) -> BucketResult:
    from petrichor_pipeline.knowledge.page_index import build_page_index
    from petrichor_pipeline.models.protocols import CallContext

    model = ctx.chat()
    kb_guides = guides(ctx)

    def build(art: dict[str, Any]) -> ArticleOutput:
        res = build_page_index(
            art["content"],
            art["title"],
            model,
            CallContext(article_id=art["article_id"], kb_id=art["kb_id"], guide=kb_guides.get(art["kb_id"], "")),
            article_id=art["article_id"],
            kb_id=art["kb_id"],
            tenant=art["tenant"],
        )
        return ArticleOutput(list(res.rows), list(res.warnings))

    return _run_articles(ctx, "page_index", bucket, SCHEMAS["tree_nodes"], lambda a: model_key(ctx, a, model.fingerprint, kb_guides), build)


def wiki_pages_step(ctx: BuildContext) -> dict[str, int]:
    """Aggregate every article's contribution into the wiki tables (deterministic, so a rerun is identical)."""
    import json

    from petrichor_pipeline.config import BUCKETS
    from petrichor_pipeline.knowledge.aggregate import aggregate_wiki
    from petrichor_pipeline.knowledge.wiki import ArticleKnowledge

    live = {a["article_id"] for b in BUCKETS for a in _bucket_articles(ctx, b)}
    table = ctx.warehouse.read_all_buckets("wiki_candidates", BUCKETS, CANDIDATE_SCHEMA)
    contributions = [
        ArticleKnowledge.from_dict(json.loads(r["knowledge_json"]))
        for r in table.to_pylist()
        if r["article_id"] in live
    ]
    tables = aggregate_wiki(contributions).to_arrow()
    for name, t in tables.items():
        ctx.warehouse.write(name, t)
    return {name: t.num_rows for name, t in tables.items()}
