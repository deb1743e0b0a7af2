"""Text normalisation and hashing applied before anything is hashed, chunked or indexed.

Normalisation never trims: offsets computed on the normalised text stay valid for citations.
"""

from __future__ import annotations

import hashlib
import re

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def normalize_text(text: str) -> str:
    """Drop a BOM, turn CRLF/CR into LF, remove NUL and other C0 control characters (tab and LF stay)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", text)


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def article_version(title: str, content: str) -> str:
    """The spec's source hash: sha256 of `title + "\\n" + content_md`; citations carry it."""
    return sha256_hex(title + "\n" + content)
