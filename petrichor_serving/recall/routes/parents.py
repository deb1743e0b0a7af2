"""Child-window hits scored as their parent chunk, shared by the window routes (seed 003 父子分块).

A window route ranks small windows, but search returns chunks: the windows of one chunk become one chunk
hit carrying its best window (its offsets and snippet). The chunk's score is its best window's
(`max`) or the sum of its `SUM_TOP` best windows' (`sum`, which favours a chunk that matches in several
places); `RecallConfig.parent_score` chooses.
"""

from __future__ import annotations

from collections.abc import Iterable

from petrichor_serving.recall.hits import Hit
from petrichor_serving.recall.routes.base import RouteContext

FETCH_PER_HIT = 4
"""Windows fetched per chunk hit wanted: several windows of one chunk can crowd the top."""
SUM_TOP = 2
"""Best windows of a chunk that `sum` adds up."""
PARENT_SCORES = ("max", "sum")


def parent_hits(ctx: RouteContext, ranked: Iterable[tuple[int, float]], route: str, limit: int) -> list[Hit]:
    """Chunk hits from (window row, score) pairs best first: one per chunk, at most `limit`."""
    windows = ctx.index.windows
    best: dict[int, tuple[int, list[float]]] = {}
    order: list[int] = []
    for row, score in ranked:
        chunk_row = int(windows.chunk_rows[row])
        if chunk_row < 0:
            continue
        entry = best.get(chunk_row)
        if entry is None:
            best[chunk_row] = (row, [score])
            order.append(chunk_row)
        elif len(entry[1]) < SUM_TOP:
            entry[1].append(score)
    if ctx.parent_score == "sum":
        scored = [(sum(best[c][1]), i, c) for i, c in enumerate(order)]
        scored.sort(key=lambda t: (-t[0], t[1]))
    else:
        scored = [(best[c][1][0], i, c) for i, c in enumerate(order)]
    return [ctx.index.chunk_hit(chunk_row, route, score, window_row=best[chunk_row][0]) for score, _, chunk_row in scored[:limit]]
