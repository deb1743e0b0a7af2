"""Fusion, article balancing, local rerank and diversity against the reference cases."""

from petrichor_core.text.bm25 import bm25_idf
from petrichor_serving.recall.balance import select_articles
from petrichor_serving.recall.diversity import select_diverse
from petrichor_serving.recall.fusion import fuse
from petrichor_serving.recall.hits import Hit
from petrichor_serving.recall.rerank import idf_weights, rerank


def hit(
    chunk: int, route: str = "chunk_vector", title: str = "", snippet: str = "", *, article: int = 1, score: float = 0.0, content: str = ""
) -> Hit:
    return Hit(
        kb_id="1",
        article_id=str(article),
        title=title,
        path="",
        heading_path=(),
        snippet=snippet,
        content=content or snippet,
        score=score,
        routes=[route],
        chunk_id=str(chunk),
    )


def test_rrf_rewards_independent_routes():
    # case 9
    a, b = hit(1, "chunk_vector"), hit(2, "chunk_vector")
    fused = fuse([[a, b], [hit(2, "chunk_bm25")]])
    assert [h.chunk_id for h in fused] == ["2", "1"]
    assert fused[0].score == 1 / 62 + 1 / 61
    assert fused[0].routes == ["chunk_vector", "chunk_bm25"]
    assert fused[1].score == 1 / 61


def test_fusion_prefers_original_chunk_metadata():
    # case 10
    question = hit(7, "question_vector", "部署", "用户问法：怎么安装")
    chunk = hit(7, "chunk_bm25", "安装步骤", "下载安装并启动")
    fused = fuse([[question], [chunk]])
    assert len(fused) == 1
    assert (fused[0].title, fused[0].snippet) == ("安装步骤", "下载安装并启动")
    assert fused[0].routes == ["question_vector", "chunk_bm25"]
    assert fused[0].score == 2 / 61
    # a question hit arriving after the chunk never replaces it
    fused = fuse([[chunk], [question]])
    assert fused[0].title == "安装步骤"


def test_fusion_keys_ties_and_cut():
    wiki = Hit(kb_id="k", article_id=None, title="t", path="", heading_path=(), snippet="", content="", routes=["wiki"], page_key="entity-x")
    single, double = hit(1, "chunk_bm25"), hit(2, "chunk_vector")
    fused = fuse([[single], [double, wiki], [hit(2, "question_bm25")]])
    assert wiki.key == "wiki:k:entity-x" and single.key == "chunk:1:1"
    # chunk 2 and chunk 1 both lead a list; chunk 2 adds a second rank
    assert [h.key for h in fused] == ["chunk:1:2", "chunk:1:1", "wiki:k:entity-x"]
    tie = fuse([[hit(1, "chunk_bm25")], [hit(2, "chunk_vector")], [hit(3, "question_bm25")]])
    assert [h.chunk_id for h in tie] == ["1", "2", "3"]  # equal score and routes: first seen first
    many = fuse([[hit(i) for i in range(50)]])
    assert len(many) == 30 and many[0].chunk_id == "0"


def test_equal_scores_go_to_the_hit_with_more_routes():
    first = hit(1, "chunk_bm25")
    second = hit(2, "chunk_vector")
    # both get 1/61 + 1/62 but chunk 2 from two routes, chunk 1 from one route twice
    fused = fuse([[first], [hit(9), first], [second], [hit(8, "question_bm25"), hit(2, "question_bm25")]])
    assert fused[0].score == fused[1].score
    assert [h.chunk_id for h in fused[:2]] == ["2", "1"]


def test_article_stage_balances_articles():
    # case 11
    fused = [
        hit(1, article=10, score=0.9),
        hit(2, article=10, score=0.8),
        hit(3, article=20, score=0.75),
        hit(4, article=10, score=0.7),
        hit(5, article=20, score=0.6),
    ]
    stage = select_articles(fused, 2, 2)
    assert len(stage.hits) == 4
    assert {h.article_id for h in stage.hits} == {"10", "20"}
    assert stage.hits[0].article_id != stage.hits[1].article_id
    assert [h.chunk_id for h in stage.hits] == ["1", "3", "2", "5"]
    assert stage.article_keys == ["1:10", "1:20"]
    assert len(select_articles(fused, 1, 4).hits) == 3


def test_local_rerank_uses_the_original_question():
    # case 12
    hits = [hit(1, title="部署说明", snippet="普通部署步骤"), hit(2, title="Redis Sentinel 故障转移", snippet="哨兵切换主节点")]
    reranked = rerank("Redis Sentinel 故障转移", hits)
    assert reranked[0].chunk_id == "2"
    assert all(h.rerank_score is not None for h in reranked)
    assert reranked[0].rerank_score > reranked[1].rerank_score
    assert rerank("x", hits[:1])[0].rerank_score is None


def test_diversity_drops_duplicates():
    # case 13
    hits = [
        hit(1, title="安装步骤", snippet="下载并安装"),
        hit(2, title="安装步骤", snippet="下载并安装"),
        hit(3, title="故障处理", snippet="查看日志定位问题"),
    ]
    selection = select_diverse(hits, limit=10)
    assert [h.chunk_id for h in selection.hits] == ["1", "3"]
    assert selection.dropped_keys == ["chunk:1:2"]


def test_diversity_cap_jaccard_and_backfill():
    text = "Redis 持久化 RDB 快照 AOF 日志 恢复 速度 数据 安全 取舍 主从 复制 哨兵 集群 分片 过期 淘汰 内存 网络"
    near = [hit(1, title="甲", snippet=text), hit(2, title="乙", snippet=text + " 。")]
    assert [h.chunk_id for h in select_diverse(near, 10).hits] == ["1"]

    same_article = [hit(i, title=f"章节{i}", snippet=f"内容{i}独特{i * 7}") for i in range(1, 6)]
    selection = select_diverse(same_article, limit=10, max_per_article=3)
    assert [h.chunk_id for h in selection.hits] == ["1", "2", "3"]
    assert selection.dropped_keys == ["chunk:1:4", "chunk:1:5"]

    other = hit(9, title="别的文章", snippet="完全不同的主题", article=2)
    duplicate = hit(10, title="章节1", snippet="又一段", article=3)
    selection = select_diverse(same_article[:2], limit=4, backfill=[*same_article, duplicate, other])
    assert [h.chunk_id for h in selection.hits] == ["1", "2", "3", "9"]


def test_a_hits_token_set_is_computed_once_across_searches():
    """The near-duplicate test's token sets are cached by text: a hit that comes back in a later search
    (a new `Hit` object, as every search makes) costs no new token set, and a changed text gets its own."""
    calls: list[str] = []

    def tokens_of(text: str) -> frozenset:
        calls.append(text)
        return frozenset(text.split())

    def pool() -> list[Hit]:
        return [hit(i, title=f"节{i}", snippet=f"唯一 内容 {i} " * 3, article=i) for i in range(1, 5)]

    first = select_diverse(pool(), limit=10, tokens_of=tokens_of)
    assert len(calls) == 4
    again = select_diverse(pool(), limit=10, tokens_of=tokens_of)
    assert len(calls) == 4
    assert [h.key for h in again.hits] == [h.key for h in first.hits]
    select_diverse([hit(1, title="节1", snippet="改过的 内容")], limit=10, tokens_of=tokens_of)
    assert len(calls) == 5


def test_route_weights_scale_a_routes_rrf_contributions():
    question_first = [[hit(1, "question_vector")], [hit(2, "chunk_vector")]]
    assert [h.chunk_id for h in fuse(question_first)] == ["1", "2"]  # equal ranks: first seen wins
    fused = fuse(question_first, weights={"question_vector": 0.5})
    assert [h.chunk_id for h in fused] == ["2", "1"]
    assert fused[1].score == 0.5 / 61 and fused[0].score == 1 / 61


def test_idf_weights_favour_the_rare_query_token():
    df = {"install": 90, "sentinel": 2, "absent": 0}
    weights = idf_weights(["install", "sentinel", "absent"], lambda t: bm25_idf(100, df[t]))
    assert weights["absent"] == 1.0 and 0 < weights["install"] < weights["sentinel"] < 1.0


def test_idf_rerank_lets_the_rare_token_decide():
    # both titles hold one query token; uniform weights keep the fused order, IDF puts the rare match first
    hits = [hit(1, title="install guide", score=0.03), hit(2, title="sentinel notes", score=0.03)]
    assert rerank("install sentinel", hits, str.split)[0].chunk_id == "1"

    def weights(tokens):
        return idf_weights(tokens, lambda t: bm25_idf(100, {"install": 90, "sentinel": 2}[t]))

    assert rerank("install sentinel", hits, str.split, weights)[0].chunk_id == "2"
