"""The `questions` step: generated questions per chunk, retrieval aliases that map back to it.

An edited article is rebuilt whole, but its chunks whose text did not change keep their questions: each
chunk's questions are remembered under the key of what its request holds (`question_input`), and only the
chunks without a remembered answer go to the model. A one-paragraph edit asks about one chunk, not the
article's every chunk. Template questions given for a failed call or a reply that left a chunk out are not
remembered, so a later build asks again; `--full` asks about every chunk. Of one article only the chunks
that are embedded get questions (`text.limits.MAX_EMBEDDED`): an outsized file costs at most that many chunks'
model calls and question vectors, never one per chunk of a 5 MB line.
"""

from __future__ import annotations

import json
from typing import Any

from petrichor_core.contract.schemas import SCHEMAS
from petrichor_core.models.protocols import CallContext
from petrichor_core.text.index_text import index_text
from petrichor_core.text.limits import MAX_EMBEDDED, embedded_rows
from petrichor_core.text.normalize import sha256_hex
from petrichor_pipeline.builder.context import BuildContext
from petrichor_pipeline.builder.incremental import ArticleOutput, BucketResult
from petrichor_pipeline.builder.steps.common import ChunkView, chunks_by_article, guides, model_key, run_articles
from petrichor_pipeline.knowledge.questions import generate_questions

MEMO = "question_memo"
"""The warehouse folder of the remembered questions: per bucket, article id -> {input key: questions}.
A cache beside the step's output, not part of it (the bucket's data version leaves it out)."""

Memo = dict[str, dict[str, list[str]]]


def question_input(fingerprint: str, kb_id: str, guide: str, chunk: ChunkView) -> str:
    """The key of one chunk's question request: the model, the knowledge base and its guide (the system
    prompt), and the chunk as the request renders it (heading, heading path, text)."""
    return sha256_hex(json.dumps([fingerprint, kb_id, guide, chunk.heading, list(chunk.heading_path), chunk.content], ensure_ascii=False))[:32]


def _read_memo(ctx: BuildContext, bucket: str) -> Memo:
    doc = ctx.warehouse.read_json(MEMO, bucket)
    articles = doc.get("articles") if isinstance(doc, dict) else None
    return articles if isinstance(articles, dict) else {}


def _remembered(known: Any, key: str) -> tuple[str, ...]:
    """The questions remembered under `key`, or () where the memo holds none (or something else: a memo is
    only a cache, and a damaged one costs model calls, never wrong rows)."""
    value = known.get(key) if isinstance(known, dict) else None
    return tuple(value) if isinstance(value, list) and value and all(isinstance(q, str) for q in value) else ()


def questions_step(ctx: BuildContext, bucket: str) -> BucketResult:
    chunks = chunks_by_article(ctx, bucket)
    model = ctx.chat()
    kb_guides = guides(ctx)
    previous = {} if ctx.full_rebuild else _read_memo(ctx, bucket)
    remembered: Memo = {}

    def build(art: dict[str, Any]) -> ArticleOutput:
        every = chunks.get(art["article_id"], [])
        if not every:
            return ArticleOutput([])
        rows_in = embedded_rows("chunk", every)
        capped = (
            []
            if len(rows_in) == len(every)
            else [
                f"{len(every) - len(rows_in):,} of its {len(every):,} chunks get no generated questions (an article's "
                f"first {MAX_EMBEDDED['chunk']} chunks do): keyword search over their text still finds them"
            ]
        )
        guide = kb_guides.get(art["kb_id"], "")
        items = [ChunkView(r) for r in rows_in]
        inputs = {c.key: question_input(model.fingerprint, art["kb_id"], guide, c) for c in items}
        known = previous.get(art["article_id"])
        questions = {c.key: found for c in items if (found := _remembered(known, inputs[c.key]))}
        todo = [c for c in items if c.key not in questions]
        warnings: tuple[str, ...] = ()
        fallback: frozenset[str] = frozenset()
        if todo:
            call = CallContext(article_id=art["article_id"], kb_id=art["kb_id"], guide=guide)
            res = generate_questions(todo, model, call, concurrency=ctx.settings.limits.question_batch_concurrency)
            questions.update(res.questions)
            warnings, fallback = res.warnings, res.fallback
        remembered[art["article_id"]] = {inputs[c.key]: list(questions[c.key]) for c in items if c.key not in fallback}
        rows = []
        for r in rows_in:
            for i, q in enumerate(questions.get(r["key"], ())):
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
        return ArticleOutput(rows, [*capped, *warnings])

    result = run_articles(ctx, "questions", bucket, SCHEMAS["questions"], lambda a: model_key(ctx, a, model.fingerprint, kb_guides), build)
    if remembered or previous:
        kept = {aid: previous[aid] for aid in result.skipped if aid in previous}
        ctx.warehouse.write_json(MEMO, bucket, {"articles": kept | remembered})
    return result
