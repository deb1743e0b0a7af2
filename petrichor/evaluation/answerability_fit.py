"""Fit the answerability combiner on every development set together, and ship it.

    petrichor eval --dataset SET --answers --no-ablation --unanswerable-from OTHER ... --signals SET.jsonl
    python -m petrichor.evaluation.answerability_fit fit SET.jsonl ... [--out petrichor_serving/agent/answerability_model.json]

`collect` writes the same per-question rows as `petrichor eval --signals` while answering with Petrichor's agent
only (no baseline retrievers), for refitting on a busy machine:

    python -m petrichor.evaluation.answerability_fit collect --dataset SET [--unanswerable-from OTHER ...] --out SET.jsonl

Each row is one question's answerability record (`harness`): the signals of the evidence Petrichor's answer
cited, whether the question is answerable (`kind`), and whether it was cited at all. The model is a logistic
regression (numpy, Newton's method with a small ridge) over `answerability.FEATURES`, weighted so every set's
answerable, in-domain unanswerable and off-topic questions count alike (`_groups`); a second variant without the cosines serves
embedders the model was not fitted with. The operating point, one per question script as the margins have, is the highest score
threshold at which false not-found stays at or below `FALSE_NOT_FOUND_MAX` on every set's answerable questions, so the gate refuses as
much as that bar allows and no set pays for another.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from petrichor_serving.agent.answerability import FEATURES, LEXICAL, MODEL_PATH, SEMANTIC, features, judge, signals_of

Params = tuple[np.ndarray, np.ndarray, np.ndarray, np.float64]
"""A fitted combiner: (mean, scale, weights, bias)."""

FALSE_NOT_FOUND_MAX = 0.045
"""The bar is 5 % false not-found on every answerable set; half a point is kept for questions not seen here."""
RIDGE = 1.0
"""L2 penalty on the standardised weights: a few hundred rows per set, a dozen features."""


def load(paths: Sequence[Path]) -> list[dict[str, Any]]:
    rows = [json.loads(line) for p in paths for line in Path(p).read_text(encoding="utf-8").splitlines() if line.strip()]
    if not rows:
        raise ValueError("no signal rows in the given files")
    return rows


def _measured(row: dict[str, Any]) -> dict[str, Any] | None:
    """The row's signals when the gate measured cited evidence (None: nothing cited, or no gate ran)."""
    verdict = row.get("answerability") or {}
    if not verdict or verdict.get("signal") == "citations":
        return None
    return verdict.get("signals")


def matrix(rows: list[dict[str, Any]], names: Sequence[str], embedders: set[str] | None = None) -> np.ndarray:
    """The feature matrix, NaN where a signal was not measured (or its embedder is not among `embedders`)."""
    out = np.full((len(rows), len(names)), np.nan)
    for i, row in enumerate(rows):
        signals = _measured(row)
        if signals is None:
            continue
        values = features(signals)
        usable = embedders is None or (signals.get("embedder") or "").split(":", 1)[0] in embedders
        for j, name in enumerate(names):
            v = values.get(name)
            if v is not None and (usable or name not in SEMANTIC):
                out[i, j] = v
    return out


def fit_logistic(x: np.ndarray, y: np.ndarray, w: np.ndarray, ridge: float = RIDGE, steps: int = 50) -> tuple[np.ndarray, float]:
    """Weighted logistic regression by Newton's method; `x` standardised, no NaN. Returns (weights, bias)."""
    n, d = x.shape
    a = np.hstack([x, np.ones((n, 1))])
    beta = np.zeros(d + 1)
    penalty = np.diag([ridge] * d + [0.0])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-np.clip(a @ beta, -30, 30)))
        grad = a.T @ (w * (p - y)) + penalty @ beta
        hess = (a * (w * p * (1 - p))[:, None]).T @ a + penalty + 1e-9 * np.eye(d + 1)
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return beta[:d], float(beta[d])


def _groups(rows: list[dict[str, Any]]) -> list[str]:
    """Each set's answerable, in-domain unanswerable and off-topic questions: each group weighs the same in the
    fit, so the few in-domain near misses are not outvoted by the many easy off-topic questions."""
    return [f"{r['dataset']}:{'cross' if str(r['kind']).startswith('cross:') else r['kind']}" for r in rows]


def _train(rows: list[dict[str, Any]], names: Sequence[str], embedders: set[str] | None) -> Params:
    """Standardisation and weights fitted on `rows`: (mean, scale, weights, bias)."""
    raw = matrix(rows, names, embedders)
    fitted = ~np.isnan(raw).all(axis=1)
    seen = ~np.isnan(raw[fitted])
    counts = np.maximum(seen.sum(axis=0), 1)
    filled = np.where(seen, raw[fitted], 0.0)
    mean = filled.sum(axis=0) / counts  # a signal never measured: mean 0, so it adds nothing to any score
    scale = np.sqrt((np.where(seen, filled - mean, 0.0) ** 2).sum(axis=0) / counts)
    scale = np.where(scale < 1e-6, 1.0, scale)
    x = (np.where(np.isnan(raw), mean, raw) - mean) / scale
    y = np.array([r["kind"] == "answerable" for r in rows], dtype=float)
    groups = _groups(rows)
    per_group: dict[str, int] = defaultdict(int)
    for g, f in zip(groups, fitted):
        per_group[g] += int(f)
    w = np.array([1.0 / per_group[g] if f else 0.0 for g, f in zip(groups, fitted)])
    w *= fitted.sum() / w.sum()
    weights, bias = fit_logistic(x[fitted], y[fitted], w[fitted])
    return mean, scale, weights, np.float64(bias)


def _score(rows: list[dict[str, Any]], names: Sequence[str], embedders: set[str] | None, params: Params) -> np.ndarray:
    mean, scale, weights, bias = params
    raw = matrix(rows, names, embedders)
    x = (np.where(np.isnan(raw), mean, raw) - mean) / scale
    return 1 / (1 + np.exp(-np.clip(x @ weights + bias, -30, 30)))


def fit_variant(rows: list[dict[str, Any]], names: Sequence[str], embedders: set[str] | None, hard_conflict: bool = False) -> dict[str, Any]:
    """One combiner over `names`: standardisation, weights, and the operating point (with a contradicted
    constraint refused outright when `hard_conflict`).

    The operating point must hold twice: on every set with the model fitted on all of them, and on every set
    scored by a model fitted without it (leave one set out). A threshold tuned on the sets it was fitted on
    alone does not carry to a set it never saw (an English set's answerable questions score lower under a
    model fitted on the others), and the held-out questions the product meets are such a set."""
    params = _train(rows, names, embedders)
    scores = _score(rows, names, embedders, params)
    fitted = ~np.isnan(matrix(rows, names, embedders)).all(axis=1)
    sets = np.array([r["dataset"] for r in rows])
    held_out = scores.copy()
    if len(set(sets)) > 1:
        for s in sorted(set(sets)):
            others = [r for r, m in zip(rows, sets != s) if m]
            held_out[sets == s] = _score([r for r, m in zip(rows, sets == s) if m], names, embedders, _train(others, names, embedders))
    floor = _floor(rows, hard_conflict)
    scripts = np.array([_script(r) for r in rows])
    threshold: dict[str, float] = {}
    for script in sorted(set(scripts)):
        m = scripts == script
        part = [r for r, keep in zip(rows, m) if keep]
        threshold[str(script)] = min(operating_point(part, scores[m], fitted[m], floor[m]), operating_point(part, held_out[m], fitted[m], floor[m]))
    per_row = np.array([threshold[str(script)] for script in scripts])
    mean, scale, weights, bias = params
    return {
        "features": list(names),
        "mean": [round(float(v), 6) for v in mean],
        "scale": [round(float(v), 6) for v in scale],
        "weights": [round(float(v), 6) for v in weights],
        "bias": round(float(bias), 6),
        "threshold": threshold,
        "figures": figures(rows, scores, fitted, per_row, floor),
        "held_out_figures": figures(rows, held_out, fitted, per_row, floor),
    }


def _script(row: dict[str, Any]) -> str:
    """The question's script as the gate measured it, else from the set's language."""
    return (_measured(row) or {}).get("script") or ("cjk" if row.get("lang") == "zh" else "latin")


def _floor(rows: list[dict[str, Any]], hard_conflict: bool = False) -> np.ndarray:
    """Whether the per-signal thresholds (`answerability.judge`, the gate's floor) pass each gated row, and
    with `hard_conflict` no constraint is contradicted."""
    return np.array([s is not None and judge(signals_of(s)).answerable and not (hard_conflict and s.get("conflict")) for s in map(_measured, rows)])


def _answered(rows: list[dict[str, Any]], scores: np.ndarray, gated: np.ndarray, threshold: float | np.ndarray, floor: np.ndarray) -> np.ndarray:
    """Whether each question gets an answer at `threshold`: a gated one when the thresholds pass it and it
    scores there (`answerability.decide`), an ungated one (no gate ran on it) when it cited anything."""
    cited = np.array([bool(r.get("cited")) or bool((r.get("answerability") or {}).get("withheld")) for r in rows])
    return np.where(gated, cited & floor & (scores >= threshold), np.array([bool(r.get("cited")) for r in rows]))


def operating_point(rows: list[dict[str, Any]], scores: np.ndarray, gated: np.ndarray, floor: np.ndarray) -> float:
    """The highest threshold keeping false not-found at or below `FALSE_NOT_FOUND_MAX` on every set (the
    rows of one script: each script has its own operating point)."""
    answerable = np.array([r["kind"] == "answerable" for r in rows])
    sets = sorted({r["dataset"] for r in rows})
    for t in np.round(np.arange(0.95, 0.0, -0.005), 3):
        answered = _answered(rows, scores, gated, float(t), floor)
        worst = max(
            (1 - answered[m].mean() for s in sets if (m := answerable & np.array([r["dataset"] == s for r in rows])).any()),
            default=0.0,
        )
        if worst <= FALSE_NOT_FOUND_MAX:
            return float(t)
    return 0.0


def figures(rows: list[dict[str, Any]], scores: np.ndarray, gated: np.ndarray, threshold: float | np.ndarray, floor: np.ndarray) -> dict[str, Any]:
    """Per set: false not-found on the answerable questions, not-found on the in-domain unanswerable ones
    (null queries, near misses) and on the off-topic ones (other sets' questions), with question counts."""
    answered = _answered(rows, scores, gated, threshold, floor)
    before = _answered(rows, scores, gated, 0.0, _floor(rows))  # the thresholds alone: the gate before
    out: dict[str, Any] = {}
    for s in sorted({r["dataset"] for r in rows}):
        for label, test in (
            ("false_not_found", lambda r: r["kind"] == "answerable"),
            ("in_domain_not_found", lambda r: r["kind"] == "null"),
            ("off_topic_not_found", lambda r: str(r["kind"]).startswith("cross:")),
        ):
            mask = np.array([r["dataset"] == s and test(r) for r in rows])
            if mask.any():
                rate, floor_rate = 1 - answered[mask].mean(), 1 - before[mask].mean()
                out.setdefault(s, {})[label] = {
                    "rate": round(float(rate), 3),
                    "thresholds_alone": round(float(floor_rate), 3),
                    "questions": int(mask.sum()),
                }
        gold = np.array([r["dataset"] == s and r.get("holds_gold") is not None for r in rows])
        if gold.any():
            held = np.array([bool(r.get("holds_gold")) for r in rows])
            out[s]["holds_gold"] = {
                "rate": round(float((held & answered)[gold].mean()), 3),
                "thresholds_alone": round(float((held & before)[gold].mean()), 3),
                "questions": int(gold.sum()),
            }
    return out


def _in_domain(variant: dict[str, Any]) -> float:
    """The mean in-domain not-found over the sets that have in-domain unanswerable questions."""
    rates = [f["in_domain_not_found"]["rate"] for f in variant["figures"].values() if "in_domain_not_found" in f]
    return sum(rates) / len(rates) if rates else 0.0


def _within_bar(variant: dict[str, Any]) -> bool:
    """Whether false not-found stays at or below the bar on every set (a rule that alone exceeds it never does)."""
    return all(f["false_not_found"]["rate"] <= FALSE_NOT_FOUND_MAX for f in variant["figures"].values() if "false_not_found" in f)


def fit(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Both variants, and the embedders the full one's cosines come from. A contradicted constraint (another
    year, date or count asked) is refused outright when that refuses more in-domain near misses at the same
    bar than leaving it to the combiner's weights (`hard_conflict`)."""
    embedders = sorted({((_measured(r) or {}).get("embedder") or "").split(":", 1)[0] for r in rows} - {""})
    options: list[dict[str, Any]] = [
        {"full": fit_variant(rows, FEATURES, set(embedders), hard), "lexical": fit_variant(rows, LEXICAL, set(), hard), "hard_conflict": hard}
        for hard in (False, True)
    ]
    best = max(options, key=lambda o: (_within_bar(o["full"]), _in_domain(o["full"]), not o["hard_conflict"]))
    return {
        "embedders": embedders,
        **best,
        "fitted_on": {s: sum(r["dataset"] == s for r in rows) for s in sorted({r["dataset"] for r in rows})},
    }


def collect(dataset_dir: Path, others: Sequence[Path], sample: int, out: Path, stride: int = 1, only: str | None = None) -> int:
    """Petrichor's answers with their answerability records, as `petrichor eval --signals` writes them; every
    `stride`-th question of each group (answerable, in-domain unanswerable, off-topic), or one group (`only`)."""
    from petrichor.evaluation.answers import agent_answer, answer_contains, without_gate
    from petrichor.evaluation.build import EvalLayout, build_set
    from petrichor.evaluation.dataset import cross_questions, load_dataset
    from petrichor_core.config import load_settings
    from petrichor_core.models.providers import make_answer_model
    from petrichor_serving.answer.answerer import OFFLINE

    settings = load_settings()
    dataset = load_dataset(dataset_dir)
    built = build_set(dataset, EvalLayout(settings.data_dir / "eval" / dataset_dir.resolve().name))
    chat = make_answer_model(settings) or OFFLINE
    doc_of_article = {a: d for d, a in built.article_of.items()}
    groups = {
        "answerable": dataset.questions[::stride],
        "unanswerable": dataset.unanswerable[::stride] + tuple(q for o in others for q in cross_questions(o, sample)[::stride]),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with out.open("w", encoding="utf-8") as fh:
        for q in (q for name, group in groups.items() if only in (None, name) for q in group):
            o = agent_answer(q, built.snapshot, chat, built.embedder, doc_of_article)
            u = without_gate(o, doc_of_article)
            row = {
                "dataset": dataset.name,
                "qid": q.qid,
                "kind": "answerable" if q.has_gold else (q.subset if q.subset.startswith("cross:") else "null"),
                "lang": q.lang,
                "cited": bool(o.quotes),
                "answerability": o.answerability,
                "holds_gold": answer_contains(u.answer, q.answers_all, q.lang) if q.has_gold and q.answers_all else None,
            }
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            fh.flush()
            n += 1
            if n % 50 == 0:
                print(f"{dataset.name}: {n} questions", file=sys.stderr)
    return n


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m petrichor.evaluation.answerability_fit", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fit", help="fit the combiner on signal files and write the model")
    f.add_argument("signals", nargs="+", type=Path)
    f.add_argument("--out", type=Path, default=MODEL_PATH)
    c = sub.add_parser("collect", help="answer a set's questions with Petrichor and write their signals")
    c.add_argument("--dataset", type=Path, required=True)
    c.add_argument("--unanswerable-from", type=Path, action="append", default=[])
    c.add_argument("--unanswerable-sample", type=int, default=50)
    c.add_argument("--out", type=Path, required=True)
    c.add_argument("--stride", type=int, default=1, help="every N-th question of each group (default 1: all)")
    c.add_argument("--only", choices=("answerable", "unanswerable"), help="one group of questions only")
    args = parser.parse_args(argv)
    if args.command == "collect":
        if not (args.dataset / "qa.jsonl").is_file():
            parser.error(f"{args.dataset}: no qa.jsonl")
        if args.stride < 1:
            parser.error("--stride must be at least 1")
        n = collect(args.dataset, args.unanswerable_from, args.unanswerable_sample, args.out, args.stride, args.only)
        print(f"{n} questions written to {args.out}", file=sys.stderr)
        return 0
    missing = [p for p in args.signals if not p.is_file()]
    if missing:
        parser.error(f"no such signals file: {', '.join(map(str, missing))}")
    model = fit(load(args.signals))
    args.out.write_text(json.dumps(model, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(
        json.dumps(
            {k: model[k]["figures"] for k in ("full", "lexical")}
            | {"threshold": model["full"]["threshold"], "hard_conflict": model["hard_conflict"]},
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
