"""Hybrid recall over a loaded snapshot: `RecallIndex.build(...)` once per snapshot, then
`search(index, query, scope=...)` per request."""

from petrichor_serving.recall.access import Scope
from petrichor_serving.recall.index import RecallIndex
from petrichor_serving.recall.options import SearchOptions
from petrichor_serving.recall.pipeline import Candidate, SearchResult, search

__all__ = ["Candidate", "RecallIndex", "Scope", "SearchOptions", "SearchResult", "search"]
