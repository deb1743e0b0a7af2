from petrichor_core.models.protocols import CallContext
from petrichor_pipeline.knowledge.candidates import (
    Candidate,
    ExistingPage,
    Relation,
    document_summary,
    existing_pages_catalog,
    extract_candidates,
    limit_candidates,
    normalize_candidates,
    normalize_relations,
)

from .doubles import ScriptedChatModel, fails, returns

CTX = CallContext(article_id="a1", kb_id="kb")


def test_normalize_candidates_skips_unnamed_dedupes_keys_and_cleans_aliases():
    items = [
        {
            "name": " OpenAI API ",
            "pageKey": "entity/OpenAI API",
            "aliases": ["OpenAI API", " openai ", "openai", ""] + [f"a{i}" for i in range(20)],
            "summary": "s" * 600,
        },
        {"name": "", "pageKey": "entity-empty"},
        {"name": "OpenAI Api", "pageKey": "entity-openai-api"},
        "not a mapping",
        {"name": "Redis"},
    ]
    out = normalize_candidates(items, "entity")
    assert [c.page_key for c in out] == ["entity-openai-api", "entity-redis"]
    first = out[0]
    assert first.name == "OpenAI API" and first.kind == "entity"
    assert first.aliases == ("openai", "a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "a10")
    assert len(first.summary) == 500
    assert out[1] == Candidate("entity", "Redis", "entity-redis")
    assert normalize_candidates(None, "entity") == []


def cands(kind: str, *names: str) -> list[Candidate]:
    return [Candidate(kind, n, f"{kind}-{n.lower()}") for n in names]


def test_limit_interleaves_entities_and_concepts():
    entities = cands("entity", "E0", "E1", "E2", "E3")
    concepts = cands("concept", "C0")
    assert [c.name for c in limit_candidates(entities, concepts)] == ["E0", "C0", "E1", "E2", "E3"]


def test_limit_caps_at_24_and_keeps_both_classes():
    entities = cands("entity", *[f"E{i}" for i in range(30)])
    concepts = cands("concept", *[f"C{i}" for i in range(30)])
    out = limit_candidates(entities, concepts)
    assert len(out) == 24
    assert [c.name for c in out[:4]] == ["E0", "C0", "E1", "C1"]
    assert sum(c.kind == "concept" for c in out) == 12


def test_limit_dedupes_by_name_identity_across_classes():
    entities = [Candidate("entity", "Retrieval-Augmented Generation", "entity-rag")]
    concepts = [Candidate("concept", "retrieval augmented  generation!", "concept-rag"), Candidate("concept", "向量", "concept-向量")]
    assert [c.page_key for c in limit_candidates(entities, concepts)] == ["entity-rag", "concept-向量"]


def test_relations_between_distinct_candidates_only():
    candidates = cands("entity", "Redis", "Sentinel") + [Candidate("concept", "故障转移", "concept-故障转移")]
    raw = [
        {"fromPageKey": "entity/Redis", "toPageKey": "concept:故障转移", "relationType": " 支持 ", "description": " 哨兵完成切换 "},
        {"fromPageKey": "entity-redis", "toPageKey": "concept-故障转移", "relationType": "支持", "description": "重复"},
        {"fromPageKey": "entity-redis", "toPageKey": "concept-故障转移", "relationType": "", "description": ""},
        {"fromPageKey": "entity-sentinel", "toPageKey": "entity-sentinel", "relationType": "自身"},
        {"fromPageKey": "entity-redis", "toPageKey": "entity-unknown"},
        {"fromPageKey": "", "toPageKey": "entity-redis"},
        {"fromPageKey": "entity-sentinel", "toPageKey": "entity-redis", "relationType": "类" * 80, "description": "描" * 400},
    ]
    out = normalize_relations(raw, candidates)
    assert out[:2] == [
        Relation("entity-redis", "concept-故障转移", "支持", "哨兵完成切换"),
        Relation("entity-redis", "concept-故障转移", "关联", ""),
    ]
    assert len(out) == 3
    assert out[2].relation_type == "类" * 60 and out[2].description == "描" * 300


def test_relations_capped_at_160():
    candidates = cands("entity", *[f"N{i}" for i in range(20)])
    raw = [{"fromPageKey": a.page_key, "toPageKey": b.page_key, "relationType": "r"} for a in candidates for b in candidates]
    assert len(normalize_relations(raw, candidates)) == 160


def test_document_summary_is_cut_or_falls_back_to_local():
    assert document_summary(" 摘" * 1, "正文") == "摘"
    assert len(document_summary("摘" * 900, "正文")) == 800
    assert document_summary("  ", "# 标题\n\n正文") == "标题 正文"
    assert document_summary(None, "正文") == "正文"


def test_existing_pages_catalog_lines_and_empty_marker():
    assert existing_pages_catalog([]) == "（暂无既有页面）"
    pages = [
        ExistingPage("entity-redis", "entity", "Redis", ("redis-server",), "内存数据库" * 40, ("数据库", "缓存")),
        ExistingPage("concept-rag", "concept", "RAG"),
    ]
    lines = existing_pages_catalog(pages).split("\n")
    assert lines[0] == "- concept-rag | concept | RAG"
    assert lines[1] == "- entity-redis | entity | Redis | 别名：redis-server | 摘要：" + ("内存数据库" * 40)[:180] + " | 目录：数据库 / 缓存"
    many = [ExistingPage(f"entity-{i:04d}", "entity", str(i)) for i in range(400)]
    assert len(existing_pages_catalog(many).split("\n")) == 300


def test_extraction_normalises_the_reply():
    reply = {
        "documentSummary": "讲 Redis 高可用。",
        "entities": [{"name": "Redis", "pageKey": "entity/Redis"}, {"name": "Sentinel"}],
        "concepts": [{"name": "故障转移", "pageKey": "concept/故障转移", "summary": "主节点切换"}],
        "relations": [{"fromPageKey": "entity-sentinel", "toPageKey": "concept-故障转移", "relationType": "执行"}],
    }
    model = ScriptedChatModel(extract_candidates=returns(reply))
    ex = extract_candidates(kb_name="运维", title="Redis", markdown="正文", document="正文", existing_pages=[], model=model, ctx=CTX)
    assert [c.page_key for c in ex.candidates] == ["entity-redis", "concept-故障转移", "entity-sentinel"]
    assert ex.relations == (Relation("entity-sentinel", "concept-故障转移", "执行", ""),)
    assert (ex.summary, ex.warnings, ex.model_calls) == ("讲 Redis 高可用。", (), 1)
    request = model.calls[0][1]
    assert (request.kb_name, request.title, request.document, request.existing_pages) == ("运维", "Redis", "正文", "（暂无既有页面）")


def test_extraction_failure_leaves_no_candidates_and_a_warning():
    model = ScriptedChatModel(extract_candidates=fails("extract", "HTTP 500"))
    ex = extract_candidates(kb_name="kb", title="t", markdown="# 标题\n正文", document="", existing_pages=[], model=model, ctx=CTX)
    assert ex.candidates == () and ex.relations == ()
    assert ex.warnings == ("wiki candidate extraction failed: HTTP 500",)
    assert ex.summary == "标题 正文"


def test_non_mapping_reply_is_not_valid_json():
    model = ScriptedChatModel(extract_candidates=returns(["not", "an", "object"]))
    ex = extract_candidates(kb_name="kb", title="t", markdown="正文", document="", existing_pages=[], model=model, ctx=CTX)
    assert ex.warnings == ("wiki candidate extraction reply is not valid JSON",) and ex.candidates == ()
