"""The article history store's layout and read side (`petrichor_pipeline.builder.history` writes it).

Every article version a published snapshot holds is kept under `<data>/history/`, content-addressed by its
`article_version`, so a citation still resolves after the article is edited or its snapshots are collected.
A version is recorded once per scope it was published under (`SCOPE_FIELDS`): an article moved to another
tenant, or shared, keeps its text and so its version, and the new scope gets a record of its own beside
the old one rather than being answered by the old one's row.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from petrichor_core.text.normalize import article_version as version_of

HISTORY_DIR = "history"
"""`<data>/history/`: every article version a retained snapshot or a stored answer cites, content-addressed."""
PINS_DIR = "pins"
"""`history/pins/<trace_id>.json`: the (article_id, article_version) pairs a stored answer trace cites."""
SCOPE_FIELDS = ("article_id", "kb_id", "tenant", "visibility", "share_expires_at", "password_protected")
"""The fields of an article row that decide who may read it (`recall.access`), its id included so that two
articles of one text are two records: a version is recorded once per distinct value of these."""
SCOPE_CHARS = 16


@dataclass(frozen=True)
class ArticleRecord:
    """One article version as it was published under one scope: its snapshot row (scope fields included) and
    the chunk spans that give a citation's offsets their heading path."""

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


def scope_key(row: Mapping[str, Any]) -> str:
    """The name of a row's scope: a digest of its `SCOPE_FIELDS`."""
    values = json.dumps([row.get(name) for name in SCOPE_FIELDS], ensure_ascii=False)
    return hashlib.sha256(values.encode("utf-8")).hexdigest()[:SCOPE_CHARS]


def history_dir(data_dir: Path) -> Path:
    return Path(data_dir) / HISTORY_DIR


def article_record_path(data_dir: Path, article_version: str, scope: str | None) -> Path:
    """`history/articles/<first two hex>/<article_version>.<scope>.json`; with no scope, the name of a record
    written before records were kept per scope (`<article_version>.json`), read under its row's scope."""
    name = article_version if scope is None else f"{article_version}.{scope}"
    return history_dir(data_dir) / "articles" / article_version[:2] / f"{name}.json"


def record_name(relpath: str) -> tuple[str, str | None] | None:
    """`(article_version, scope)` of a record's path relative to `history/articles/`; None when it is not
    one of the layout's (so no other path is ever taken for a record)."""
    prefix, _, name = relpath.partition("/")
    stem = name.removesuffix(".json")
    version, _, scope = stem.partition(".")
    if stem == name or not is_article_version(version) or prefix != version[:2]:
        return None
    if scope and not (len(scope) == SCOPE_CHARS and all(c in "0123456789abcdef" for c in scope)):
        return None
    return version, scope or None


def pin_path(data_dir: Path, trace_id: str) -> Path:
    """A stored trace's pin: `{"cites": [[article_id, article_version], ...]}`."""
    return history_dir(data_dir) / PINS_DIR / f"{trace_id}.json"


def is_article_version(value: str) -> bool:
    return len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def read_article_records(data_dir: Path, article_version: str) -> list[ArticleRecord]:
    """Every stored record of the version, one per scope it was published under; a record that does not
    hash to its version, or whose row is not the scope its name says, is left out."""
    if not is_article_version(article_version):
        return []
    folder = history_dir(data_dir) / "articles" / article_version[:2]
    records = []
    for path in sorted(folder.glob(f"{article_version}*.json")):
        named = record_name(f"{folder.name}/{path.name}")
        if named is None or named[0] != article_version:
            continue
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            record = ArticleRecord(article=raw["article"], spans=raw["spans"])
            intact = version_of(record.article["title"], record.article["content"]) == article_version
            intact = intact and named[1] in (None, scope_key(record.article))
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if intact:
            records.append(record)
    return records


def stored_records(data_dir: Path) -> dict[Path, str]:
    """Every record file of the store's layout and the article version it holds."""
    root = history_dir(data_dir) / "articles"
    if not root.exists():
        return {}
    named = ((path, record_name(f"{path.parent.name}/{path.name}")) for path in root.glob("*/*.json"))
    return {path: key[0] for path, key in named if key is not None}
