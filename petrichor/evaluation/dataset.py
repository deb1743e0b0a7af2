"""An evaluation set on disk: `docs.jsonl` (one article per line) and `qa.jsonl` (one question per line).

Only the fields the metrics need are kept; gold evidence stays as written so that each metric applies its
own normalisation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from petrichor_pipeline.text.lang import has_cjk


@dataclass(frozen=True)
class EvalDoc:
    doc_id: str
    title: str
    content: str


@dataclass(frozen=True)
class GoldSection:
    doc_id: str
    heading_path: tuple[str, ...]
    """`A > B` split into its headings; a chunk hits when its own heading path ends with these."""


@dataclass(frozen=True)
class EvalQuestion:
    qid: str
    question: str
    gold_doc_ids: tuple[str, ...]
    gold_match: str = "any"
    """`any`: one gold document is enough; `all`: every gold document must be retrieved."""
    answer: str = ""
    answers_all: tuple[str, ...] = ()
    """Short extractive answers; empty when the set only has a free-text answer."""
    gold_passages: tuple[str, ...] = ()
    gold_sections: tuple[GoldSection, ...] = ()
    lang: str = "en"


@dataclass(frozen=True)
class Dataset:
    name: str
    docs: tuple[EvalDoc, ...]
    questions: tuple[EvalQuestion, ...]


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _section(raw: Any, fallback_doc: str) -> GoldSection:
    if isinstance(raw, str):
        doc_id, path = fallback_doc, raw
    else:
        doc_id, path = str(raw.get("doc_id") or fallback_doc), str(raw.get("heading_path") or "")
    return GoldSection(doc_id, tuple(p.strip() for p in path.split(" > ") if p.strip()))


def parse_question(row: dict[str, Any]) -> EvalQuestion:
    gold_docs = tuple(str(d) for d in row.get("gold_doc_ids") or ())
    passages = tuple(str(p) for p in row.get("gold_passages") or ())
    lang = row.get("lang") or ("zh" if has_cjk(row["question"]) else "en")
    answers = tuple(str(a) for a in row.get("answers_all") or ())
    sections = tuple(_section(s, gold_docs[0] if gold_docs else "") for s in row.get("gold_sections") or ())
    return EvalQuestion(
        qid=str(row["qid"]),
        question=str(row["question"]),
        gold_doc_ids=gold_docs,
        gold_match=str(row.get("gold_match") or "any"),
        answer=str(row.get("answer") or ""),
        answers_all=answers,
        gold_passages=passages,
        gold_sections=tuple(s for s in sections if s.heading_path),
        lang="zh" if str(lang).startswith("zh") else "en",
    )


def load_dataset(directory: Path, limit: int = 0) -> Dataset:
    """The set in `directory`; `limit` > 0 keeps only the first questions (all documents stay)."""
    directory = Path(directory)
    docs = tuple(
        EvalDoc(str(r["doc_id"]), str(r.get("title") or r["doc_id"]), str(r.get("content") or ""))
        for r in _read_jsonl(directory / "docs.jsonl")
    )
    questions = tuple(parse_question(r) for r in _read_jsonl(directory / "qa.jsonl"))
    if limit > 0:
        questions = questions[:limit]
    return Dataset(directory.resolve().name, docs, questions)
