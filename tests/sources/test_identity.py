from __future__ import annotations

import hashlib

from petrichor_core.config import BUCKETS
from petrichor_pipeline.sources.identity import article_id_of, article_version, bucket_of


def test_article_id_is_pinned_to_the_relative_path():
    assert article_id_of("petrichor-zh/guides/install.md") == "e2c03ae308c81f16"
    assert article_id_of("petrichor-zh/guides/install.md") == hashlib.sha256(b"petrichor-zh/guides/install.md").hexdigest()[:16]
    assert article_id_of("petrichor-zh/guides/install.md") != article_id_of("petrichor-en/guides/install.md")


def test_bucket_is_pinned_and_matches_the_hex_prefix_rule():
    assert bucket_of("e2c03ae308c81f16") == "08"
    for i in range(200):
        aid = article_id_of(f"kb/doc-{i}.md")
        expected = int(hashlib.sha256(aid.encode()).hexdigest()[:8], 16) % 16
        assert bucket_of(aid) == f"{expected:02x}"


def test_buckets_cover_every_partition_key():
    seen = {bucket_of(article_id_of(f"kb/doc-{i}.md")) for i in range(500)}
    assert seen == set(BUCKETS)


def test_article_version_is_sha256_of_title_newline_content():
    assert article_version("T", "body") == hashlib.sha256(b"T\nbody").hexdigest()
    assert article_version("T", "body") != article_version("T", "body ")
