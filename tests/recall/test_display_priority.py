"""Whose title and snippet a chunk found by several routes shows is each route's declared `display_priority`
on its registry entry, never its name."""

from __future__ import annotations

import dataclasses

from petrichor_serving.recall import routes
from petrichor_serving.recall.fusion import fuse
from petrichor_serving.recall.hits import Hit, Window
from petrichor_serving.recall.routes.base import CHUNK_TEXT


def _hit(route: str, snippet: str, window: Window | None = None) -> Hit:
    return Hit(
        kb_id="k",
        article_id="a",
        title=snippet,
        path="",
        heading_path=(),
        snippet=snippet,
        content=snippet,
        score=1.0,
        routes=[route],
        chunk_id="c1",
        window=window,
    )


def _shown(*hits: Hit) -> str:
    """The snippet the merged hit shows when each hit comes first in a list of its own, in this order."""
    [merged] = fuse([[h] for h in hits])
    return merged.snippet


def test_the_bundled_chunk_routes_declare_their_priority():
    priorities = routes.display_priorities()
    assert priorities[routes.CHUNK_BM25] == priorities[routes.CHUNK_VECTOR] == CHUNK_TEXT
    assert priorities[routes.QUESTION_BM25] == priorities[routes.QUESTION_VECTOR] == 0
    assert _shown(_hit(routes.QUESTION_BM25, "question"), _hit(routes.CHUNK_BM25, "chunk")) == "chunk"
    assert _shown(_hit(routes.CHUNK_BM25, "chunk"), _hit(routes.QUESTION_BM25, "question")) == "chunk"


def test_a_route_shows_its_text_by_its_declared_priority_whatever_its_name(monkeypatch):
    """A registered route named unlike `chunk_*` that declares the chunk-text priority wins over a question;
    the bundled `chunk_bm25` declared at priority 0 no longer does."""
    passage = dataclasses.replace(routes.ROUTES[0], name="passage_text", display_priority=CHUNK_TEXT)
    demoted = tuple(dataclasses.replace(r, display_priority=0) if r.name == routes.CHUNK_BM25 else r for r in routes.ROUTES)
    monkeypatch.setattr(routes, "ROUTES", (*demoted, passage))
    assert _shown(_hit(routes.QUESTION_BM25, "question"), _hit("passage_text", "passage")) == "passage"
    assert _shown(_hit(routes.QUESTION_BM25, "question"), _hit(routes.CHUNK_BM25, "chunk")) == "question"


def test_a_matched_window_outranks_every_route():
    window = Window("w1", 0, 5)
    assert _shown(_hit(routes.CHUNK_BM25, "chunk"), _hit(routes.WINDOW_BM25, "window", window)) == "window"
    assert _shown(_hit(routes.WINDOW_BM25, "window", window), _hit(routes.CHUNK_VECTOR, "chunk")) == "window"
