"""Article identity and placement: pure functions of the file's path, never of its content.

An edit changes an article's version, not its id, so its chunks, questions and citations keep their keys;
the bucket follows from the id alone, so an article never moves between Dagster partitions.
"""

from __future__ import annotations

import hashlib

from petrichor_core.config import BUCKET_COUNT
from petrichor_core.text.normalize import article_version

__all__ = ["article_id_of", "article_version", "bucket_of"]


def article_id_of(relpath: str) -> str:
    """16 hex digits from the posix path relative to the corpus root, e.g. `petrichor-zh/guides/install.md`."""
    return hashlib.sha256(relpath.encode("utf-8")).hexdigest()[:16]


def bucket_of(article_id: str) -> str:
    """The hash partition (`00`..`0f`): the first 4 bytes of sha256(article_id), big-endian, mod 16."""
    digest = hashlib.sha256(article_id.encode("utf-8")).digest()
    return f"{int.from_bytes(digest[:4], 'big') % BUCKET_COUNT:02x}"
