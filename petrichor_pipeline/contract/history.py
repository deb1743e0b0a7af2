"""The article history store's layout and read side (`build.history` writes it).

Every article version a published snapshot holds is kept under `<data>/history/`, content-addressed by its
`article_version`, so a citation still resolves after the article is edited or its snapshots are collected.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from petrichor_pipeline.text.normalize import article_version as version_of

HISTORY_DIR = "history"
"""`<data>/history/`: every article version a retained snapshot or a stored answer cites, content-addressed."""
PINS_DIR = "pins"
"""`history/pins/<trace_id>.json`: the (article_id, article_version) pairs a stored answer trace cites."""


@dataclass(frozen=True)
class ArticleRecord:
    """One article version as it was published: its snapshot row (scope fields included) and the chunk
    spans that give a citation's offsets their heading path."""

    article: dict[str, Any]
    """The snapshot's `articles` row for this version (content, title, tenant, kb_id, visibility, ...)."""
    spans: list[dict[str, Any]]
    """`[{"start", "end", "heading_path"}]` of the version's chunks, in article order."""

    @property
    def article_version(self) -> str:
        return self.article["article_version"]

    def heading_path_at(self, offset: int) -> list[str]:
        """The heading path of the chunk holding `offset` (the rule citations use); [] when none does."""
        for span in self.spans:
            if span["start"] <= offset < span["end"]:
                return list(span["heading_path"])
        return []

    def to_json(self) -> str:
        return json.dumps({"article": self.article, "spans": self.spans}, ensure_ascii=False, sort_keys=True)


def history_dir(data_dir: Path) -> Path:
    return Path(data_dir) / HISTORY_DIR


def article_record_path(data_dir: Path, article_version: str) -> Path:
    """`history/articles/<first two hex>/<article_version>.json`."""
    return history_dir(data_dir) / "articles" / article_version[:2] / f"{article_version}.json"


def pin_path(data_dir: Path, trace_id: str) -> Path:
    """A stored trace's pin: `{"cites": [[article_id, article_version], ...]}`."""
    return history_dir(data_dir) / PINS_DIR / f"{trace_id}.json"


def is_article_version(value: str) -> bool:
    return len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def read_article_record(data_dir: Path, article_version: str) -> ArticleRecord | None:
    """The stored version, or None when it is unknown, collected or does not hash to its own name."""
    if not is_article_version(article_version):
        return None
    try:
        raw = json.loads(article_record_path(data_dir, article_version).read_text(encoding="utf-8"))
        record = ArticleRecord(article=raw["article"], spans=raw["spans"])
        intact = version_of(record.article["title"], record.article["content"]) == article_version
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return record if intact else None
