"""Materialise an evaluation set as a Petrichor corpus: `<corpus>/eval/<doc>.md`, title in front matter.

Files are rewritten only when their text changes and files of documents no longer in the set are removed,
so a second run over the same set leaves the corpus untouched and the incremental build skips every bucket.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import yaml

from petrichor.evaluation.dataset import EvalDoc
from petrichor_pipeline.sources.identity import article_id_of

KB_ID = "eval"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def doc_filename(doc_id: str) -> str:
    """A safe, stable file name; ids that had to be altered get a short hash so two never collide."""
    safe = _UNSAFE.sub("_", doc_id).strip("._") or "doc"
    if safe != doc_id:
        safe = f"{safe[:80]}-{hashlib.sha256(doc_id.encode()).hexdigest()[:8]}"
    return f"{safe}.md"


def render_doc(doc: EvalDoc) -> str:
    front = yaml.safe_dump({"title": doc.title}, allow_unicode=True, default_flow_style=False, width=10_000)
    return f"---\n{front}---\n\n{doc.content.strip()}\n"


def materialise_corpus(docs: tuple[EvalDoc, ...] | list[EvalDoc], corpus_dir: Path) -> dict[str, str]:
    """Write the documents under `corpus_dir/eval/` and return doc_id -> article_id."""
    kb_dir = Path(corpus_dir) / KB_ID
    kb_dir.mkdir(parents=True, exist_ok=True)
    articles: dict[str, str] = {}
    wanted: set[str] = set()
    for doc in docs:
        name = doc_filename(doc.doc_id)
        if name in wanted:
            raise ValueError(f"two documents map to the file name {name!r}")
        wanted.add(name)
        path = kb_dir / name
        text = render_doc(doc)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            tmp = path.with_suffix(".tmp")
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(path)
        articles[doc.doc_id] = article_id_of(f"{KB_ID}/{name}")
    for stale in kb_dir.glob("*.md"):
        if stale.name not in wanted:
            stale.unlink()
    return articles
