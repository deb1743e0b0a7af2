"""Field-weighted BM25 over an inverted index built once per snapshot.

A document has three fields, title / summary / content, weighted 3 / 2 / 1 *while accumulating*: each
token of a field adds its weight to the document length and, per term, to the term count. Statistics are
`N`, `df` and `avgLen` over the documents the request may read (a boolean row mask), so an access filter
changes nothing but which rows exist: scores equal BM25 over the filtered subset, and filtering happens
inside the search rather than on its top ten. (The reference takes these statistics over a candidate pool
of at most 400 rows; over every readable row they are plain BM25 statistics, independent of pool order.)

The index is CSC by term (`indptr`/`indices`/`data` numpy arrays, views of the stored postings when loaded
from a snapshot), so a query touches only its terms' postings; all tokenizing happens once, at publish.
Term scores under the statistics of all rows are computed per term on its first query and kept, so an
unfiltered query is a gather and a `bincount`; a filtered one recomputes them from the term counts with
its own statistics.

An unfiltered top-k over many postings is ranked by upper bounds first (MaxScore): the exact scores of a few
rows give a threshold, terms whose best impacts together stay below it cannot lift a row into the top k on
their own, so only the other terms' postings are summed over every row, and the rest are looked up for the
rows that can still reach the threshold. Final scores are summed in term order as `totals` sums them, so
ranks and scores equal the plain computation's.
"""

from __future__ import annotations

import itertools
import math
from array import array
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

FIELDS = ("title", "summary", "content")
FIELD_WEIGHTS = (3, 2, 1)
"""The weight of each of `FIELDS`, applied while term counts accumulate (stored postings hold them)."""
K1 = 1.5
B = 0.75
"""BM25's term-frequency saturation and length normalisation; the manifest records both with the weights."""


@dataclass(frozen=True)
class Ranked:
    row: int
    score: float


@dataclass(frozen=True)
class BM25Index:
    vocab: dict[str, int]
    indptr: np.ndarray
    """int64, len(vocab) + 1: term t's postings are `indices[indptr[t]:indptr[t+1]]`, rows ascending."""
    indices: np.ndarray
    """int32 row numbers."""
    data: np.ndarray
    """float32 weighted term counts (small integers, exact)."""
    lengths: np.ndarray
    """float64 weighted document lengths."""
    _impacts: dict[int, np.ndarray] = field(init=False, repr=False, default_factory=dict)
    """Term id -> its postings' term scores under the statistics of every row, computed on the term's
    first unfiltered query and kept, so an unfiltered query only gathers and sums (long bigram postings
    would otherwise dominate search time) while loading computes nothing per posting. Concurrent first
    queries may both compute a term's scores; they are the same floats."""
    _leaders: dict[int, tuple[float, np.ndarray]] = field(init=False, repr=False, default_factory=dict)
    """Term id -> (its largest impact, the rows of its `_LEADERS` largest impacts, ascending), kept like
    `_impacts`: the bound and the threshold probe of the pruned top-k."""
    _avg_len: float = field(init=False, repr=False, default=1.0)

    def __post_init__(self) -> None:
        n_docs = self.size
        object.__setattr__(self, "_avg_len", max(1.0, float(self.lengths.sum()) / n_docs) if n_docs else 1.0)

    def impacts(self, t: int) -> np.ndarray:
        """float64 term scores of term id `t`'s postings, under the statistics of every row."""
        cached = self._impacts.get(t)
        if cached is None:
            lo, hi = self.indptr[t], self.indptr[t + 1]
            rows = self.indices[lo:hi]
            cached = bm25_idf(self.size, int(hi - lo)) * _norm(self.data[lo:hi], self.lengths[rows], self._avg_len)
            self._impacts[t] = cached
        return cached

    def leaders(self, t: int) -> tuple[float, np.ndarray]:
        """(largest impact, rows ascending of the `_LEADERS` largest impacts) of term id `t`'s postings."""
        cached = self._leaders.get(t)
        if cached is None:
            impacts = self.impacts(t)
            rows = self.indices[self.indptr[t] : self.indptr[t + 1]]
            if len(rows) > _LEADERS:
                rows = rows[np.argpartition(-impacts, _LEADERS - 1)[:_LEADERS]]
            cached = (float(impacts.max()), np.sort(rows))
            self._leaders[t] = cached
        return cached

    @property
    def size(self) -> int:
        return len(self.lengths)

    @classmethod
    def build(cls, docs: Iterable[Sequence[str]], tokenize: Callable[[str], list[str]]) -> BM25Index:
        """`docs` yields (title, summary, content) per row.

        A field's tokens are repeated `weight` times, so one C-level `Counter` yields the weighted counts
        (and their sum is the weighted length)."""
        return cls.from_counts(weighted_counts(fields, tokenize) for fields in docs)

    @classmethod
    def from_counts(cls, rows: Iterable[Mapping[str, float]]) -> BM25Index:
        """The index of rows given as their weighted term counts; a row's length is the sum of its counts.

        Term ids are the terms' ranks in code point order, so an index is the same however its rows' counts
        were found (tokenised whole, or an earlier row's counts with its edited lines' added and removed).
        Ids come from `dict.setdefault` with a running counter (sparse, but assigned without Python code per
        term) and are ranked by one sort.
        """
        vocab: dict[str, int] = {}
        next_id = itertools.count()
        terms, rows_of, counts, lengths = array("q"), array("i"), array("f"), array("d")
        for row, weighted in enumerate(rows):
            lengths.append(sum(weighted.values()))
            terms.extend(map(vocab.setdefault, weighted, next_id))
            counts.extend(weighted.values())
            rows_of.extend(itertools.repeat(row, len(weighted)))
        ordered = sorted(vocab)
        sparse_of_rank = np.fromiter(map(vocab.__getitem__, ordered), np.int64, len(ordered))
        by_sparse = np.argsort(sparse_of_rank)
        ids = by_sparse[np.searchsorted(sparse_of_rank[by_sparse], np.frombuffer(terms, dtype=np.int64))] if len(terms) else np.empty(0, np.int64)
        order = np.argsort(ids, kind="stable")  # stable: rows stay ascending inside each term
        return cls(
            vocab=dict(zip(ordered, range(len(ordered)))),
            indptr=np.concatenate([[0], np.cumsum(np.bincount(ids, minlength=len(ordered)))]).astype(np.int64),
            indices=np.frombuffer(rows_of, dtype=np.int32)[order],
            data=np.frombuffer(counts, dtype=np.float32)[order],
            lengths=np.frombuffer(lengths, dtype=np.float64).copy(),
        )

    def idf(self, term: str) -> float:
        """The term's IDF over every row (a term in no row gets the largest)."""
        t = self.vocab.get(term)
        return bm25_idf(self.size, 0 if t is None else int(self.indptr[t + 1] - self.indptr[t]))

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        t = self.vocab.get(term)
        if t is None:
            return np.empty(0, np.int32), np.empty(0, np.float32)
        lo, hi = self.indptr[t], self.indptr[t + 1]
        return self.indices[lo:hi], self.data[lo:hi]

    def score(self, terms: Sequence[str], mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(rows ascending, scores > 0) for the distinct query `terms`, statistics over `mask`."""
        totals = self.totals(terms, mask)
        matched = np.flatnonzero(totals > 0)
        return matched.astype(np.int32), totals[matched]

    def top(self, terms: Sequence[str], k: int, mask: np.ndarray | None = None, group: Callable[[int], Hashable] | None = None) -> list[Ranked]:
        """`top_ranked(*self.score(terms, mask), k, group)` without listing every matching row: only rows
        scoring at least a cheap lower bound of the k-th best score are ranked."""
        if k <= 0:
            return []
        if mask is not None and np.count_nonzero(mask) == self.size:
            mask = None
        if mask is None:
            pruned = self._top_by_bounds(terms, k, group)
            if pruned is not None:
                return pruned
        totals = self.totals(terms, mask)
        want = k
        while True:
            bound = max(_at_most_kth(totals, want), _SMALLEST)
            rows = np.flatnonzero(totals >= bound)
            ranked = top_ranked(rows, totals[rows], k, group)
            if len(ranked) >= k or bound == _SMALLEST:
                return ranked
            want *= 4  # groups repeat among the best rows: look further down

    def totals(self, terms: Sequence[str], mask: np.ndarray | None = None) -> np.ndarray:
        """Every row's score (0 where no term matches), float64.

        Per-row sums are accumulated by one `bincount` over the terms' concatenated postings, in term
        order, so a score is the same float whichever path computed it.
        """
        if mask is not None and np.count_nonzero(mask) == self.size:
            mask = None  # every row readable: the precomputed statistics hold
        hits = self._unmasked(terms) if mask is None else self._masked(terms, mask)
        if not hits:
            return np.zeros(self.size)
        rows, scores = zip(*hits)
        return row_sums(np.concatenate(rows), np.concatenate(scores), self.size)

    def _top_by_bounds(self, terms: Sequence[str], k: int, group: Callable[[int], Hashable] | None) -> list[Ranked] | None:
        """The unfiltered `top`, pruned by each term's largest impact (module docstring); None when the
        query's postings are too few to be worth it or the probe finds fewer than k rows (groups)."""
        ids = [t for t in map(self.vocab.get, terms) if t is not None and self.indptr[t + 1] > self.indptr[t]]
        if not ids or int(sum(self.indptr[t + 1] - self.indptr[t] for t in ids)) < PRUNE_MIN_POSTINGS:
            return None
        lists = [(self.indices[self.indptr[t] : self.indptr[t + 1]], self.impacts(t)) for t in ids]
        leaders = [self.leaders(t) for t in ids]
        bounds = [bound for bound, _ in leaders]
        # threshold: the k-th best exact score among the rows where the two terms of the largest impacts have theirs
        lead = sorted(range(len(ids)), key=lambda i: -bounds[i])[:2]
        probe = np.unique(np.concatenate([leaders[i][1] for i in lead]))
        found = top_ranked(probe, _exact_scores(lists, probe), k, group)
        if len(found) < k:
            return None
        threshold = found[-1].score * (1 - _SLACK)
        # the weakest terms whose bounds together stay below the threshold: a row needs another term
        by_bound = sorted(range(len(ids)), key=lambda i: bounds[i])
        weak: list[int] = []
        while len(weak) < len(ids) - 1 and sum(bounds[i] for i in weak) + bounds[by_bound[len(weak)]] < threshold:
            weak.append(by_bound[len(weak)])
        strong = [lists[i] for i in by_bound[len(weak) :]]
        partial = row_sums(np.concatenate([rows for rows, _ in strong]), np.concatenate([w for _, w in strong]), self.size)
        rows = np.flatnonzero(partial >= threshold - sum(bounds[i] for i in weak))
        while weak and len(rows) * _LOOKUP_COST > len(lists[weak[-1]][0]):  # many rows in reach: add a term to all
            term_rows, impacts = lists[weak.pop()]
            partial[term_rows] += impacts
            # a row out of reach stays out: it gained at most the term's bound, which the cut now counts
            rows = rows[partial[rows] >= threshold - sum(bounds[i] for i in weak)]
        partial = partial[rows]
        if weak and len(rows) > _LEADERS:  # a better threshold from the rows of the best partial scores
            best = rows[np.sort(np.argpartition(-partial, _LEADERS - 1)[:_LEADERS])]
            found = top_ranked(best, _exact_scores(lists, best), k, group)
            if len(found) >= k:
                threshold = max(threshold, found[-1].score * (1 - _SLACK))
        while weak:  # the remaining weak terms, strongest first, looked up for the rows still in reach
            partial = partial + _impacts_at(lists[weak.pop()], rows)
            keep = partial >= threshold - sum(bounds[i] for i in weak)
            rows, partial = rows[keep], partial[keep]
        return top_ranked(rows, _exact_scores(lists, rows), k, group)

    def _unmasked(self, terms: Sequence[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        out = []
        for term in terms:
            t = self.vocab.get(term)
            if t is not None:
                lo, hi = self.indptr[t], self.indptr[t + 1]
                out.append((self.indices[lo:hi], self.impacts(t)))
        return out

    def _masked(self, terms: Sequence[str], mask: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        n_docs = int(np.count_nonzero(mask))
        if n_docs == 0:
            return []
        avg_len = max(1.0, float(self.lengths[mask].sum()) / n_docs)
        out = []
        for term in terms:
            rows, tf = self.postings(term)
            keep = mask[rows]
            rows, tf = rows[keep], tf[keep]
            if len(rows):
                out.append((rows, bm25_idf(n_docs, len(rows)) * _norm(tf, self.lengths[rows], avg_len)))
        return out


_SMALLEST = float(np.nextafter(0.0, 1.0))
"""`totals >= _SMALLEST` is `totals > 0`."""
_BLOCK = 64
PRUNE_MIN_POSTINGS = 20_000
"""Postings an unfiltered top-k must touch before it is pruned by bounds: below, summing them all is cheap."""
_LEADERS = 128
"""Rows per term, of its largest impacts, whose exact scores set the pruning threshold."""
_SLACK = 1e-9
"""Relative margin on the threshold: bounds summed in another order may differ from the scores in the last bits."""
_LOOKUP_COST = 8
"""Looking one row up in a term's postings costs about this many postings added to every row's sum."""


def row_sums(rows: np.ndarray, weights: np.ndarray, size: int) -> np.ndarray:
    """Each of `size` rows' sum of the `weights` at its positions in `rows` (float64): `np.bincount` with both
    inputs cast first. Given int32 rows and float32 weights together, numpy's bincount takes a path 20 times
    slower than with either one cast (30 million postings: 4.5 s against 0.18 s); its sums are the same."""
    sums = np.bincount(np.asarray(rows, dtype=np.intp), weights=np.asarray(weights, dtype=np.float64), minlength=size)
    return sums.astype(np.float64, copy=False)  # no rows at all: bincount gives integer zeros


def _impacts_at(postings: tuple[np.ndarray, np.ndarray], rows: np.ndarray) -> np.ndarray:
    """One term's impact at each of `rows` (ascending), 0.0 where the term does not occur.

    `rows` are searched as the postings' own dtype: int64 rows in int32 postings would make `searchsorted`
    cast the whole postings list on every call (most of the pruned top-k's time on long lists)."""
    term_rows, impacts = postings
    rows = rows.astype(term_rows.dtype, copy=False)
    at = np.searchsorted(term_rows, rows)
    return impacts.take(at, mode="clip") * (term_rows.take(at, mode="clip") == rows)  # x * 1.0 and x * 0.0 are exact


def _exact_scores(lists: Sequence[tuple[np.ndarray, np.ndarray]], rows: np.ndarray) -> np.ndarray:
    """The scores `totals` gives `rows`: the same additions in the same (term) order, 0.0 for an absent term
    changing no sum."""
    scores = np.zeros(len(rows))
    for postings in lists:
        scores += _impacts_at(postings, rows)
    return scores


def _at_most_kth(values: np.ndarray, k: int) -> float:
    """A value no larger than the k-th largest of `values` (-inf if unknown), at the cost of one pass:
    the k-th largest of the maxima of blocks of `_BLOCK` values, as k distinct values reach it."""
    blocks = len(values) // _BLOCK
    if blocks <= k:
        return -math.inf
    maxima = values[: blocks * _BLOCK].reshape(blocks, _BLOCK).max(axis=1)
    return float(np.partition(maxima, blocks - k)[blocks - k])


def bm25_idf(n_docs: int, df: int) -> float:
    """The reference's IDF: log(1 + (N - df + 0.5) / (df + 0.5))."""
    return math.log(1 + (n_docs - df + 0.5) / (df + 0.5))


def _norm(tf: np.ndarray, lengths: np.ndarray, avg_len: float) -> np.ndarray:
    tf = tf.astype(np.float64)
    return tf * (K1 + 1) / (tf + K1 * (1 - B + B * lengths / avg_len))


def top_ranked(rows: np.ndarray, scores: np.ndarray, k: int, group: Callable[[int], Hashable] | None = None) -> list[Ranked]:
    """The best `k` by score, ties by row order; with `group`, only the first (best) row of each group
    counts, e.g. one question per chunk."""
    if k <= 0:
        return []
    want = k
    while True:
        sel_rows, sel_scores = rows, scores
        if len(rows) > want:
            # every row scoring at least the want-th best survives, so ties at the cut are all kept
            kth = np.partition(scores, len(scores) - want)[len(scores) - want]
            keep = scores >= kth
            sel_rows, sel_scores = rows[keep], scores[keep]
        order = np.lexsort((sel_rows, -sel_scores))
        out: list[Ranked] = []
        seen: set[Hashable] = set()
        for i in order:
            row = int(sel_rows[i])
            if group is not None:
                g = group(row)
                if g in seen:
                    continue
                seen.add(g)
            out.append(Ranked(row, float(sel_scores[i])))
            if len(out) >= k:
                return out
        if len(sel_rows) == len(rows):
            return out
        want *= 4


def from_csc(
    terms: Sequence[str], indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, n_docs: int, lengths: np.ndarray | None = None
) -> BM25Index:
    """An index over stored postings laid end to end (term t's are `indices[indptr[t]:indptr[t+1]]`),
    used as they are: no copy when they are already int32 / float32.

    Every token adds its field weight to exactly one term's count and to the document length, so the
    lengths are the per-row sums of the weights; stored `lengths` spare reading every posting to sum them.
    """
    indices = np.asarray(indices, dtype=np.int32)
    data = np.asarray(data, dtype=np.float32)
    if lengths is None:
        lengths = row_sums(indices, data, n_docs)
    elif len(lengths) != n_docs:
        raise ValueError(f"{len(lengths)} stored document lengths for {n_docs} rows")
    vocab = dict(zip(terms, range(len(terms))))
    return BM25Index(vocab=vocab, indptr=np.asarray(indptr, dtype=np.int64), indices=indices, data=data, lengths=lengths)


def weighted_counts(fields: Sequence[str], tokenize: Callable[[str], list[str]]) -> Counter[str]:
    """A row's term counts, each field's tokens counted `FIELD_WEIGHTS` times."""
    tokens: list[str] = []
    for weight, text in zip(FIELD_WEIGHTS, fields):
        if text:
            tokens += tokenize(text) * weight
    return Counter(tokens)


def postings(index: BM25Index) -> tuple[list[str], list[np.ndarray], list[np.ndarray]]:
    """(terms, rows per term, weights per term) in term-id order: what `text.lexical.to_table` stores."""
    terms = [""] * len(index.vocab)
    for term, t in index.vocab.items():
        terms[t] = term
    cuts = index.indptr.tolist()
    return (
        terms,
        [index.indices[lo:hi] for lo, hi in zip(cuts, cuts[1:])],
        [index.data[lo:hi] for lo, hi in zip(cuts, cuts[1:])],
    )
