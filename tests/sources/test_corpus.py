"""Layout rules and per-file failures of `scan_corpus`: every bad file is one error, the rest still load."""

from __future__ import annotations

import os
import random
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from petrichor_pipeline.sources.corpus import KB_REFUSED, scan_corpus

from .helpers import write


def errors_of(corpus: Path, **kwargs) -> dict[str, str]:
    return {e.path: e.reason for e in scan_corpus(corpus, **kwargs).errors}


def test_every_failure_is_reported_and_the_other_articles_load(corpus: Path):
    write(corpus, "kb/bad-utf8.md", b"# Title\n\ncaf\xe9 au lait\n")
    write(corpus, "kb/empty.md", b"")
    write(corpus, "kb/blank.md", " \r\n\t\n")
    write(corpus, "kb/binary.md", b"# looks like text\n\x00\x01\x02 then binary")
    write(corpus, "kb/big.md", "# Big\n\n" + "x" * 100)
    write(corpus, "kb/visibility.md", "---\nvisibility: everyone\n---\nBody\n")
    write(corpus, "kb/yaml.md", "---\ntitle: 'unterminated\n---\nBody\n")
    write(corpus, "loose.md", "# Not in a knowledge base\n")
    write(corpus, "kb/fine.md", "# Fine\n")
    write(corpus, "other/also-fine.markdown", "# Also fine\n")
    scan = scan_corpus(corpus, max_file_bytes=100)
    reasons = {e.path: e.reason for e in scan.errors}
    assert reasons.pop("kb/bad-utf8.md") == "invalid UTF-8 at byte 12"
    assert reasons.pop("kb/empty.md") == "empty file"
    assert reasons.pop("kb/blank.md") == "empty file"
    assert reasons.pop("kb/binary.md") == "binary content"
    assert reasons.pop("kb/big.md") == "file too large: 107 bytes (limit 100)"
    assert reasons.pop("kb/visibility.md").startswith("invalid visibility")
    assert reasons.pop("kb/yaml.md").startswith("broken front matter: ")
    assert reasons.pop("loose.md") == "not inside a knowledge-base folder"
    assert reasons == {}
    assert [a.path for a in scan.articles] == ["kb/fine.md", "other/also-fine.markdown"]


def test_invalid_utf8_offset_counts_raw_bytes_including_a_bom(corpus: Path):
    write(corpus, "kb/a.md", b"\xef\xbb\xbf# T\n\n\xe4\xb8\xad\xe6\x96\x87 \xc3(\n")
    # 3 (BOM) + 5 ("# T\n\n") + 6 ("中文") + 1 (" ") = 15: the lone lead byte 0xC3
    assert errors_of(corpus) == {"kb/a.md": "invalid UTF-8 at byte 15"}


def test_control_heavy_content_without_nul_is_binary(corpus: Path):
    write(corpus, "kb/a.md", bytes([0x01, 0x02, 0x03, 0x41]) * 200)
    assert errors_of(corpus) == {"kb/a.md": "binary content"}


def test_whitespace_only_after_normalisation_is_empty(corpus: Path):
    write(corpus, "kb/a.md", "\ufeff \r\n\r\t\x0b\n")
    assert errors_of(corpus) == {"kb/a.md": "empty file"}


def test_underscore_and_dot_names_are_not_articles(corpus: Path):
    write(corpus, "kb/_compile-guide.md", "# Guide\n")
    write(corpus, "kb/_kb.yaml", "name: KB\n")
    write(corpus, "kb/_drafts/wip.md", "# WIP\n")
    write(corpus, "kb/.obsidian/x.md", "# X\n")
    write(corpus, "kb/.hidden.md", "# Hidden\n")
    write(corpus, "kb/_partial.md", "# Partial\n")
    write(corpus, "kb/image.png", b"\x89PNG\r\n\x1a\n")
    write(corpus, "kb/notes.txt", "plain text\n")
    write(corpus, "_archive/old.md", "# Old\n")
    write(corpus, ".git/HEAD.md", "# Git\n")
    write(corpus, "_root-notes.md", "# Root notes\n")
    write(corpus, "kb/docs/Real.MD", "# Real\n")
    scan = scan_corpus(corpus)
    assert scan.errors == ()
    assert list(scan.kbs) == ["kb"]
    assert [a.path for a in scan.articles] == ["kb/docs/Real.MD"]


def test_broken_kb_settings_leave_that_knowledge_base_out(corpus: Path):
    write(corpus, "kb/_kb.yaml", "tenant: [not, text]\n")
    write(corpus, "kb/a.md", "# A\n")
    write(corpus, "kb/b.md", "# B\n")
    write(corpus, "ok/c.md", "# C\n")
    scan = scan_corpus(corpus)
    refused = KB_REFUSED.format(settings="kb/_kb.yaml")
    assert [(e.path, e.reason) for e in scan.errors] == [
        ("kb/_kb.yaml", "broken knowledge-base settings: tenant must be non-empty text; 2 article(s) left out"),
        ("kb/a.md", refused),
        ("kb/b.md", refused),
    ]
    assert list(scan.kbs) == ["ok"]
    assert [a.path for a in scan.articles] == ["ok/c.md"]


def test_unreadable_compile_guide_costs_only_the_guide(corpus: Path):
    write(corpus, "kb/_compile-guide.md", b"\xff\xfe")
    write(corpus, "kb/a.md", "# A\n")
    scan = scan_corpus(corpus)
    assert [(e.path, e.reason) for e in scan.errors] == [("kb/_compile-guide.md", "compile guide not used: invalid UTF-8 at byte 0")]
    assert scan.kbs["kb"].guide_raw == ""
    assert [a.path for a in scan.articles] == ["kb/a.md"]


def test_scan_order_is_sorted_and_independent_of_creation_order(tmp_path: Path):
    names = [f"kb{k}/{sub}/doc-{i}.md" for k in (2, 1) for sub in ("b", "a") for i in (10, 2, 1)]
    names += ["kb1/bad.md", "kb2/empty.md", "loose.md"]
    scans = []
    for seed in (1, 2):
        root = tmp_path / f"corpus-{seed}"
        order = names[:]
        random.Random(seed).shuffle(order)
        for name in order:
            data = b"" if name.endswith("empty.md") else b"\xff" if name.endswith("bad.md") else f"# {name}\n".encode()
            write(root, name, data)
            os.utime(root / name, (seed, seed))
        scans.append(scan_corpus(root))
    first, second = scans
    assert first == second
    paths = [a.path for a in first.articles]
    assert paths == sorted(paths) and len(paths) == 12
    assert [e.path for e in first.errors] == ["kb1/bad.md", "kb2/empty.md", "loose.md"]
    assert list(first.kbs) == ["kb1", "kb2"]


def test_article_id_follows_the_path_not_the_content(corpus: Path):
    write(corpus, "kb/a.md", "# Same\n")
    write(corpus, "kb/b.md", "# Same\n")
    a, b = scan_corpus(corpus).articles
    assert a.article_version == b.article_version
    assert a.article_id != b.article_id
    write(corpus, "kb/a.md", "# Edited\n")
    edited = scan_corpus(corpus).articles[0]
    assert edited.article_id == a.article_id
    assert edited.article_version != a.article_version


def test_missing_corpus_folder_scans_empty(tmp_path: Path):
    scan = scan_corpus(tmp_path / "absent")
    assert (scan.kbs, scan.articles, scan.errors) == ({}, (), ())


@given(st.lists(st.text(alphabet="ab.-_ 文", min_size=1, max_size=6).filter(lambda n: n not in (".", "..")), min_size=1, max_size=3))
def test_names_split_as_pathlib_splits_them(parts):
    """The scan's string helpers give what `PurePosixPath` gives for the relative paths the walk writes."""
    from pathlib import PurePosixPath

    from petrichor_pipeline.sources.corpus import _stem, _suffix

    relpath = "/".join(parts)
    assert _suffix(parts[-1]) == PurePosixPath(parts[-1]).suffix
    assert _stem(relpath) == PurePosixPath(relpath).stem
