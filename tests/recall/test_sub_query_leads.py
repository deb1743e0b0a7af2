"""Article balancing for sub-queries: each sub-query's first article is listed right after the first hit."""

from petrichor_serving.recall.balance import keep_leads, leads_after_first, select_articles, sub_query_leads
from petrichor_serving.recall.fusion import fuse
from tests.recall.test_stages import hit


def _keys(hits):
    return [h.article_id for h in hits]


def test_each_sub_query_leads_with_the_article_its_own_lists_rank_first():
    # the whole question ranks articles 1 and 2 first; sub-query B's own lists rank article 3 first
    question = [[hit(1, article=1), hit(2, article=2), hit(3, article=3)]]
    sub_a = [[hit(1, article=1)], [hit(2, "chunk_bm25", article=2)]]
    sub_b = [[hit(3, article=3), hit(2, article=2)]]
    fused = fuse([*question, *sub_a, *sub_b])
    leads = sub_query_leads(fused, [sub_a, sub_b])
    assert _keys(leads) == ["1", "3"]
    assert all(lead in fused for lead in leads)  # the fused hit, carrying every list's score
    # fused alone, article 3 is last; as a lead it follows the first hit and article 1
    fused.append(hit(4, article=4))
    assert _keys(fused) == ["2", "1", "3", "4"]
    fused.insert(2, fused.pop())  # a hit between article 1 and article 3
    assert _keys(leads_after_first(fused, leads)) == ["2", "1", "3", "4"]


def test_a_lead_balancing_left_out_still_reaches_the_rerank():
    fused = fuse([[hit(i, article=i) for i in range(1, 8)]])
    stage = select_articles(fused, 2, 4)
    assert _keys(stage.hits) == ["1", "2"]
    lead = next(h for h in fused if h.article_id == "7")
    kept = keep_leads(stage, [lead])
    assert kept.article_keys == [*stage.article_keys, lead.article_key]
    assert kept.hits[2] is lead  # after one hit of every kept article, before their second hits
    assert keep_leads(stage, [fused[0]]) is stage  # already kept: nothing changes


def test_leads_keep_order_and_lose_nothing():
    ranked = [hit(1, article=1), hit(2, article=1), hit(3, article=2), hit(4, article=3)]
    leads = [hit(9, article=3), hit(8, article=1)]
    out = leads_after_first(ranked, leads)
    assert [h.chunk_id for h in out] == ["1", "4", "2", "3"]  # article 1 already leads; article 3's best next
    assert sorted(h.chunk_id for h in out) == sorted(h.chunk_id for h in ranked)
    assert leads_after_first(ranked, []) == ranked
    # a lead no ranked hit belongs to is listed itself
    assert [h.chunk_id for h in leads_after_first(ranked, [hit(5, article=9)])][:2] == ["1", "5"]
