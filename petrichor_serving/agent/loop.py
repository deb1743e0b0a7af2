"""The answering loop: Search / Outline → Read / Read Many → Evidence → cited answer.

The loop is a small deterministic controller: a structural question ("which sections…") goes through
the outline, anything else through search; only what Read returned becomes Evidence; the model writes
the answer from numbered evidence; every citation is checked against the text that was read and mapped
to offsets in the article version, and a citation that does not check out is dropped.
"""

from __future__ import annotations

import re
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Sequence

from petrichor_pipeline.models.protocols import AnswerModel, CallContext, EvidenceText, ModelError
from petrichor_pipeline.text.lang import NOT_FOUND, language_of
from petrichor_pipeline.text.tokenize import query_tokens
from petrichor_serving.agent import tools
from petrichor_serving.recall.access import Scope
from petrichor_serving.snapshot import Snapshot

STRUCTURAL = re.compile(r"(有哪些章节|哪些章节|目录|大纲|按顺序|章节结构|outline|table of contents|which sections|what sections|list the sections)", re.I)


@dataclass
class AgentBudget:
    max_steps: int = 8
    max_reads: int = 4
    search_limit: int = 6


@dataclass
class Trace:
    trace_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    steps: list[dict[str, Any]] = field(default_factory=list)

    def add(self, tool: str, started: float, **info: Any) -> None:
        self.steps.append({"tool": tool, "ms": round((time.perf_counter() - started) * 1000, 2), **info})


def _evidence_entry(i: int, item: dict[str, Any]) -> dict[str, Any]:
    return {
        "evidence_id": f"e{i + 1}",
        "kind": item["kind"],
        "chunk_id": item.get("chunk_id"),
        "node_key": item.get("node_key"),
        "article_id": item["article_id"],
        "article_version": item["article_version"],
        "title": item.get("article_title") or item.get("title"),
        "heading_path": item.get("heading_path", []),
        "start": item.get("start"),
        "end": item.get("end"),
    }


def _citations(reply: dict[str, Any], read_items: dict[str, dict[str, Any]], snap: Snapshot) -> list[dict[str, Any]]:
    """Keep only citations whose quote is verbatim in evidence that was read; add article offsets."""
    out: list[dict[str, Any]] = []
    for c in reply.get("citations") or []:
        if not isinstance(c, dict):
            continue
        item = read_items.get(str(c.get("evidence_id", "")))
        quote = c.get("quote")
        if item is None or not isinstance(quote, str) or not quote.strip() or item.get("start") is None:
            continue
        pos = item["content"].find(quote)
        if pos < 0:
            continue
        start = item["start"] + pos
        end = start + len(quote)
        article = snap.articles[item["article_id"]]
        if article["content"][start:end] != quote:
            continue
        out.append(
            {
                "marker": int(c.get("marker") or len(out) + 1),
                "chunk_id": item.get("chunk_id"),
                "article_id": item["article_id"],
                "article_version": item["article_version"],
                "title": article["title"],
                "heading_path": item.get("heading_path", []),
                "quote_start": start,
                "quote_end": end,
                "quote": quote,
            }
        )
    return out


def _named_article(snap: Snapshot, question: str, cands: Sequence[dict[str, Any]]) -> str | None:
    """The candidates' article whose title the question names most (ties: search order)."""
    wanted = set(query_tokens(question))
    best, best_overlap = None, -1
    for c in cands:
        aid = c.get("article_id")
        if not aid or aid not in snap.articles:
            continue
        overlap = len(wanted & set(query_tokens(snap.articles[aid]["title"])))
        if overlap > best_overlap:
            best, best_overlap = aid, overlap
    return best


def _heading_span(snap: Snapshot, node: dict[str, Any]) -> tuple[str, int, int] | None:
    """The chunk holding an outline node's heading and the heading title's offsets in the article."""
    article = snap.articles[node["article_id"]]
    if node.get("node_key"):
        row = snap.nodes[node["node_key"]]
        line_no = row["start_line"] - 1
        lines = article["content"].split("\n")
        if not 0 <= line_no < len(lines):
            return None
        line_start = sum(len(line) + 1 for line in lines[:line_no])
        pos = lines[line_no].find(row["title"])
        if pos < 0:
            return None
        start = line_start + pos
    else:
        chunk = snap.chunks[node["chunk_id"]]
        pos = chunk["content"].find(node["title"])
        if pos < 0:
            return None
        start = chunk["start"] + pos
    for cid in snap.chunks_by_article.get(node["article_id"], []):
        c = snap.chunks[cid]
        if c["start"] <= start < c["end"]:
            return cid, start, start + len(node["title"])
    return None


def _sections_answer(snap: Snapshot, tree: dict[str, Any], lang: str) -> dict[str, Any] | None:
    """A structure question answered from the outline: the top-level sections, each cited at its heading."""
    nodes = [dict(n, article_id=tree["article_id"]) for n in tree["nodes"] if n.get("depth", 0) > 0 or n.get("chunk_id")]
    if not nodes:
        return None
    article = snap.articles[tree["article_id"]]
    top = min(n["depth"] for n in nodes)
    sections: list[dict[str, Any]] = []
    for n in (n for n in nodes if n["depth"] == top):
        children = [m for m in nodes if n.get("node_key") and m.get("parent_key") == n["node_key"]]
        # a heading that only restates the article title is not a section: list what it holds
        sections.extend(children if n["title"].strip() == article["title"].strip() and children else [n])
    sections = sections[:12]
    citations, evidence, parts = [], [], []
    for node in sections:
        span = _heading_span(snap, node)
        if span is None:
            continue
        cid, start, end = span
        marker = len(citations) + 1
        chunk = snap.chunks[cid]
        citations.append(
            {
                "marker": marker,
                "chunk_id": cid,
                "article_id": tree["article_id"],
                "article_version": article["article_version"],
                "title": article["title"],
                "heading_path": list(chunk["heading_path"]),
                "quote_start": start,
                "quote_end": end,
                "quote": article["content"][start:end],
            }
        )
        evidence.append(
            {
                "evidence_id": f"e{marker}",
                "kind": "outline",
                "chunk_id": cid,
                "node_key": node.get("node_key"),
                "article_id": tree["article_id"],
                "article_version": article["article_version"],
                "title": article["title"],
                "heading_path": list(chunk["heading_path"]),
                "start": start,
                "end": end,
            }
        )
        parts.append(f"{node['title']} [{marker}]")
    if not citations:
        return None
    if lang == "zh":
        text = f"《{article['title']}》包含以下章节：" + "；".join(parts) + "。"
    else:
        text = f"{article['title']} has these sections: " + "; ".join(parts) + "."
    return {"answer": text, "citations": citations, "evidence": evidence}


def _renumber(text: str, citations: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """Markers become 1..n in order of first use; a marker without a checked citation is removed."""
    order: dict[int, int] = {}
    for m in re.finditer(r"\[(\d+)\]", text):
        old = int(m.group(1))
        if old not in order and any(c["marker"] == old for c in citations):
            order[old] = len(order) + 1
    for c in citations:
        order.setdefault(c["marker"], len(order) + 1)
    text = re.sub(r"\[(\d+)\]", lambda m: f"[{order[int(m.group(1))]}]" if int(m.group(1)) in order else "", text)
    renumbered = [{**c, "marker": order[c["marker"]]} for c in citations]
    return re.sub(r"[ \t]+([。.，,；;])", r"\1", text).strip(), sorted(renumbered, key=lambda c: c["marker"])


def answer(
    snap: Snapshot,
    question: str,
    scope: Scope,
    *,
    chat: AnswerModel,
    embedder: Any = None,
    budget: AgentBudget | None = None,
    sub_queries: Sequence[str] | None = None,
) -> dict[str, Any]:
    budget = budget or AgentBudget()
    question = (question or "").strip()
    if not question:
        raise tools.ToolError("question must be a non-empty string")
    trace = Trace()
    targets: list[dict[str, Any]] = []

    t = time.perf_counter()
    found = tools.search(snap, scope, question, embedder=embedder, limit=budget.search_limit, sub_queries=sub_queries)
    cands = found["candidates"]
    trace.add("search", t, query=question, hits=[c.get("chunk_id") or c.get("page_key") or c.get("node_key") for c in cands])

    article_id = _named_article(snap, question, cands)
    if STRUCTURAL.search(question) and article_id and len(trace.steps) < budget.max_steps:
        t = time.perf_counter()
        tree = tools.outline(snap, scope, article_id)
        trace.add("outline", t, article_id=article_id, nodes=tree["node_count"])
        structural = _sections_answer(snap, tree, language_of(question))
        if structural is not None:
            return {**structural, "trace_id": trace.trace_id, "trace": trace.steps, "snapshot_version": snap.version}
    for c in cands:
        if c.get("chunk_id") and {"chunk_id": c["chunk_id"]} not in targets:
            targets.append({"chunk_id": c["chunk_id"]})
    targets = targets[: budget.max_reads]

    read_items: dict[str, dict[str, Any]] = {}
    if targets and len(trace.steps) < budget.max_steps:
        t = time.perf_counter()
        got = tools.read_many(snap, scope, targets)
        for i, item in enumerate(got["results"]):
            read_items[f"e{i + 1}"] = item
        trace.add("read_many", t, targets=targets, read=len(got["results"]))

    lang = language_of(question)
    if not read_items:
        return {"answer": NOT_FOUND[lang], "citations": [], "evidence": [], "trace_id": trace.trace_id, "trace": trace.steps, "snapshot_version": snap.version}

    evidence = [
        EvidenceText(evidence_id=k, title=v.get("article_title") or v["title"], heading_path=tuple(v.get("heading_path", ())), content=v["content"])
        for k, v in read_items.items()
    ]
    t = time.perf_counter()
    try:
        reply = chat.answer(question, evidence, CallContext(kb_id=next(iter(read_items.values()))["kb_id"]))
    except ModelError as exc:
        trace.add("answer", t, error=str(exc))
        reply = {"answer": NOT_FOUND[lang], "citations": []}
    citations = _citations(reply, read_items, snap)
    trace.add("answer", t, citations=len(citations))
    text, citations = _renumber(str(reply.get("answer") or ""), citations)
    return {
        "answer": text or NOT_FOUND[lang],
        "citations": citations,
        "evidence": [_evidence_entry(i, v) for i, v in enumerate(read_items.values())],
        "trace_id": trace.trace_id,
        "trace": trace.steps,
        "snapshot_version": snap.version,
    }
