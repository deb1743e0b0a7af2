"""The learned ranker: each rerank pool's feature rows, the model file it reads, and search with it."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from petrichor_serving.recall import Scope, search
from petrichor_serving.recall import ranker as ranker_module
from petrichor_serving.recall.config import DEFAULT_CONFIG
from petrichor_serving.recall.features import feature_names
from petrichor_serving.recall.ranker import LinearRanker, load

from .synthetic import SnapshotRows


@pytest.fixture(scope="module")
def index():
    r = SnapshotRows()
    r.article(
        "ops",
        "Redis operations",
        sections=[
            (("Deploy",), "Download, unpack and start the Redis server, then its primary.", []),
            (("Failover",), "Sentinel elects a new Redis primary when the primary fails and tells the clients.", []),
            (("Persistence",), "Redis RDB snapshots of the primary and the AOF log trade speed for safety.", []),
        ],
    )
    r.article("mq", "Kafka basics", sections=[(("Consumers",), "Each partition is read by one consumer of a group.", [])])
    return r.index()


QUESTION = "how does sentinel elect a new redis primary"


def _model(tmp_path, weights: dict[str, float], names: tuple[str, ...] | None = None):
    names = names or feature_names()
    path = tmp_path / "ranker_model.json"
    model = LinearRanker(names, tuple(weights.get(n, 0.0) for n in names), ("test",))
    path.write_text(json.dumps(model.to_json()), encoding="utf-8")
    return path


def test_every_pool_is_logged_one_row_per_candidate_with_shares_in_range(index):
    pools: list = []
    search(index, QUESTION, scope=Scope(), feature_log=pools)
    assert pools
    names = feature_names()
    for hits, rows in pools:
        assert len(hits) == len(rows) and all(len(row) == len(names) for row in rows)
        for row in rows:
            assert all(0.0 <= v <= 1.0 for n, v in zip(names, row) if n != "length"), dict(zip(names, row))
    hits, rows = pools[0]
    hand = names.index("hand_score")
    best = max(range(len(rows)), key=lambda i: rows[i][hand])
    assert hits[best][1] == "ops:chunk-002"  # the hand rerank's first is the failover section


def test_a_model_of_the_hand_score_alone_orders_as_the_hand_rerank_and_another_reorders(index, tmp_path, monkeypatch):
    question = QUESTION
    hand = [c.chunk_id for c in search(index, question, scope=Scope()).candidates]
    learned = replace(DEFAULT_CONFIG, ranker="learned")
    monkeypatch.setattr(ranker_module, "MODEL_FILE", _model(tmp_path, {"hand_score": 1.0}))
    monkeypatch.setattr(ranker_module, "_loaded", {})
    assert [c.chunk_id for c in search(index, question, scope=Scope(), config=learned).candidates] == hand
    inverted = tmp_path / "inverted"
    inverted.mkdir()
    monkeypatch.setattr(ranker_module, "MODEL_FILE", _model(inverted, {"hand_score": -1.0}))
    monkeypatch.setattr(ranker_module, "_loaded", {})
    assert [c.chunk_id for c in search(index, question, scope=Scope(), config=learned).candidates][0] != hand[0]


def test_a_model_fitted_on_other_features_or_malformed_is_not_used(tmp_path):
    assert load(_model(tmp_path, {"hand_score": 1.0}, names=("hand_score", "a_feature_gone"))) is None
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "petrichor-linear-ranker/1", "features": ["hand_score"], "weights": []}), encoding="utf-8")
    assert load(bad) is None
    assert load(tmp_path / "missing.json") is None
    with pytest.raises(ValueError, match="not a"):
        LinearRanker.from_json({"format": "other"})


def test_an_unknown_ranker_is_refused():
    with pytest.raises(ValueError, match="ranker must be one of"):
        replace(DEFAULT_CONFIG, ranker="gbdt")
