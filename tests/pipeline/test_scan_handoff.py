"""The planning scan handed to a build's runs comes back equal, and a tag can only name a scan file."""

from __future__ import annotations

from petrichor_pipeline.builder.scan_handoff import hold_scan, read_scan, remove_scan, write_scan
from petrichor_pipeline.sources.corpus import scan_corpus


def test_a_handed_over_scan_reads_back_equal_and_is_removed(tmp_path):
    corpus = tmp_path / "corpus"
    (corpus / "kb").mkdir(parents=True)
    (corpus / "kb" / "_kb.yaml").write_text("name: KB\ntenant: acme\n", encoding="utf-8")
    (corpus / "kb" / "a.md").write_text("---\ntitle: A\n---\n# A\n\nText about 知识库.\n", encoding="utf-8")
    (corpus / "kb" / "b.md").write_bytes(b"\xff\xfe\x00broken")
    (corpus / "loose.md").write_text("outside any knowledge base\n", encoding="utf-8")
    scan = scan_corpus(corpus)
    assert scan.articles and scan.errors

    scan_id = write_scan(tmp_path / "data", scan)
    assert read_scan(tmp_path / "data", scan_id) == scan
    remove_scan(tmp_path / "data", scan_id)
    assert read_scan(tmp_path / "data", scan_id) is None


def test_a_held_scan_is_found_in_this_process_and_written_only_when_asked(tmp_path):
    """Runs in the build's process get the scan from memory; a step process reads the file written under
    the same id; removing the scan removes both."""
    corpus = tmp_path / "corpus"
    (corpus / "kb").mkdir(parents=True)
    (corpus / "kb" / "a.md").write_text("# A\n\nText.\n", encoding="utf-8")
    scan = scan_corpus(corpus)
    data = tmp_path / "data"
    scan_id = hold_scan(scan)
    assert read_scan(data, scan_id) is scan and not (data / "cache").exists()
    assert write_scan(data, scan, scan_id) == scan_id
    assert list((data / "cache" / "scans").iterdir()) == [data / "cache" / "scans" / f"{scan_id}.json"]
    remove_scan(data, scan_id)
    assert read_scan(data, scan_id) is None and not list((data / "cache" / "scans").iterdir())


def test_a_tag_that_is_not_a_scan_id_is_ignored(tmp_path):
    (tmp_path / "secret.json").write_text("{}", encoding="utf-8")
    for scan_id in ("", "../../secret", "/etc/passwd", "0" * 31, "g" * 32):
        assert read_scan(tmp_path / "data", scan_id) is None
