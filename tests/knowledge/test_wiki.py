import json

from petrichor_core.models.protocols import CallContext
from petrichor_pipeline.knowledge.candidates import ExistingPage
from petrichor_pipeline.knowledge.wiki import (
    ArticleInput,
    ArticleKnowledge,
    LinkContribution,
    SourceRef,
    build_article_knowledge,
)

from .doubles import ScriptedChatModel, chunk, fails, returns

CTX = CallContext(article_id="a1", kb_id="ops")
ARTICLE = ArticleInput("a1", "ops", "default", "Redis 高可用", "# 哨兵\n\nSentinel 监控 Redis。\n\n# 切换\n\n故障转移步骤。", "v1")
CHUNKS = [
    chunk(1, "# 哨兵\n\nSentinel 监控 Redis。", "哨兵"),
    chunk(2, "# 切换\n\n故障转移步骤。", "切换"),
]
EXTRACTION = {
    "documentSummary": "Redis 哨兵与故障转移。",
    "entities": [
        {"name": "Redis", "pageKey": "entity/Redis", "summary": "内存数据库"},
        {"name": "Sentinel", "aliases": ["哨兵"], "summary": "监控组件"},
    ],
    "concepts": [{"name": "故障转移", "summary": "主从切换"}],
    "relations": [{"fromPageKey": "entity-sentinel", "toPageKey": "concept-故障转移", "relationType": "执行", "description": "自动切换"}],
}


def page_writer(req, _ctx):
    pages = []
    for r in req.requested:
        body = f"# {r['name']}\n\n{r['summary']}。"
        if r["pageKey"] == "entity-redis":
            body += " 由 [[entity-sentinel|Sentinel]] 监控，另见 [[entity-nowhere|别处]]。"
        pages.append({"pageKey": r["pageKey"], "summary": r["summary"], "contentMd": body})
    return {"pages": pages}


def model_for_article() -> ScriptedChatModel:
    return ScriptedChatModel(
        extract_candidates=returns(EXTRACTION),
        plan_catalog=returns({"assignments": [{"pageKey": "concept-故障转移", "path": ["高可用"]}]}),
        generate_pages=page_writer,
    )


def test_article_knowledge_from_a_full_run():
    model = model_for_article()
    existing = [ExistingPage("entity-redis", "entity", "Redis", category_path=("数据库",))]
    questions = {"chunk-001": ("Q1", "Q2", "Q3"), "chunk-002": ("Q4", "Q5", "Q6")}
    ak = build_article_knowledge(ARTICLE, CHUNKS, model, CTX, questions=questions, existing_pages=existing)

    assert model.ops() == ["extract_candidates", "plan_catalog", "generate_pages"]
    assert ak.model_calls == 3 and ak.warnings == ()
    assert [p.page_key for p in ak.pages] == ["entity-redis", "concept-故障转移", "entity-sentinel"]
    redis, failover, sentinel = ak.pages
    assert redis.category_path == ("数据库",) and failover.category_path == ("高可用",) and sentinel.category_path == ()
    assert redis.content_md == "# Redis\n\n内存数据库。 由 [[entity-sentinel|Sentinel]] 监控，另见 别处。"
    assert sentinel.aliases == ("哨兵",)

    assert ak.links == (
        LinkContribution("source-a1", "entity-redis", "extracts"),
        LinkContribution("source-a1", "concept-故障转移", "extracts"),
        LinkContribution("source-a1", "entity-sentinel", "extracts"),
        LinkContribution("entity-sentinel", "concept-故障转移", "执行", "自动切换"),
        LinkContribution("entity-redis", "entity-sentinel", "related"),
    )
    note = "构建知识：Redis 高可用"
    assert ak.sources == (
        SourceRef("source-a1", "", note),
        SourceRef("entity-redis", "chunk-001", note),
        SourceRef("concept-故障转移", "chunk-002", note),
        SourceRef("entity-sentinel", "chunk-001", note),
    )
    assert ak.source_page.kind == "source" and ak.source_page.summary == "Redis 哨兵与故障转移。"
    assert ak.source_page.content_md == (
        "# Redis 高可用\n\n## 文档摘要\n\nRedis 哨兵与故障转移。\n\n"
        "## 实体\n\n- [[entity-redis|Redis]]：内存数据库\n- [[entity-sentinel|Sentinel]]：监控组件\n\n"
        "## 概念\n\n- [[concept-故障转移|故障转移]]：主从切换\n\n"
        "## 知识关系\n\n- [[entity-sentinel|Sentinel]] --执行--> [[concept-故障转移|故障转移]]：自动切换\n\n"
        "## 切片推荐问题\n\n### 哨兵\n\n- Q1\n- Q2\n- Q3\n\n### 切换\n\n- Q4\n- Q5\n- Q6\n\n"
        "## 来源\n\n- 文章：Redis 高可用（a1）\n- 版本：v1"
    )
    request = model.calls[0][1]
    assert request.document == ARTICLE.content and "entity-redis | entity | Redis" in request.existing_pages


def test_failed_extraction_still_gives_the_source_page():
    model = ScriptedChatModel(extract_candidates=fails("extract", "HTTP 502"))
    ak = build_article_knowledge(ARTICLE, CHUNKS, model, CTX)
    assert model.ops() == ["extract_candidates"]
    assert ak.pages == () and ak.warnings == ("wiki candidate extraction failed: HTTP 502",)
    assert ak.links == () and ak.sources == (SourceRef("source-a1", "", "构建知识：Redis 高可用"),)
    assert ak.source_page.content_md.startswith("# Redis 高可用\n\n## 文档摘要\n\n哨兵 Sentinel 监控 Redis。")
    assert "## 实体" not in ak.source_page.content_md and "## 切片推荐问题" not in ak.source_page.content_md


def test_failed_pages_fall_back_and_warnings_accumulate():
    model = ScriptedChatModel(
        extract_candidates=returns(EXTRACTION),
        plan_catalog=fails("catalog", "quota"),
        generate_pages=fails("pages", "timeout"),
    )
    ak = build_article_knowledge(ARTICLE, CHUNKS, model, CTX)
    assert ak.warnings == ("wiki folder planning failed: quota", "wiki page generation failed, candidate summary pages used: timeout")
    sentinel = next(p for p in ak.pages if p.page_key == "entity-sentinel")
    assert sentinel.content_md == "# Sentinel\n\n监控组件\n\n## 相关知识\n\n- [[concept-故障转移|故障转移]]：自动切换"
    assert ak.model_calls == 3


def test_json_round_trip():
    ak = build_article_knowledge(ARTICLE, CHUNKS, model_for_article(), CTX, questions={"chunk-001": ("Q",)})
    data = json.loads(json.dumps(ak.to_dict(), ensure_ascii=False))
    assert data == ak.to_dict()
    assert ArticleKnowledge.from_dict(data) == ak
