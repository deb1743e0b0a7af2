"""A wiki aggregated with the previous pages reused equals a full aggregation, whatever changed."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from petrichor_pipeline.knowledge.aggregate import PreviousWiki, aggregate_wiki
from petrichor_pipeline.knowledge.wiki import ArticleKnowledge, LinkContribution, PageContribution, SourceRef

KEYS = ("entity-redis", "entity-mysql", "concept-缓存", "concept-复制", "entity-kafka")


def page(key: str, variant: int) -> PageContribution:
    others = [k for k in KEYS if k != key]
    body = f"# {key}\n\n说明{variant % 3}。\n\n见 [[{others[variant % len(others)]}|相关]]。"
    return PageContribution(key, key.split("-")[0], f"{key}-{variant % 2}", f"摘要{variant}" if variant % 2 else "", body, (f"别名{variant}",), ())


def article(aid: str, keys: tuple[str, ...], variant: int, kb: str = "ops") -> ArticleKnowledge:
    src_key = f"source-{aid}"
    links = "\n".join(f"- [[{k}|{k}]]" for k in keys)
    return ArticleKnowledge(
        article_id=aid,
        kb_id=kb,
        tenant="default",
        title=aid,
        article_version=f"v{variant}",
        summary="",
        source_page=PageContribution(src_key, "source", aid, "", f"# {aid}\n\n{links}\n\n[[source-a{variant % 4}|旁文]]"),
        pages=tuple(page(k, variant) for k in keys),
        links=tuple(LinkContribution(src_key, k, "extracts", f"d{variant}" if variant % 2 else "") for k in keys),
        sources=tuple(SourceRef(k, f"chunk-{variant:03d}", "n") for k in keys),
        warnings=(),
        model_calls=1,
    )


articles = st.dictionaries(
    st.sampled_from([f"a{i}" for i in range(6)]),
    st.tuples(st.lists(st.sampled_from(KEYS), unique=True, max_size=3).map(tuple), st.integers(0, 5), st.sampled_from(["ops", "dev"])),
    max_size=6,
)


def corpus(spec: dict) -> list[ArticleKnowledge]:
    return [article(aid, keys, variant, kb) for aid, (keys, variant, kb) in spec.items()]


def reaggregate(before: list[ArticleKnowledge], after: list[ArticleKnowledge]):
    first = aggregate_wiki(before)
    memo = json.loads(json.dumps(first.memo, ensure_ascii=False))  # as the build stores it
    return aggregate_wiki(after, previous=PreviousWiki(first.tables["wiki_pages"], memo))


@settings(max_examples=150, deadline=None)
@given(articles, articles)
def test_reuse_equals_full_aggregation_after_edits_additions_and_deletions(before, after):
    incremental = reaggregate(corpus(before), corpus(after))
    full = aggregate_wiki(corpus(after))
    for name, table in full.tables.items():
        assert incremental.tables[name].equals(table), name
    assert incremental.memo == full.memo


def test_only_pages_an_edited_article_supports_are_merged_again():
    before = [article("a1", ("entity-redis",), 0), article("a2", ("entity-mysql",), 0), article("a3", ("entity-kafka",), 0)]
    after = [before[0], article("a2", ("entity-mysql",), 1), before[2]]
    result = reaggregate(before, after)
    assert result.pages_built == 2  # source-a2 and entity-mysql
    assert result.pages_reused == 4


def test_a_page_is_merged_again_when_a_page_it_links_to_appears():
    # a1's source page links to source-a0, which does not exist until a0 is added
    before = [article("a1", (), 0)]
    result = reaggregate(before, [*before, article("a0", (), 1)])
    assert "[[source-a0|旁文]]" in {r["page_key"]: r for r in result.pages}["source-a1"]["content_md"]
    assert result.pages_reused == 0


def test_a_memo_of_another_aggregation_version_reuses_nothing():
    before = [article("a1", ("entity-redis",), 0)]
    first = aggregate_wiki(before)
    result = aggregate_wiki(before, previous=PreviousWiki(first.tables["wiki_pages"], {**first.memo, "version": -1}))
    assert result.pages_reused == 0 and result.tables["wiki_pages"].equals(first.tables["wiki_pages"])
