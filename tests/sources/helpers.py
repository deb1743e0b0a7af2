"""Builders for test corpora and PDFs."""

from __future__ import annotations

from pathlib import Path

import pymupdf


def write(root: Path, relpath: str, data: bytes | str) -> Path:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def add_text_page(doc: pymupdf.Document, heading: str | None, body: str) -> None:
    page = doc.new_page()
    y = 72
    if heading:
        page.insert_text((72, y), heading, fontsize=24)
        y += 40
    for line in body.split("\n"):
        page.insert_text((72, y), line, fontsize=11)
        y += 16


def add_image_page(doc: pymupdf.Document) -> None:
    """A page with an image and no text layer, like a scan."""
    page = doc.new_page()
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 32, 32), False)
    pix.clear_with(180)
    page.insert_image(pymupdf.Rect(72, 72, 272, 272), pixmap=pix)


def three_page_pdf(title: str = "") -> bytes:
    """Page 1: a large heading and body; page 2: image only; page 3: body text."""
    doc = pymupdf.open()
    add_text_page(doc, "Installation Guide", "Unpack the archive and run the installer.\nThen start the service.")
    add_image_page(doc)
    add_text_page(doc, None, "Operations: restart the service after changing its settings.")
    if title:
        doc.set_metadata({"title": title})
    return doc.tobytes()
