from petrichor_serving.recall.query import Query
from petrichor_serving.recall.rewrite import build_queries, rewrite_query


def test_complex_question_is_split_into_clauses():
    q = "请比较 Redis 的持久化方案，以及说明各自适用场景和恢复差异"
    queries = build_queries(q)
    assert queries == [q, "比较 Redis 的持久化方案", "说明各自适用场景和恢复差异"]


def test_simple_question_stays_single():
    assert build_queries("Redis 怎么部署") == ["Redis 怎么部署"]
    assert rewrite_query("Redis 怎么部署") == []


def test_question_words_and_prefixes_are_stripped():
    q = "请问 Kafka 的分区是什么？消费者组如何做再均衡？"
    assert rewrite_query(q) == ["Kafka 的分区", "消费者组 做再均衡"]


def test_english_and_conjunction():
    q = "explain snapshot persistence and describe the recovery steps"
    assert rewrite_query(q) == ["explain snapshot persistence", "describe the recovery steps"]


def test_explicit_sub_queries_win_and_are_deduped_not_capped():
    """How many sub-queries a request may send is the HTTP schema's rule; recall searches what it is given."""
    queries = build_queries(Query.of(" Redis "), ["redis", "a", "持久化", "主从复制", "哨兵", "集群", "哨兵"])
    assert queries == ["Redis", "持久化", "主从复制", "哨兵", "集群"]


def test_the_rewrite_makes_at_most_three_clauses():
    q = "请比较 Redis 的持久化方案，以及说明各自适用场景，还有主从复制的配置，以及哨兵的切换流程，再看集群分片"
    assert len(rewrite_query(q)) == 3 and len(build_queries(q)) == 4


def test_the_clause_rule_can_be_switched_off_and_a_callers_sub_queries_win():
    q = "请比较 Redis 的持久化方案，以及说明各自适用场景和恢复差异"
    assert build_queries(q, clauses=False) == [q]
    s = "ChatGPT和GPT4的发布时间"
    assert build_queries(s) == [s]  # one clause: searched as asked
    assert build_queries(s, ["GPT4"]) == [s, "GPT4"]
