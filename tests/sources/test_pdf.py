"""PDF import: text pages through pymupdf4llm, image-only pages left out with a warning or transcribed."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pymupdf
import pytest

from petrichor_pipeline.sources.corpus import scan_corpus
from petrichor_pipeline.sources.errors import RejectedFile
from petrichor_pipeline.sources.pdf import read_pdf

from .helpers import add_image_page, add_text_page, three_page_pdf, write


class FixedTranscriber:
    """Answers each page with a known Markdown block and records what it was sent."""

    def __init__(self, fail_pages: tuple[int, ...] = ()):
        self.fail_pages = fail_pages
        self.calls: list[tuple[int, bytes]] = []

    def transcribe(self, page_png: bytes, page_number: int) -> str:
        self.calls.append((page_number, page_png))
        if page_number in self.fail_pages:
            raise RuntimeError("model unavailable")
        return f"## Scanned page {page_number}\r\n\r\nTranscribed text.  \n"


def test_text_pages_merge_in_order_and_the_image_page_is_named(corpus: Path):
    write(corpus, "kb/manual.pdf", three_page_pdf())
    scan = scan_corpus(corpus)
    assert scan.errors == ()
    (art,) = scan.articles
    assert art.kind == "pdf"
    assert art.title == "Installation Guide"
    assert art.content.startswith("# Installation Guide\n\n")
    assert "Unpack the archive" in art.content
    assert art.content.index("Then start the service") < art.content.index("Operations: restart")
    assert art.warnings == ("page 2 has no text layer and no vision model is configured; left out",)
    assert (art.visibility, art.tenant, art.share_expires_at, art.password_protected) == ("private", "default", None, False)


def test_transcribed_page_sits_between_its_neighbours():
    transcriber = FixedTranscriber()
    doc = read_pdf(three_page_pdf(), "manual", transcriber)
    assert doc.warnings == ()
    assert [number for number, _ in transcriber.calls] == [2]
    assert transcriber.calls[0][1].startswith(b"\x89PNG\r\n\x1a\n")
    first = doc.content.index("Then start the service")
    scanned = doc.content.index("## Scanned page 2\n\nTranscribed text.\n\nOperations: restart")
    assert first < scanned
    assert "\r" not in doc.content


def test_metadata_title_wins_over_the_first_heading():
    assert read_pdf(three_page_pdf(title="Operator Manual"), "manual").title == "Operator Manual"


def test_a_failed_transcription_is_a_page_warning():
    doc = pymupdf.open()
    add_text_page(doc, None, "Text page.")
    add_image_page(doc)
    add_image_page(doc)
    result = read_pdf(doc.tobytes(), "scan", FixedTranscriber(fail_pages=(2,)))
    assert result.warnings == ("page 2: transcription failed (model unavailable); left out",)
    assert result.content == "Text page.\n\n## Scanned page 3\n\nTranscribed text."
    assert result.title == "Scanned page 3"


def test_transcription_runs_at_most_four_pages_at_once():
    in_flight = peak = 0
    lock = threading.Lock()

    class SlowTranscriber:
        def transcribe(self, page_png: bytes, page_number: int) -> str:
            nonlocal in_flight, peak
            with lock:
                in_flight += 1
                peak = max(peak, in_flight)
            time.sleep(0.4)  # long enough to overlap even when page rendering is slow under load
            with lock:
                in_flight -= 1
            return f"Page {page_number} text."

    doc = pymupdf.open()
    for _ in range(7):
        add_image_page(doc)
    result = read_pdf(doc.tobytes(), "scan", SlowTranscriber())
    assert result.content == "\n\n".join(f"Page {n} text." for n in range(1, 8))
    assert 1 < peak <= 4


def test_image_only_pdf_without_a_vision_model_is_an_error(corpus: Path):
    doc = pymupdf.open()
    add_image_page(doc)
    add_image_page(doc)
    write(corpus, "kb/scan.pdf", doc.tobytes())
    write(corpus, "kb/fine.md", "# Fine\n")
    scan = scan_corpus(corpus)
    assert [(e.path, e.reason) for e in scan.errors] == [("kb/scan.pdf", "no text layer and no vision model configured")]
    assert [a.path for a in scan.articles] == ["kb/fine.md"]


def test_encrypted_and_corrupt_pdfs_are_errors(corpus: Path):
    doc = pymupdf.open()
    add_text_page(doc, "Secret", "Classified body.")
    encrypted = doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="user", owner_pw="owner")
    write(corpus, "kb/encrypted.pdf", encrypted)
    write(corpus, "kb/corrupt.pdf", b"%PDF-1.7\nthis is not really a PDF")
    write(corpus, "kb/truncated.pdf", three_page_pdf()[:300])
    write(corpus, "kb/fine.md", "# Fine\n")
    scan = scan_corpus(corpus)
    reasons = {e.path: e.reason for e in scan.errors}
    assert reasons["kb/encrypted.pdf"] == "encrypted PDF"
    assert reasons["kb/corrupt.pdf"].startswith("corrupt PDF: ")
    assert reasons["kb/truncated.pdf"].startswith("corrupt PDF: ")
    assert [a.path for a in scan.articles] == ["kb/fine.md"]


def test_owner_password_only_pdf_opens():
    doc = pymupdf.open()
    add_text_page(doc, None, "Readable without a password.")
    data = doc.tobytes(encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="owner", user_pw="")
    assert read_pdf(data, "locked").content == "Readable without a password."


def test_pdf_over_the_size_limit_is_an_error(corpus: Path):
    data = three_page_pdf()
    write(corpus, "kb/manual.pdf", data)
    with pytest.raises(RejectedFile, match="corrupt PDF"):
        read_pdf(b"not a pdf", "x")
    assert {e.path: e.reason for e in scan_corpus(corpus, max_file_bytes=100).errors} == {
        "kb/manual.pdf": f"file too large: {len(data)} bytes (limit 100)"
    }


def test_bold_heading_becomes_a_plain_title():
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "Bold Manual", fontsize=22, fontname="hebo")
    page.insert_text((72, 110), "Body text in regular weight for the page.", fontsize=11)
    result = read_pdf(doc.tobytes(), "manual")
    assert result.title == "Bold Manual"
    assert result.content.startswith("# **Bold Manual**")
