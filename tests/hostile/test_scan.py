"""The corpus scan reads nothing outside the corpus root, whatever links it holds."""

from __future__ import annotations

import os
from pathlib import Path

from petrichor_pipeline.sources.corpus import OUTSIDE_LINK, scan_corpus
from tests.sources.helpers import write


def test_links_are_followed_only_inside_the_root(tmp_path: Path) -> None:
    corpus, outside = tmp_path / "corpus", tmp_path / "outside"
    write(outside, "passwd", "root:x:0:0:root:/root:/bin/bash\n")
    write(outside, "docs/leak.md", "# Leak\n\nroot:x:0:0\n")
    write(corpus, "kb/real/a.md", "# A\n\nalpha\n")
    write(corpus, "kb/b.md", "# B\n\nbeta\n")
    os.symlink(outside / "passwd", corpus / "kb" / "passwd.md")
    os.symlink(outside / "docs", corpus / "kb" / "docs")
    os.symlink(outside / "docs", corpus / "elsewhere")  # a whole knowledge base linked from outside
    os.symlink(corpus / "kb" / "b.md", corpus / "kb" / "real" / "b-again.md")
    os.symlink(corpus / "kb", corpus / "kb" / "real" / "up")  # a loop

    scan = scan_corpus(corpus)

    assert [a.path for a in scan.articles] == ["kb/b.md", "kb/real/a.md", "kb/real/b-again.md"]
    assert all("root:x" not in a.content for a in scan.articles)
    assert {(e.path, e.reason) for e in scan.errors} == {
        ("kb/passwd.md", OUTSIDE_LINK),
        ("kb/docs", OUTSIDE_LINK),
        ("elsewhere", OUTSIDE_LINK),
    }
    assert "kb" in scan.kbs and "elsewhere" not in scan.kbs


def test_kb_settings_linked_from_outside_are_refused(tmp_path: Path) -> None:
    corpus, outside = tmp_path / "corpus", tmp_path / "outside"
    write(outside, "settings.yaml", "tenant: acme\n")
    write(corpus, "kb/a.md", "# A\n\nalpha\n")
    os.symlink(outside / "settings.yaml", corpus / "kb" / "_kb.yaml")
    scan = scan_corpus(corpus)
    assert scan.articles == ()
    (error,) = scan.errors
    assert error.path == "kb/_kb.yaml" and OUTSIDE_LINK in error.reason
