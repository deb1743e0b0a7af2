"""The `wiki_candidates` table holds each contribution nested; a warehouse that still holds them as JSON is
read with the same contributions and digests, and its step rewrites the file nested."""

import json

import pyarrow as pa
from hypothesis import given, settings

from petrichor_core.contract.schemas import CANDIDATE_SCHEMA, LEGACY_CANDIDATE_SCHEMA
from petrichor_pipeline.builder.contributions import read_contributions, upgrade_legacy
from petrichor_pipeline.builder.warehouse import Warehouse
from petrichor_pipeline.knowledge.aggregate import aggregate_contributions, aggregate_wiki
from petrichor_pipeline.knowledge.wiki import ArticleKnowledge, contribution_digest
from tests.knowledge.test_aggregate_reuse import articles, corpus


def _legacy(contributions: list[ArticleKnowledge]) -> pa.Table:
    rows = [
        {"article_id": a.article_id, "kb_id": a.kb_id, "tenant": a.tenant, "knowledge_json": json.dumps(a.to_dict(), ensure_ascii=False)}
        for a in contributions
    ]
    return pa.Table.from_pylist(rows, schema=LEGACY_CANDIDATE_SCHEMA)


@settings(max_examples=40, deadline=None)
@given(articles)
def test_a_row_gives_back_its_contribution(spec):
    contributions = corpus(spec)
    table = pa.Table.from_pylist([a.to_row() for a in contributions], schema=CANDIDATE_SCHEMA)
    assert [ArticleKnowledge.from_row(r) for r in table.to_pylist()] == contributions
    digests = [contribution_digest(json.dumps(a.to_dict(), ensure_ascii=False)) for a in contributions]
    assert table.column("digest").to_pylist() == digests


def test_a_legacy_bucket_reads_as_nested_rows_and_its_step_rewrites_it(tmp_path):
    contributions = corpus({"a1": (("entity-redis", "concept-缓存"), 1, "ops"), "a2": (("entity-redis",), 2, "ops"), "a3": ((), 3, "dev")})
    wh = Warehouse(tmp_path)
    wh.write("wiki_candidates", _legacy(contributions), "00")
    assert wh.read("wiki_candidates", "00", CANDIDATE_SCHEMA) is None  # the nested schema cannot read it as it is

    legacy = read_contributions(wh, "00")
    expected = pa.Table.from_pylist([a.to_row() for a in contributions], schema=CANDIDATE_SCHEMA)
    assert legacy.equals(expected)
    assert aggregate_contributions(legacy).tables == aggregate_wiki(contributions).tables

    upgrade_legacy(wh, "00")
    assert wh.read("wiki_candidates", "00").column_names == CANDIDATE_SCHEMA.names
    assert read_contributions(wh, "00").equals(expected)
    upgrade_legacy(wh, "01")  # no file: nothing to do
    assert read_contributions(wh, "01") is None
