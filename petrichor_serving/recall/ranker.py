"""The learned ranker: a model over each rerank pool's feature rows (`features.py`) that orders the pool.

It is fitted on the evaluation sets by `petrichor.evaluation.ranker_fit` and shipped as `ranker_model.json`
beside this module: the feature names it was fitted on and, per column, a weight (a linear scorer; pairwise
logistic loss). Loaded once per process, it is used when `RecallConfig.ranker` is "learned"; "hand" keeps
the hand-tuned points of `rerank.py`. A model fitted on other feature names than the registry's today (a route
added or removed) is refused at load, and recall then uses the hand-tuned rerank.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from petrichor_serving.recall.features import feature_names

MODEL_FILE = Path(__file__).with_name("ranker_model.json")
FORMAT = "petrichor-linear-ranker/1"


@dataclass(frozen=True)
class LinearRanker:
    names: tuple[str, ...]
    weights: tuple[float, ...]
    fitted_on: tuple[str, ...]
    """The evaluation sets and question sources the weights were fitted on (for the record)."""

    def scores(self, rows: Sequence[Sequence[float]]) -> list[float]:
        return [sum(w * x for w, x in zip(self.weights, row)) for row in rows]

    def to_json(self) -> dict[str, object]:
        return {"format": FORMAT, "features": list(self.names), "weights": list(self.weights), "fitted_on": list(self.fitted_on)}

    @classmethod
    def from_json(cls, doc: dict[str, object]) -> LinearRanker:
        if doc.get("format") != FORMAT:
            raise ValueError(f"not a {FORMAT} model: format {doc.get('format')!r}")
        names, weights = doc.get("features"), doc.get("weights")
        if not isinstance(names, list) or not isinstance(weights, list) or len(names) != len(weights):
            raise ValueError("a ranker model needs as many weights as feature names")
        fitted = doc.get("fitted_on", [])
        return cls(tuple(str(n) for n in names), tuple(float(w) for w in weights), tuple(str(s) for s in fitted) if isinstance(fitted, list) else ())


_lock = threading.Lock()
_loaded: dict[Path, LinearRanker | None] = {}


def load(path: Path | None = None) -> LinearRanker | None:
    """The model at `path` (default `MODEL_FILE`), read once; None when it is missing, unreadable or fitted on
    other features."""
    path = MODEL_FILE if path is None else path
    with _lock:
        if path not in _loaded:
            try:
                model = LinearRanker.from_json(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError):
                model = None
            _loaded[path] = model if model is not None and model.names == feature_names() else None
        return _loaded[path]
