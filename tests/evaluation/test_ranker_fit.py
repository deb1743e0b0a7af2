"""The learned ranker's fit: pairwise logistic weights, held-out folds grouped by article, today's columns only."""

from __future__ import annotations

import json
import random

import pytest

from petrichor.evaluation import ranker_fit
from petrichor_serving.recall.features import feature_names
from petrichor_serving.recall.ranker import LinearRanker, load


def _records(n_questions: int, seed: int = 7) -> list[dict]:
    """Pools where the gold candidate has the highest `dense_share` and a random `hand_score`."""
    rng = random.Random(seed)
    names = feature_names()
    dense, hand = names.index("dense_share"), names.index("hand_score")
    out = []
    for q in range(n_questions):
        rows, labels = [], []
        gold = rng.randrange(6)
        for i in range(6):
            row = [rng.random() * 0.2 for _ in names]
            row[hand] = rng.random()
            row[dense] = 0.9 + 0.1 * rng.random() if i == gold else 0.6 * rng.random()
            rows.append(row)
            labels.append(2 if i == gold else 0)
        out.append(
            {"set": "s1" if q % 2 else "s2", "source": "dev", "qid": f"q{q}", "group": f"a{q // 3}", "pool": 0, "labels": labels, "rows": rows}
        )
    return out


def _write(path, records, names=None):
    lines = [json.dumps({"features": list(names or feature_names())}), *(json.dumps(r) for r in records)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_the_fit_learns_the_signal_that_orders_the_pools_and_held_out_folds_show_it(tmp_path):
    path = tmp_path / "rows.jsonl"
    _write(path, _records(120))
    records = ranker_fit.load([path], {"dev"})
    weights = ranker_fit.fit(records)
    names = feature_names()
    assert weights[names.index("dense_share")] > 1.0  # from 0 in the prior: the signal that orders these pools
    held = ranker_fit.cross_validate(records)
    assert set(held) == {"s1", "s2"}
    for figures in held.values():
        assert figures["learned_exact"] > figures["hand_exact"] + 0.3


def test_the_shipped_model_file_round_trips_and_loads(tmp_path):
    path = tmp_path / "rows.jsonl"
    _write(path, _records(30))
    out = tmp_path / "model.json"
    assert ranker_fit.main([str(path), "--sources", "dev", "--out", str(out)]) == 0
    model = load(out)
    assert isinstance(model, LinearRanker) and model.names == feature_names() and model.fitted_on == ("s1:dev", "s2:dev")


def test_rows_written_for_other_columns_are_refused(tmp_path):
    path = tmp_path / "old.jsonl"
    _write(path, _records(3), names=["hand_score"])
    with pytest.raises(ValueError, match="other feature columns"):
        ranker_fit.load([path], {"dev"})


def test_the_shipped_model_reads_todays_columns():
    """A route added to the registry changes the columns: the shipped model must then be fitted again."""
    assert load() is not None
