"""Fast paths of recall equal the plain computations they replace."""

import re
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from petrichor_core.text import bm25
from petrichor_core.text.bm25 import BM25Index, top_ranked
from petrichor_core.text.tokenize import index_tokens, query_tokens
from petrichor_serving.recall.hits import compact_text


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


_WHITESPACE = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]


def _compact_by_regex(text: str, limit: int) -> str:
    """The regex formulation `compact_text` replaced."""
    ws = re.compile(r"\s+")
    if len(text) > 4 * limit:
        head = ws.sub(" ", text[: 4 * limit]).strip()
        if len(head) > limit:
            return head[:limit] + "…"
    text = ws.sub(" ", text).strip()
    return text if len(text) <= limit else text[:limit] + "…"


def test_whitespace_is_the_regex_class():
    assert all(re.fullmatch(r"\s", c) for c in _WHITESPACE)
    assert "".join(_WHITESPACE).split() == []


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.one_of(st.sampled_from(_WHITESPACE), st.sampled_from("ab中文。 x"), st.characters()), max_size=120).map("".join),
    st.integers(1, 40),
)
def test_compact_text_equals_the_regex_formulation(text, limit):
    assert compact_text(text, limit) == _compact_by_regex(text, limit)


def _bm25_corpus(seed: int, n: int) -> list[tuple[str, str, str]]:
    rng = np.random.default_rng(seed)
    common = ["redis", "kafka", "集群", "故障"]
    rare = ["持久化", "消费者", "恢复", "备份", "索引", "查询", "延迟", "raft", "wal"]
    pick = lambda words, k: " ".join(rng.choice(words, size=k))  # noqa: E731
    return [(pick(common + rare[:2], 2), pick(common, int(rng.integers(0, 4))), pick(common * 3 + rare, int(rng.integers(1, 40)))) for _ in range(n)]


@pytest.mark.parametrize("leaders", [1, 3, 128])
@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    k=st.integers(1, 30),
    query=st.lists(
        st.sampled_from(["redis", "kafka", "集群", "故障", "持久化", "消费者", "恢复", "索引", "raft", "wal", "nope"]), min_size=1, max_size=6
    ),
    grouped=st.booleans(),
)
def test_pruned_top_equals_ranking_every_score(monkeypatch_module, leaders, seed, k, query, grouped):
    """The bound-pruned top-k (forced on however few postings) ranks and scores as ranking every row."""
    monkeypatch_module.setattr(bm25, "PRUNE_MIN_POSTINGS", 0)
    monkeypatch_module.setattr(bm25, "_LEADERS", leaders)
    index = BM25Index.build(_bm25_corpus(seed, 300), index_tokens)
    group = (lambda r: r // 3) if grouped else None
    terms = query_tokens(" ".join(query))
    expected = top_ranked(*index.score(terms), k, group)
    assert index.top(terms, k, group=group) == expected
    assert index.top(terms, k, np.ones(index.size, bool), group=group) == expected


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), dtype=st.sampled_from([np.int32, np.int64]))
def test_impacts_at_rows_of_either_dtype_equal_a_lookup(seed, dtype):
    """A term's impacts looked up at rows (int64 from `flatnonzero`, int32 from the postings) are the
    postings' own values, 0.0 elsewhere."""
    rng = np.random.default_rng(seed)
    term_rows = np.sort(rng.choice(500, int(rng.integers(1, 200)), replace=False)).astype(np.int32)
    impacts = rng.random(len(term_rows))
    rows = np.sort(rng.choice(520, int(rng.integers(0, 100)), replace=False)).astype(dtype)
    by_row = dict(zip(term_rows.tolist(), impacts.tolist()))
    assert bm25._impacts_at((term_rows, impacts), rows).tolist() == [by_row.get(r, 0.0) for r in rows.tolist()]
