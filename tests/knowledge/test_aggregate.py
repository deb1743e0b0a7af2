import pytest
from hypothesis import given
from hypothesis import strategies as st

from petrichor_core.contract.schemas import SCHEMAS, conform
from petrichor_pipeline.knowledge.aggregate import aggregate_wiki, render_aggregated_page
from petrichor_pipeline.knowledge.wiki import ArticleKnowledge, LinkContribution, PageContribution, SourceRef


def source(aid: str, title: str, body: str) -> PageContribution:
    return PageContribution(f"source-{aid}", "source", title, f"{title} 摘要", body)


def article(aid: str, pages: list[PageContribution], links=(), sources=(), kb="ops", tenant="default") -> ArticleKnowledge:
    title = f"文章{aid}"
    src = source(aid, title, f"# {title}\n\n## 实体\n\n" + "\n".join(f"- [[{p.page_key}|{p.title}]]" for p in pages))
    return ArticleKnowledge(
        article_id=aid,
        kb_id=kb,
        tenant=tenant,
        title=title,
        article_version=f"ver-{aid}",
        summary=f"{title} 摘要",
        source_page=src,
        pages=tuple(pages),
        links=tuple(LinkContribution(src.page_key, p.page_key, "extracts") for p in pages) + tuple(links),
        sources=(SourceRef(src.page_key, "", "n"), *sources),
        warnings=(),
        model_calls=1,
    )


REDIS_A = PageContribution("entity-redis", "entity", "Redis", "", "# Redis\n\n内存数据库。\n\n支持主从复制。", ("redis-server",), ())
REDIS_B = PageContribution(
    "entity-redis", "entity", "redis", "键值存储", "# Redis\n\n支持主从复制。\n\n用作缓存，见 [[concept-缓存|缓存]]。", ("Redis 数据库",), ("数据库",)
)
CACHE_B = PageContribution("concept-缓存", "concept", "缓存", "加速读取", "# 缓存\n\n加速读取。", (), ("性能",))
A = article("a1", [REDIS_A], sources=[SourceRef("entity-redis", "chunk-002", "n")])
B = article(
    "b2",
    [REDIS_B, CACHE_B],
    links=[LinkContribution("entity-redis", "concept-缓存", "用于", "缓存层"), LinkContribution("entity-redis", "entity-gone", "related")],
    sources=[SourceRef("entity-redis", "chunk-001", "n"), SourceRef("concept-缓存", "", "n")],
)


def by_key(rows):
    return {r["page_key"]: r for r in rows}


def test_two_articles_share_one_entity_page():
    tables = aggregate_wiki([B, A])
    pages = by_key(tables.pages)
    assert list(pages) == ["concept-缓存", "entity-redis", "source-a1", "source-b2"]
    redis = pages["entity-redis"]
    assert redis["article_ids"] == ["a1", "b2"]
    assert redis["title"] == "Redis" and redis["kind"] == "entity"
    assert redis["aliases"] == ["redis-server", "redis", "Redis 数据库"]
    assert redis["summary"] == "键值存储"  # the first non-empty
    assert redis["category_path"] == ["数据库"]
    assert redis["content_md"] == "# Redis\n\n内存数据库。\n\n支持主从复制。\n\n用作缓存，见 [[concept-缓存|缓存]]。"
    assert pages["source-a1"]["article_ids"] == ["a1"] and pages["source-a1"]["kind"] == "source"
    links = {(r["from_page_key"], r["to_page_key"], r["link_type"]): r["description"] for r in tables.links}
    assert links == {
        ("source-a1", "entity-redis", "extracts"): "",
        ("source-b2", "entity-redis", "extracts"): "",
        ("source-b2", "concept-缓存", "extracts"): "",
        ("entity-redis", "concept-缓存", "用于"): "缓存层",
    }
    sources = {(r["page_key"], r["article_id"], r["chunk_id"]) for r in tables.sources}
    assert ("entity-redis", "a1", "a1:chunk-002") in sources and ("entity-redis", "b2", "b2:chunk-001") in sources
    assert ("source-a1", "a1", None) in sources
    assert all(r["article_version"] == f"ver-{r['article_id']}" for r in tables.sources)


def test_removing_an_article_removes_what_only_it_supported():
    pages = by_key(aggregate_wiki([A]).pages)
    assert list(pages) == ["entity-redis", "source-a1"]
    assert pages["entity-redis"]["article_ids"] == ["a1"]
    assert pages["entity-redis"]["content_md"] == REDIS_A.content_md

    tables = aggregate_wiki([B])
    pages = by_key(tables.pages)
    assert set(pages) == {"concept-缓存", "entity-redis", "source-b2"}
    assert all(r["article_id"] == "b2" for r in tables.sources)
    assert all("a1" not in (r["from_page_key"], r["to_page_key"]) for r in tables.links)


def test_links_in_bodies_to_vanished_pages_become_text():
    lonely_b = article("b2", [REDIS_B])  # the cache concept page no longer exists
    redis = by_key(aggregate_wiki([lonely_b]).pages)["entity-redis"]
    assert redis["content_md"].endswith("用作缓存，见 缓存。")


def test_aggregation_is_deterministic_and_matches_the_contract():
    first, second = aggregate_wiki([A, B]), aggregate_wiki([B, A])
    assert first == second
    for name, table in first.to_arrow().items():
        assert table.schema == SCHEMAS[name]
        assert conform(name, table).num_rows == table.num_rows


def test_scopes_are_separate_per_kb_and_tenant():
    other = article("c3", [REDIS_A], tenant="acme")
    pages = aggregate_wiki([A, other]).pages
    redis_rows = [(r["tenant"], r["article_ids"]) for r in pages if r["page_key"] == "entity-redis"]
    assert redis_rows == [("acme", ["c3"]), ("default", ["a1"])]


def test_duplicate_article_contributions_are_rejected():
    with pytest.raises(ValueError):
        aggregate_wiki([A, A])


def test_render_aggregated_page():
    assert render_aggregated_page("T", ["正文"]) == "# T\n\n正文"
    assert render_aggregated_page("T", ["# T\n\n正文"]) == "# T\n\n正文"
    assert render_aggregated_page("T", ["# T\n\nA 段\n\n\nB  段", "# t\n\na 段\n\nC 段", ""]) == "# T\n\nA 段\n\nB  段\n\nC 段"
    assert render_aggregated_page("T", []) == "# T"


def _merged_without_shortcuts(title: str, bodies: list[str]) -> list[str]:
    """The merged form read literally: every block of every body in order, titles and blank ones dropped, the
    first of each lowercased, whitespace-collapsed form kept."""
    import re

    from petrichor_core.text.markdown import is_title_line

    kept, seen = [f"# {title}"], set()
    for body in (b.strip() for b in bodies if b.strip()):
        for block in (b.strip() for b in re.split(r"\n{2,}", body)):
            if block and not ("\n" not in block and is_title_line(block)) and " ".join(block.lower().split()) not in seen:
                seen.add(" ".join(block.lower().split()))
                kept.append(block)
    return kept


BLOCKS = ["A 段", "a  段", "# T", "## Sub", "line one\nline two", "Line One\nline  two", "B", " ", "#notitle", "C\n\n"]


@given(st.lists(st.lists(st.sampled_from(BLOCKS), max_size=6).map("\n\n".join), min_size=2, max_size=8))
def test_repeated_blocks_merge_as_each_block_read_in_turn(bodies):
    """A hub page repeats half its blocks exactly; deciding a repeat as its first changes nothing."""
    if sum(1 for b in bodies if b.strip()) < 2:
        return
    assert render_aggregated_page("T", bodies) == "\n\n".join(_merged_without_shortcuts("T", bodies))
