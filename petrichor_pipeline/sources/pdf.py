"""A PDF as one Markdown article: text pages through pymupdf4llm, image-only pages through a vision model.

Pages are converted one at a time so a page that fails costs a warning, not the document. Scanned pages are
rendered and transcribed with bounded concurrency, then every page is merged back in page order.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Protocol

from petrichor_core.text.normalize import normalize_text
from petrichor_pipeline.sources.errors import RejectedFile
from petrichor_pipeline.sources.markdown import first_heading

if TYPE_CHECKING:
    import pymupdf

TRANSCRIBE_CONCURRENCY = 4
RENDER_DPI = 150


def _mupdf() -> tuple[ModuleType, ModuleType]:
    """pymupdf and pymupdf4llm, imported on the first PDF: importing them loads a layout model (about 0.7 s),
    which every build process, step worker and server would otherwise pay for a corpus without PDFs."""
    import pymupdf
    import pymupdf4llm

    return pymupdf, pymupdf4llm


class PageTranscriber(Protocol):
    """Turns the PNG of one page (1-based `page_number`) into Markdown; raises when it cannot."""

    def transcribe(self, page_png: bytes, page_number: int) -> str: ...


@dataclass(frozen=True, slots=True)
class PdfDocument:
    title: str
    content: str
    warnings: tuple[str, ...]


def read_pdf(data: bytes, stem: str, transcriber: PageTranscriber | None = None) -> PdfDocument:
    """Title: the PDF's metadata title, else the first heading, else the file name without its suffix."""
    mupdf, _ = _mupdf()
    try:
        doc = mupdf.open(stream=data, filetype="pdf")
    except RuntimeError as exc:  # pymupdf.FileDataError and MuPDF's own errors
        raise RejectedFile(f"corrupt PDF: {exc}") from None
    with doc:
        if doc.needs_pass:
            raise RejectedFile("encrypted PDF")
        if doc.page_count == 0:
            raise RejectedFile("corrupt PDF: no pages")
        try:
            pages, warnings = _convert(doc, transcriber)
        except RuntimeError as exc:  # a damaged page stream
            raise RejectedFile(f"corrupt PDF: {exc}") from None
        meta_title = ((doc.metadata or {}).get("title") or "").strip()
    content = normalize_text("\n\n".join(text for _, text in sorted(pages.items()) if text))
    if not content.strip():
        raise RejectedFile("; ".join(["no text extracted", *warnings]))
    title = meta_title or first_heading(content) or stem
    return PdfDocument(title=title, content=content, warnings=tuple(warnings))


def _convert(doc: pymupdf.Document, transcriber: PageTranscriber | None) -> tuple[dict[int, str], list[str]]:
    """Markdown per page index (0-based); pages left out or failed are named in the warnings."""
    pages: dict[int, str] = {}
    warnings: list[str] = []
    scanned: list[int] = []
    for index in range(doc.page_count):
        if doc[index].get_text("text").strip():
            pages[index] = _text_page(doc, index, warnings)
        else:
            scanned.append(index)
    if scanned and transcriber is None:
        if not pages:
            raise RejectedFile("no text layer and no vision model configured")
        numbers = ", ".join(str(i + 1) for i in scanned)
        verb = "have" if len(scanned) > 1 else "has"
        noun = "pages" if len(scanned) > 1 else "page"
        warnings.append(f"{noun} {numbers} {verb} no text layer and no vision model is configured; left out")
    elif scanned and transcriber is not None:
        pages.update(_transcribe(doc, scanned, transcriber, warnings))
    return pages, warnings


def _text_page(doc: pymupdf.Document, index: int, warnings: list[str]) -> str:
    """pymupdf4llm's layout Markdown (headings from font sizes, tables, reading order).

    Running headers and footers are kept: the layout model also takes a lone line at the top of a page
    for a header, and dropping text silently is worse than a repeated line. A page whose text layer
    yields no Markdown keeps its plain text.
    """
    try:
        markdown = _mupdf()[1].to_markdown(doc, pages=[index], use_ocr=False)
    except Exception as exc:  # a layout failure on one page keeps that page's plain text
        warnings.append(f"page {index + 1}: layout conversion failed ({exc}); plain text kept")
        markdown = ""
    return _tidy(markdown) or _tidy(doc[index].get_text("text"))


def _transcribe(doc: pymupdf.Document, indexes: list[int], transcriber: PageTranscriber, warnings: list[str]) -> dict[int, str]:
    """One request per page, at most four in flight; MuPDF is not thread-safe, so rendering holds a lock."""
    render_lock = threading.Lock()

    def work(index: int) -> str:
        with render_lock:
            png = doc[index].get_pixmap(dpi=RENDER_DPI).tobytes("png")
        return transcriber.transcribe(png, index + 1)

    with ThreadPoolExecutor(max_workers=TRANSCRIBE_CONCURRENCY) as pool:
        futures = {index: pool.submit(work, index) for index in indexes}
    pages: dict[int, str] = {}
    for index, future in futures.items():
        try:
            text = _tidy(normalize_text(future.result()))
        except Exception as exc:  # any transcriber failure costs this page only
            warnings.append(f"page {index + 1}: transcription failed ({exc}); left out")
            continue
        if text:
            pages[index] = text
        else:
            warnings.append(f"page {index + 1}: transcription returned no text; left out")
    return pages


def _tidy(markdown: str) -> str:
    """Trailing spaces off every line and blank lines off both ends, so pages join with one blank line."""
    return "\n".join(line.rstrip() for line in markdown.split("\n")).strip("\n")
