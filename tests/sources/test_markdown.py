"""Front matter, titles and normalisation of Markdown articles, through `scan_corpus` on a temporary corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from petrichor_pipeline.sources.corpus import SourceArticle, scan_corpus
from petrichor_pipeline.sources.identity import article_id_of, article_version, bucket_of
from petrichor_pipeline.sources.markdown import first_heading

from .helpers import write


def only_article(corpus: Path) -> SourceArticle:
    scan = scan_corpus(corpus)
    assert scan.errors == ()
    assert len(scan.articles) == 1
    return scan.articles[0]


def test_front_matter_sets_every_key(corpus: Path):
    write(
        corpus,
        "kb/share.md",
        "---\n"
        "title: Shared notes\n"
        "visibility: public\n"
        "tenant: acme\n"
        'share_expires_at: "2030-01-02T03:04:05Z"\n'
        "password_protected: true\n"
        "---\n"
        "# Heading that is not the title\n\nBody.\n",
    )
    art = only_article(corpus)
    assert art.title == "Shared notes"
    assert art.visibility == "public"
    assert art.tenant == "acme"
    assert art.share_expires_at == "2030-01-02T03:04:05Z"
    assert art.password_protected is True
    assert art.content == "# Heading that is not the title\n\nBody.\n"
    assert art.warnings == ()
    assert art.kind == "markdown"


def test_defaults_without_front_matter(corpus: Path):
    write(corpus, "kb/guides/install.md", "Intro line.\n\n# Install\n\nSteps.\n")
    art = only_article(corpus)
    assert art.path == "kb/guides/install.md"
    assert art.kb_id == "kb"
    assert art.article_id == article_id_of("kb/guides/install.md")
    assert art.bucket == bucket_of(art.article_id)
    assert art.title == "Install"
    assert art.visibility == "private"
    assert art.tenant == "default"
    assert art.share_expires_at is None
    assert art.password_protected is False
    assert art.content == "Intro line.\n\n# Install\n\nSteps.\n"


def test_yaml_timestamp_becomes_iso_text(corpus: Path):
    write(corpus, "kb/a.md", "---\nshare_expires_at: 2030-01-02T03:04:05Z\n---\nBody\n")
    write(corpus, "kb/b.md", "---\nshare_expires_at: 2030-01-02\n---\nBody\n")
    a, b = scan_corpus(corpus).articles
    assert a.share_expires_at == "2030-01-02T03:04:05+00:00"
    assert b.share_expires_at == "2030-01-02"


def test_unknown_front_matter_keys_warn_and_are_dropped(corpus: Path):
    write(corpus, "kb/a.md", "---\ntags: [x]\nauthor: me\nvisibility: Public\n---\nBody\n")
    art = only_article(corpus)
    assert art.visibility == "public"
    assert art.warnings == ("unknown front matter key 'author' ignored", "unknown front matter key 'tags' ignored")


def test_title_skips_fenced_hashes_and_falls_back_to_the_stem(corpus: Path):
    write(corpus, "kb/fenced.md", "```sh\n# not a title\n```\n\n## Level two\n\n# Real Title #\n")
    write(corpus, "kb/no-heading.md", "Just text.\n")
    fenced, plain = scan_corpus(corpus).articles
    assert fenced.title == "Real Title"
    assert plain.title == "no-heading"


def test_kb_settings_give_name_and_default_tenant(corpus: Path):
    write(corpus, "acme-docs/_kb.yaml", "name: ACME Docs\ntenant: acme\n")
    write(corpus, "acme-docs/_compile-guide.md", "# Guide\r\n\r\nAudience: operators.\r\n")
    write(corpus, "acme-docs/a.md", "# A\n")
    write(corpus, "acme-docs/b.md", "---\ntenant: other\n---\n# B\n")
    write(corpus, "plain/c.md", "# C\n")
    scan = scan_corpus(corpus)
    assert scan.errors == ()
    assert [(a.path, a.tenant) for a in scan.articles] == [
        ("acme-docs/a.md", "acme"),
        ("acme-docs/b.md", "other"),
        ("plain/c.md", "default"),
    ]
    acme, plain = scan.kbs["acme-docs"], scan.kbs["plain"]
    assert (acme.name, acme.tenant, acme.guide_raw) == ("ACME Docs", "acme", "# Guide\n\nAudience: operators.\n")
    assert (plain.name, plain.tenant, plain.guide_raw) == ("plain", "default", "")


def test_bom_crlf_and_control_characters_are_normalised(corpus: Path):
    raw = b"\xef\xbb\xbf# Title\r\n\r\nLine one\rLine\x07 two\r\n"
    write(corpus, "kb/windows.md", raw)
    write(corpus, "other/unix.md", "# Title\n\nLine one\nLine two\n")
    windows, unix = scan_corpus(corpus).articles
    assert windows.content == "# Title\n\nLine one\nLine two\n"
    assert windows.title == "Title"
    assert windows.article_version == article_version("Title", "# Title\n\nLine one\nLine two\n")
    assert windows.article_version == unix.article_version
    assert windows.source_sha256 != unix.source_sha256


def test_nul_bytes_past_the_binary_sniff_window_are_removed(corpus: Path):
    head = "# Long\n\n" + "word " * 2000
    write(corpus, "kb/long.md", head.encode() + b"tail\x00end\n")
    art = only_article(corpus)
    assert art.content.endswith("tailend\n")
    assert "\x00" not in art.content


def test_front_matter_body_offsets_are_into_the_normalised_body(corpus: Path):
    write(corpus, "kb/a.md", "---\r\ntitle: T\r\n---\r\n\r\nFirst paragraph.\r\n")
    art = only_article(corpus)
    assert art.content == "\nFirst paragraph.\n"
    start = art.content.index("First")
    assert art.content[start : start + 5] == "First"


@pytest.mark.parametrize(
    ("front", "reason"),
    [
        ("visibility: secret", "invalid visibility: 'secret' (expected private or public)"),
        ("password_protected: maybe", "invalid password_protected: 'maybe' (expected true or false)"),
        ("share_expires_at: next week", "invalid share_expires_at: 'next week' (expected an ISO 8601 date-time)"),
        ("tenant: [a, b]", "invalid tenant: ['a', 'b']"),
        ("- just\n- a list", "broken front matter: expected a mapping of keys, got list"),
    ],
)
def test_invalid_front_matter_values_are_errors(corpus: Path, front: str, reason: str):
    write(corpus, "kb/bad.md", f"---\n{front}\n---\nBody\n")
    write(corpus, "kb/good.md", "# Good\n")
    scan = scan_corpus(corpus)
    assert [(e.path, e.reason) for e in scan.errors] == [("kb/bad.md", reason)]
    assert [a.path for a in scan.articles] == ["kb/good.md"]


def test_broken_yaml_is_an_error_naming_the_parser_problem(corpus: Path):
    write(corpus, "kb/bad.md", "---\ntitle: [unclosed\n---\nBody\n")
    write(corpus, "kb/good.md", "# Good\n")
    scan = scan_corpus(corpus)
    (error,) = scan.errors
    assert error.path == "kb/bad.md"
    assert error.reason.startswith("broken front matter: ")
    assert "\n" not in error.reason
    assert [a.path for a in scan.articles] == ["kb/good.md"]


def test_front_matter_without_body_is_an_error(corpus: Path):
    write(corpus, "kb/only-meta.md", "---\ntitle: T\n---\n\n")
    (error,) = scan_corpus(corpus).errors
    assert error.reason == "no content after the front matter"


@pytest.mark.parametrize(
    ("markdown", "title"),
    [
        ("# C# and F#\n", "C# and F#"),
        ("# Closed title ##\n", "Closed title"),
        ("# **Bold** and *italic*\n", "Bold and italic"),
        ("#hashtag\n\n## Second\n\n# First h1\n", "First h1"),
        ("~~~\n# fenced\n~~~\n# After the fence\n", "After the fence"),
        ("#   \n# #\n# Real\n", "Real"),
    ],
)
def test_first_h1_title_rules(markdown: str, title: str):
    assert first_heading(markdown, max_level=1) == title
