"""The corpus scan reads nothing outside the corpus root, whatever links it holds, opens nothing but regular
files, and makes every failure of one file that file's own error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from petrichor_pipeline.sources import corpus as corpus_module
from petrichor_pipeline.sources.corpus import BAD_FOLDER_NAME, HARD_LINK, KB_REFUSED, OUTSIDE_LINK, SourceError, scan_corpus
from tests.hostile.corpus import HOSTILE, KB, OUTSIDE_SECRET, unreadable_even_for_root, write_unbuildable_files
from tests.sources.helpers import write

UNBUILDABLE = ("bad-name-\\xff.md", "bad-date.md", "fifo.md", "socket.md", "device.md", "hard-link.md", "unreadable.md")


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
    settings_error, article_error = scan.errors
    assert settings_error.path == "kb/_kb.yaml" and OUTSIDE_LINK in settings_error.reason
    assert article_error == SourceError("kb/a.md", KB_REFUSED.format(settings="kb/_kb.yaml"))


def _unbuildable(tmp_path: Path) -> Path:
    corpus, outside = tmp_path / "corpus", tmp_path / "outside"
    write(outside, "passwd", OUTSIDE_SECRET + "\n")
    write(corpus, "kb/good.md", "# Good\n\nThe tide gauge reads true.\n")
    write_unbuildable_files(corpus / "kb", outside / "passwd")
    return corpus


def test_each_unbuildable_file_is_its_own_error_and_the_rest_is_read(tmp_path: Path) -> None:
    corpus = _unbuildable(tmp_path)
    with unreadable_even_for_root(corpus):
        scan = scan_corpus(corpus)  # returns: a FIFO is never opened, so nothing waits for a writer
    assert [a.path for a in scan.articles] == ["kb/bad-date-unknown-key.md", "kb/good.md"]
    assert scan.articles[0].warnings == ("unknown front matter key 'reviewed' ignored",)
    reasons = {e.path: e.reason for e in scan.errors}
    assert len(reasons) == len(scan.errors)  # one error per file
    expected = {path.replace(KB, "kb", 1): e.says for path, e in HOSTILE.items() if e.outcome == "error"}
    unbuildable = {p: says for p, says in expected.items() if p.removeprefix("kb/") in UNBUILDABLE}
    assert reasons.keys() == unbuildable.keys()
    for path, says in unbuildable.items():
        assert says in reasons[path] and reasons[path].isascii(), (path, reasons[path])
    assert all(OUTSIDE_SECRET not in a.content for a in scan.articles)


def test_a_hard_link_is_read_when_every_name_of_the_file_is_inside_the_corpus(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    write(corpus, "kb/a.md", "# A\n\nalpha\n")
    os.link(corpus / "kb" / "a.md", corpus / "kb" / "a-again.md")
    os.symlink(corpus / "kb" / "a.md", corpus / "kb" / "a-linked.md")  # a third path, not a third name
    scan = scan_corpus(corpus)
    assert scan.errors == () and [a.path for a in scan.articles] == ["kb/a-again.md", "kb/a-linked.md", "kb/a.md"]
    # a third name outside: now no name can be trusted to be the corpus's own
    os.link(corpus / "kb" / "a.md", tmp_path / "outside-name")
    scan = scan_corpus(corpus)
    assert scan.articles == () and len(scan.errors) == 3
    assert all(e.reason == HARD_LINK.format(names=3, inside=2) for e in scan.errors)


def test_a_symbolic_link_out_of_the_corpus_does_not_vouch_for_a_hard_link(tmp_path: Path) -> None:
    corpus, outside = tmp_path / "corpus", tmp_path / "outside"
    secret = write(outside, "passwd", OUTSIDE_SECRET + "\n")
    write(corpus, "kb/a.md", "# A\n\nalpha\n")
    os.link(secret, corpus / "kb" / "hard.md")
    os.symlink(secret, corpus / "kb" / "soft.md")  # resolves to the outside name: counted as no name inside
    scan = scan_corpus(corpus)
    assert [a.path for a in scan.articles] == ["kb/a.md"]
    assert {e.path: e.reason for e in scan.errors} == {"kb/hard.md": HARD_LINK.format(names=2, inside=1), "kb/soft.md": OUTSIDE_LINK}


@pytest.mark.parametrize("settings", ["tenant: acme\nreviewed: 2020-13-45\n", "tenant: acme\nreviewed: 2020-02-30 10:00:00\n"])
def test_an_impossible_date_in_kb_settings_is_text_under_a_key_they_do_not_use(tmp_path: Path, settings: str) -> None:
    corpus = tmp_path / "corpus"
    write(corpus, "kb/_kb.yaml", settings)
    write(corpus, "kb/a.md", "---\nshare_expires_at: 2030-01-02\n---\n\nalpha\n")
    scan = scan_corpus(corpus)
    assert scan.errors == () and scan.kbs["kb"].tenant == "acme"
    assert scan.articles[0].tenant == "acme" and scan.articles[0].share_expires_at == "2030-01-02"  # real dates still read


@pytest.mark.parametrize(
    "settings",
    ["tenant: 2020-13-45-not: [", "[" * 1000, "tenant: 2021-01-01\n", "- a list\n", b"tenant: \xff\n"],
    ids=["broken", "deep", "date-tenant", "list", "bad-utf8"],
)
def test_broken_kb_settings_refuse_every_article_of_that_kb_and_no_other(tmp_path: Path, settings) -> None:
    # Defaults would give the kb's articles the default tenant, maybe other readers than its settings meant.
    corpus = tmp_path / "corpus"
    write(corpus, "kb/_kb.yaml", settings)
    write(corpus, "kb/a.md", "# A\n\nalpha\n")
    write(corpus, "kb/deep/b.md", "# B\n\nbeta\n")
    write(corpus, "other/c.md", "# C\n\ngamma\n")
    scan = scan_corpus(corpus)
    assert [a.path for a in scan.articles] == ["other/c.md"] and list(scan.kbs) == ["other"]
    reasons = {e.path: e.reason for e in scan.errors}
    assert reasons.keys() == {"kb/_kb.yaml", "kb/a.md", "kb/deep/b.md"}
    assert reasons["kb/_kb.yaml"].startswith("broken knowledge-base settings: ") and reasons["kb/_kb.yaml"].endswith("2 article(s) left out")
    assert reasons["kb/a.md"] == reasons["kb/deep/b.md"] == KB_REFUSED.format(settings="kb/_kb.yaml")


def test_a_folder_named_in_bytes_that_are_not_utf8_is_one_error(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    write(corpus, "kb/a.md", "# A\n\nalpha\n")
    write(corpus, os.fsdecode(b"kb/sub-\xfe/b.md"), "# B\n\nbeta\n")
    write(corpus, os.fsdecode(b"kb-\xfe/c.md"), "# C\n\ngamma\n")
    scan = scan_corpus(corpus)
    assert [a.path for a in scan.articles] == ["kb/a.md"] and list(scan.kbs) == ["kb"]
    assert {(e.path, e.reason) for e in scan.errors} == {("kb/sub-\\xfe", BAD_FOLDER_NAME), ("kb-\\xfe", BAD_FOLDER_NAME)}


def test_any_unforeseen_failure_of_one_file_is_that_files_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = tmp_path / "corpus"
    write(corpus, "kb/a.md", "# A\n\nalpha\n")
    write(corpus, "kb/boom.md", "# Boom\n\nbeta\n")
    real = corpus_module.read_markdown

    def read(data: bytes, stem: str):
        if stem == "boom":
            raise KeyError("surprise \u00e9")
        return real(data, stem)

    monkeypatch.setattr(corpus_module, "read_markdown", read)
    scan = scan_corpus(corpus)
    assert [a.path for a in scan.articles] == ["kb/a.md"]
    assert [(e.path, e.reason) for e in scan.errors] == [("kb/boom.md", "could not be read: KeyError: 'surprise \\xe9'")]


def test_a_folder_that_cannot_be_listed_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = tmp_path / "corpus"
    write(corpus, "kb/a.md", "# A\n\nalpha\n")
    write(corpus, "kb/locked/b.md", "# B\n\nbeta\n")
    real = os.scandir

    def scandir(path=".", *args):
        if Path(os.fsdecode(path)).name == "locked":
            raise PermissionError(13, "Permission denied", os.fsdecode(path))
        return real(path, *args)

    monkeypatch.setattr(os, "scandir", scandir)
    scan = scan_corpus(corpus)
    assert [a.path for a in scan.articles] == ["kb/a.md"]
    assert [(e.path, e.reason) for e in scan.errors] == [("kb/locked", "folder not readable: Permission denied; nothing under it is read")]
