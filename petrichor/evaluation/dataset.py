"""An evaluation set on disk: `docs.jsonl` (one article per line) and `qa.jsonl` (one question per line).

A set over a Petrichor corpus folder (the bundled knowledge bases) names it in `source.json` instead of
`docs.jsonl`: `{"corpus": "<folder, relative to the set>"}`; its documents are the corpus's articles, doc_id
their path (`petrichor-en/guides/configuration.md`), and it is built as that corpus is, knowledge bases kept.

Only the fields the metrics need are kept; gold evidence stays as written so that each metric applies its
own normalisation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from petrichor_core.text.lang import has_cjk


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
    gold_doc_groups: tuple[tuple[str, ...], ...] = ()
    """Groups of interchangeable documents; the question needs one document of every group."""
    subset: str = ""
    answer: str = ""
    answers_all: tuple[str, ...] = ()
    """Short extractive answers; empty when the set only has a free-text answer."""
    gold_passages: tuple[str, ...] = ()
    gold_sections: tuple[GoldSection, ...] = ()
    lang: str = "en"

    @property
    def has_gold(self) -> bool:
        return bool(self.gold_doc_ids or self.gold_doc_groups)

    @property
    def needed_docs(self) -> tuple[tuple[str, ...], ...]:
        """The groups a complete retrieval must cover, one document of each; empty when one gold document
        is enough (`gold_match: any` without groups)."""
        if self.gold_doc_groups:
            return self.gold_doc_groups
        if self.gold_match == "all" and len(self.gold_doc_ids) > 1:
            return tuple((d,) for d in self.gold_doc_ids)
        return ()


@dataclass(frozen=True)
class Dataset:
    name: str
    docs: tuple[EvalDoc, ...]
    questions: tuple[EvalQuestion, ...]
    skipped: int = 0
    """Questions left out of retrieval because they have no gold documents (MultiHop-RAG's `null_query`)."""
    unanswerable: tuple[EvalQuestion, ...] = ()
    """Those questions themselves: no document answers them, so answer metrics ask for "not found"."""
    corpus_dir: Path | None = None
    """The corpus folder the set is built from as it is (`source.json`); None: the documents are materialised."""


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _section(raw: Any, fallback_doc: str) -> GoldSection:
    if isinstance(raw, str):
        doc_id, path = fallback_doc, raw
    else:
        doc_id, path = str(raw.get("doc_id") or fallback_doc), str(raw.get("heading_path") or "")
    return GoldSection(doc_id, tuple(p.strip() for p in path.split(" > ") if p.strip()))


def _flatten(value: Any) -> list[str]:
    """Strings of a possibly nested list (RGB keeps alternative spellings in inner lists)."""
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _flatten(v)]
    return [str(value)] if value not in (None, "") else []


SHORT_ANSWER_WORDS = 3
"""A free-text answer of at most this many words is a short answer (MultiHop-RAG's names, "Yes", "No"): the
answer-holds-gold test applies to it as to extractive answers. Longer ones (rhdh's sentences) are not."""


def _short_answers(raw: Any, has_gold: bool) -> tuple[str, ...]:
    if isinstance(raw, list):
        return tuple(_flatten(raw))
    text = str(raw or "").strip()
    return (text,) if has_gold and text and len(text.split()) <= SHORT_ANSWER_WORDS else ()


def parse_question(row: dict[str, Any]) -> EvalQuestion:
    groups = tuple(tuple(str(d) for d in g) for g in row.get("gold_doc_groups") or () if g)
    gold_docs = tuple(str(d) for d in row.get("gold_doc_ids") or ()) or tuple(dict.fromkeys(d for g in groups for d in g))
    passages = tuple(str(p) for p in row.get("gold_passages") or ())
    lang = row.get("lang") or ("zh" if has_cjk(row["question"]) else "en")
    raw_answer = row.get("answer")
    answers = tuple(_flatten(row.get("answers_all"))) or _short_answers(raw_answer, bool(gold_docs))
    sections = tuple(_section(s, gold_docs[0] if gold_docs else "") for s in row.get("gold_sections") or ())
    return EvalQuestion(
        qid=str(row["qid"]),
        question=str(row["question"]),
        gold_doc_ids=gold_docs,
        gold_match=str(row.get("gold_match") or "any"),
        gold_doc_groups=groups,
        subset=str(row.get("subset") or row.get("question_type") or ""),
        answer="; ".join(_flatten(raw_answer)),
        answers_all=answers,
        gold_passages=passages,
        gold_sections=tuple(s for s in sections if s.heading_path),
        lang="zh" if str(lang).startswith("zh") else "en",
    )


SOURCE = "source.json"


def corpus_source(directory: Path) -> Path | None:
    """The corpus folder a set's `source.json` names, resolved against the set; None without one."""
    path = Path(directory) / SOURCE
    if not path.is_file():
        return None
    try:
        folder = json.loads(path.read_text(encoding="utf-8"))["corpus"]
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f'{path}: needs {{"corpus": "<folder>"}} ({exc})') from exc
    corpus = (Path(directory) / str(folder)).resolve()
    if not corpus.is_dir():
        raise ValueError(f"{path}: the corpus folder {corpus} does not exist")
    return corpus


def corpus_docs(corpus: Path) -> tuple[EvalDoc, ...]:
    """A corpus folder's articles as the build reads them (front matter off, title resolved), doc_id their path."""
    from petrichor_pipeline.sources.corpus import scan_corpus

    scan = scan_corpus(corpus)
    return tuple(EvalDoc(a.path, a.title, a.content) for a in scan.articles)


def has_set_files(directory: Path) -> bool:
    """Whether `directory` holds a set: `qa.jsonl` and its documents (`docs.jsonl` or `source.json`)."""
    directory = Path(directory)
    return (directory / "qa.jsonl").is_file() and ((directory / "docs.jsonl").is_file() or (directory / SOURCE).is_file())


def load_dataset(directory: Path, limit: int = 0) -> Dataset:
    """The set in `directory`; questions without gold documents are kept apart as `unanswerable`; `limit`
    > 0 keeps only the first of each (all documents stay)."""
    directory = Path(directory)
    corpus = None if (directory / "docs.jsonl").is_file() else corpus_source(directory)
    docs = (
        corpus_docs(corpus)
        if corpus
        else tuple(
            EvalDoc(str(r["doc_id"]), str(r.get("title") or r["doc_id"]), str(r.get("content") or "")) for r in _read_jsonl(directory / "docs.jsonl")
        )
    )
    parsed = [parse_question(r) for r in _read_jsonl(directory / "qa.jsonl")]
    questions = tuple(q for q in parsed if q.has_gold)
    unanswerable = tuple(q for q in parsed if not q.has_gold)
    if limit > 0:
        questions, unanswerable = questions[:limit], unanswerable[:limit]
    return Dataset(
        directory.resolve().name,
        docs,
        questions,
        skipped=len(parsed) - sum(q.has_gold for q in parsed),
        unanswerable=unanswerable,
        corpus_dir=corpus,
    )


def cross_questions(directory: Path, count: int) -> tuple[EvalQuestion, ...]:
    """`count` questions of the set in `directory`, evenly spread over it, made unanswerable: asked of
    another set's corpus, no document there answers them. Their qids are prefixed with their set's name."""
    directory = Path(directory)
    name = directory.resolve().name
    parsed = [parse_question(r) for r in _read_jsonl(directory / "qa.jsonl")]
    pool = [q for q in parsed if q.has_gold]
    if count <= 0 or not pool:
        return ()
    step = max(1, len(pool) // count)
    picked = pool[::step][:count]
    return tuple(EvalQuestion(qid=f"{name}:{q.qid}", question=q.question, gold_doc_ids=(), subset=f"cross:{name}", lang=q.lang) for q in picked)
