from petrichor_core.models.protocols import CallContext
from petrichor_pipeline.knowledge.candidates import Candidate, Relation
from petrichor_pipeline.knowledge.pages import fallback_page, generate_pages, normalize_generated_page_content

from .doubles import ScriptedChatModel, fails, returns

CTX = CallContext()
REDIS = Candidate("entity", "Redis", "entity-redis", summary="内存数据库")
SENTINEL = Candidate("entity", "Sentinel", "entity-sentinel", summary="")
FAILOVER = Candidate("concept", "故障转移", "concept-故障转移", summary="主从切换")
RELS = [Relation("entity-sentinel", "concept-故障转移", "执行", "监控并切换"), Relation("entity-redis", "entity-sentinel", "依赖")]


def test_normalize_strips_summary_line_process_notes_and_chunk_ids():
    raw = "SUMMARY: 一句话\n# Redis\n\n依据切片 chunk-001 整理\n见 `chunk-002` 与 chunk-13。\n\n\n\n结尾"
    assert normalize_generated_page_content(raw, "Redis", "s") == "# Redis\n\n见  与 。\n\n结尾"


def test_normalize_prepends_a_title_when_missing():
    assert normalize_generated_page_content("## 小节\n正文", "Redis", "") == "# Redis\n\n## 小节\n正文"
    assert normalize_generated_page_content("#hashtag 正文", "Redis", "") == "# Redis\n\n#hashtag 正文"


def test_normalize_empty_content():
    assert normalize_generated_page_content("  \n依据切片 chunk-1\n", "Redis", "内存数据库") == "# Redis\n\n内存数据库"
    assert normalize_generated_page_content("", "Redis", "") == "# Redis\n\n暂无详细说明。"


def test_fallback_page_lists_relations_in_both_directions():
    names = {c.page_key: c.name for c in (REDIS, SENTINEL, FAILOVER)}
    assert fallback_page(SENTINEL, RELS, names) == (
        "# Sentinel\n\n暂无足够的原文信息生成详细页面。\n\n## 相关知识\n\n- [[concept-故障转移|故障转移]]：监控并切换\n- [[entity-redis|Redis]]：依赖"
    )
    assert fallback_page(FAILOVER, [], names) == "# 故障转移\n\n主从切换"


def test_generated_pages_keep_links_only_to_known_other_pages():
    body = "# Redis\n\n与 [[entity/Sentinel|哨兵]] 配合，见 [[entity-redis|自己]]、[[entity-memcached|Memcached]] 和 [[concept-故障转移]]。"
    reply = {"pages": [{"pageKey": "entity-redis", "summary": " 高速缓存 ", "contentMd": body}]}
    model = ScriptedChatModel(generate_pages=returns(reply))
    res = generate_pages(title="T", document="D", candidates=[REDIS, SENTINEL], relations=RELS, model=model, ctx=CTX)
    page = res.pages["entity-redis"]
    assert page.generated and page.summary == "高速缓存"
    assert page.content_md == "# Redis\n\n与 [[entity-sentinel|哨兵]] 配合，见 自己、Memcached 和 concept-故障转移。"
    assert not res.pages["entity-sentinel"].generated
    assert res.warnings == ("1 wiki page(s) not generated, candidate summary pages used",)


def test_batches_of_four_and_request_shape():
    candidates = [Candidate("entity", f"N{i}", f"entity-n{i}", summary=f"s{i}") for i in range(9)]

    def echo(req, _ctx):
        return {"pages": [{"pageKey": r["pageKey"], "summary": "", "contentMd": f"# {r['name']}\n\n正文"} for r in req.requested]}

    model = ScriptedChatModel(generate_pages=echo)
    res = generate_pages(title="T", document="D", candidates=candidates, relations=[], model=model, ctx=CTX, concurrency=2)
    assert res.model_calls == 3 and res.warnings == ()
    assert [len(req.requested) for _, req in sorted(model.calls, key=lambda c: c[1].requested[0]["pageKey"])] == [4, 4, 1]
    req = model.calls[0][1]
    assert len(req.valid_pages) == 9 and req.document == "D" and req.title == "T"
    assert set(req.valid_pages[0]) == {"pageKey", "kind", "name", "aliases", "summary"}
    assert list(res.pages) == [c.page_key for c in candidates]
    assert res.pages["entity-n3"].summary == "s3"  # empty reply summary falls back to the candidate's


def test_failed_batch_falls_back_to_summary_pages():
    model = ScriptedChatModel(generate_pages=fails("pages", "timeout"))
    res = generate_pages(title="T", document="D", candidates=[REDIS, FAILOVER], relations=[], model=model, ctx=CTX)
    assert res.pages["entity-redis"].content_md == "# Redis\n\n内存数据库"
    assert res.pages["concept-故障转移"].summary == "主从切换"
    assert res.warnings == ("wiki page generation failed, candidate summary pages used: timeout",)
