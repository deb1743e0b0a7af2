"""Snapshot assembly re-tokenises only changed buckets, and the merged lexical index equals a whole build."""

from __future__ import annotations

import shutil

import pytest

from petrichor_pipeline.build import lexical_parts
from petrichor_pipeline.build.publish import _bucket_tables, assemble_tables
from petrichor_pipeline.config import BUCKETS
from petrichor_pipeline.resources import build_context
from petrichor_pipeline.text import lexical
from tests.conftest import isolated_env

pytestmark = pytest.mark.slow  # copies the built corpus


def test_merged_postings_equal_a_whole_build_and_unchanged_buckets_are_reused(built_corpus, tmp_path, monkeypatch):
    data = tmp_path / "data"
    shutil.copytree(built_corpus.data_dir / "warehouse", data / "warehouse", ignore=shutil.ignore_patterns("embedding_cache"))
    isolated_env(monkeypatch, data, built_corpus.corpus_dir, tmp_path / "home")
    ctx = build_context(str(data))
    tables = assemble_tables(ctx)
    whole = lexical.to_table(lexical.build_indexes(tables, ctx.settings.lexical_tokenizer))
    assert tables["lexical_index"].equals(whole)

    # a bucket whose articles were rebuilt is re-tokenised; every other bucket reads its cached postings
    touched = next(b for b in BUCKETS if _bucket_tables(ctx, b)["chunks"].num_rows)
    sidecar = ctx.warehouse.read_json("chunks", touched)
    aid = next(iter(sidecar["keys"]))
    sidecar["keys"][aid] += "-rebuilt"
    ctx.warehouse.write_json("chunks", touched, sidecar)
    reused = {b: lexical_parts.bucket_postings(ctx.warehouse, b, _bucket_tables(ctx, b), ctx.settings.lexical_tokenizer)[1] for b in BUCKETS}
    assert [b for b, hit in reused.items() if not hit] == [touched]
    assert assemble_tables(ctx)["lexical_index"].equals(whole)
