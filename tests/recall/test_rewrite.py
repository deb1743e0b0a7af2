from petrichor_serving.recall.query import Query
from petrichor_serving.recall.rewrite import build_queries, rewrite_query


def test_complex_question_is_split_into_clauses():
    # a compound question: the question itself, then each clause without its leading 请/以及
    q = "请比较 Redis 的持久化方案，以及说明各自适用场景和恢复差异"
    queries = build_queries(q)
    assert queries == [q, "比较 Redis 的持久化方案", "说明各自适用场景和恢复差异"]


def test_simple_question_stays_single():
    # a short simple question is searched exactly as asked
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


# ------------------------------------------------------------------------------ coordinated subjects

import pytest  # noqa: E402
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from petrichor_serving.recall.rewrite import MAX_CLAUSES, coordination_queries  # noqa: E402


@pytest.mark.parametrize(
    "question, queries",
    [
        ("北京冬奥会和冬残奥会的开幕日期分别是什么时候？", ["北京冬奥会的开幕日期是什么时候", "北京冬残奥会的开幕日期是什么时候"]),
        # the words before the first subject are asked of every subject: the year and the event stay
        ("2022年澳网男单和女单冠军分别是谁？", ["2022年澳网男单是谁", "2022年澳网女单冠军是谁"]),
        ("2022春运的开始和结束时间是什么时候？", ["2022春运的开始是什么时候", "2022春运的结束时间是什么时候"]),
        ("深圳大学2022年和2023年分别录取了多少名本科生？", ["深圳大学2022年录取了多少名本科生", "深圳大学2023年录取了多少名本科生"]),
        # a shared last word the subject repeats is not doubled
        ("2023年奥斯卡最佳女主角和最佳男主角分别是谁？", ["2023年奥斯卡最佳女主角是谁", "2023年奥斯卡最佳男主角是谁"]),
        ("ChatGPT和GPT4的发布时间", ["ChatGPT的发布时间", "GPT4的发布时间"]),
        ("手动切换和回切的步骤", ["手动切换的步骤", "手动回切的步骤"]),
        ("Redis、Kafka和MySQL的端口是多少", ["Redis的端口是多少", "Kafka的端口是多少", "MySQL的端口是多少"]),
        # no predicate after the subjects: the two halves
        ("上海和北京", ["上海", "北京"]),
        # a conjunction inside a work's title joins no subjects
        ("《速度与激情10》内地和北美的上映时间", ["《速度与激情10》内地的上映时间", "《速度与激情10》北美的上映时间"]),
        ("2022年中秋假期国内旅游出游人次和收入", ["2022年中秋假期国内旅游出游人次", "2022年中秋假期国内旅游出游收入"]),
        # no predicate: the first half borrows the later half's words after its subject
        ("2022年中国和美国经济增速", ["2022年中国经济增速", "2022年美国经济增速"]),
        ("2021年和2022年全国棉花产量", ["2021年全国棉花产量", "2022年全国棉花产量"]),
    ],
)
def test_a_question_of_several_subjects_is_asked_of_each(question, queries):
    assert coordination_queries(question) == queries
    assert build_queries(question, clauses=False) == [question, *queries]


@pytest.mark.parametrize(
    "question",
    [
        "主节点心跳超时后哨兵如何选举新的主节点",  # one subject
        "How do I install and configure the plugin?",  # English: the clause rule's domain
        "《速度与激情》的导演是谁",
        "邓伦逃税多少钱，被罚了多少钱",  # two clauses: the clause rule's domain
    ],
)
def test_a_question_without_coordinated_subjects_is_left_alone(question):
    assert coordination_queries(question) == []


def test_clauses_come_before_coordination_and_each_rule_can_be_switched_off():
    q = "请比较 Redis 的持久化方案，以及说明各自适用场景和恢复差异"
    assert build_queries(q) == [q, "比较 Redis 的持久化方案", "说明各自适用场景和恢复差异"]
    assert build_queries(q, clauses=False) == [q]  # two clauses: no coordination either
    s = "ChatGPT和GPT4的发布时间"
    assert build_queries(s, coordination=False) == [s]
    assert build_queries(s, ["GPT4"], coordination=True) == [s, "GPT4"]  # a caller's own sub-queries win


_WORDS = st.text(alphabet="北京上海会议发布时间的和与及、是谁《》AB12", max_size=24)


@given(_WORDS)
def test_coordination_queries_are_few_distinct_and_made_of_the_question(question):
    queries = coordination_queries(question)
    assert len(queries) <= MAX_CLAUSES and len(set(queries)) == len(queries)
    assert len(queries) != 1
    pool = set(question)
    for q in queries:
        assert len(q) >= 2 and set(q) <= pool
