"""Hybrid recall over a loaded snapshot: `RecallIndex.build(...)` once per snapshot, then
`search(index, query, scope=...)` per request."""

from petrichor_serving.recall.access import Scope
from petrichor_serving.recall.config import DEFAULT_CONFIG, RecallConfig
from petrichor_serving.recall.index import RecallIndex
from petrichor_serving.recall.pipeline import Candidate, SearchResult, search
from petrichor_serving.recall.query import Query

__all__ = ["DEFAULT_CONFIG", "Candidate", "Query", "RecallConfig", "RecallIndex", "Scope", "SearchResult", "search"]
