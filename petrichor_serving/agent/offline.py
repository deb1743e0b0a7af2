"""The offline agent: a deterministic plan per question class, over the same metered tools as the model agent.

- fact: search → read the best chunk candidates → quote the sentence, list item or table row that answers,
  preferring best-ranked evidence, few citations;
- structure: search (votes) → find the named article and section by heading match → outline → read the
  chunks holding the section's child headings → list the children in order, each cited at its heading;
- comparison: one search and read per compared item → one line per item, each quoting a statement that names
  it (the row parallel to the first side's when one was read), each cited;
- concept: search → read the wiki page → follow it to its source articles → read their chunks → quote;
- complex: one fact plan per sub-question;
- nothing found: say so, naming the words nothing read contains.
A plan that cannot do its job hands over to the fact plan rather than answering badly. A quoted answer of
the fact and concept plans passes the answerability gate (`answerability`) first: when the cited evidence
does not answer the question, the answer is the not-found text and the trace says which signal fell short.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from petrichor_core.models.protocols import CallContext, ModelError
from petrichor_core.text.lang import NOT_FOUND
from petrichor_core.text.lang.question_words import STEPS_ASKED
from petrichor_core.text.lang.texts import (
    ARTICLE_HEAD,
    ENUMERATION_COMMA,
    GREETING,
    LABEL_COLON,
    LISTED_KINDS,
    LISTING,
    LISTING_SEPARATOR,
    NOTHING_FOUND_FOR_ITEM,
    NOTHING_READ_MENTIONS,
    SECTION_HEAD,
)
from petrichor_serving.agent import answerability, structure
from petrichor_serving.agent.budget import BudgetExceeded
from petrichor_serving.agent.question import Question, check, parse
from petrichor_serving.agent.router import QuestionClass
from petrichor_serving.agent.runtime import Run
from petrichor_serving.agent.trace import StopReason
from petrichor_serving.agent.words import content_words
from petrichor_serving.recall.config import CONCEPT_CONFIG, DEFAULT_CONFIG, RecallConfig
from petrichor_serving.tool_calls import OUTLINE, SEARCH
from petrichor_serving.toolspec import MAX_OUTLINE_NODES, OutlineRequest, SearchArguments

FACT_KEEP_RATIO = 0.85
"""A second quote joins an answer only when it scores this share of the best one: a citation beside the point
costs more than a second quote gains (cmrc dev: three quotes at 0.6 gave citation precision 0.48)."""
COMPARISON_READS = 2
MAX_SUB_QUESTIONS = 6


@dataclass
class Draft:
    """An answer before its citations are checked: text with [n] markers and what each marker quotes."""

    text: str
    cited: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: StopReason = StopReason.ANSWERED


def _chunk_targets(cands: list[dict[str, Any]], limit: int, prefer: tuple[str, ...] = ()) -> list[dict[str, str]]:
    """The candidates' chunks to read, best first, after the `prefer`red chunks (a follow-up's previous evidence)."""
    out: list[dict[str, str]] = []
    for cid in [*prefer, *(c.get("chunk_id") for c in cands)]:
        if cid and {"chunk_id": cid} not in out:
            out.append({"chunk_id": cid})
    return out[:limit]


def search(run: Run, query: str, *, article_id: str | None = None, config: RecallConfig = DEFAULT_CONFIG) -> list[dict[str, Any]]:
    """The search tool's candidates for a plan: `config.limit` of them, the list length the evaluation
    measures; `article_id` focuses the search on that article. A plan's arguments are the server's own and
    go to the tool as they are (it checks the query itself)."""
    arguments = SearchArguments.model_construct(query=query, limit=config.limit, article_id=article_id)
    return run.call(SEARCH, arguments, config=config)["candidates"]


def outline(run: Run, article_id: str) -> dict[str, Any]:
    """The outline tool's tree of an article for a plan, with as many nodes as the tool gives."""
    return run.call(OUTLINE, OutlineRequest.model_construct(article_id=article_id, max_nodes=MAX_OUTLINE_NODES))


def _in_language(run: Run, cands: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Candidates from articles in the answer's language first (stable otherwise): a Chinese comparison
    quotes the Chinese article where both languages hold the same text."""
    languages = structure.heading_index(run.snap).languages
    return sorted(cands, key=lambda c: languages.get(c.get("article_id") or "") != run.route.language)


def record(run: Run, question: str) -> Question:
    """The question's record: the route's when the plan works on the question as asked, else the record of
    the text it works on (a sub-question, a follow-up's query)."""
    routed = run.route.question
    return routed if routed is not None and routed.text == question.strip() else parse(question)


def _missing(run: Run, question: Question, verdict: answerability.Verdict | None = None) -> list[str]:
    """What the question pins down or names that nothing cited or read holds, in the user's words: the
    constraints the gate found missed first, then the content words nothing read contains."""
    read = " ".join(v.get("content") or "" for v in run.evidence.items.values()).lower()
    out: list[str] = []
    if verdict is not None and verdict.signals.constraint_reason:
        units = [answerability.unit_text(v) for v in run.evidence.items.values()]
        out += [c.surface for c in check(question, units).missed] if units else []
    out += [w.surface for w in question.words if w.key not in structure.STRUCTURE_WORDS and w.key not in read]
    return [w for w in dict.fromkeys(out) if not any(w != o and w.lower() in o.lower() for o in out)]


def nothing_found(run: Run, question: str | Question, verdict: answerability.Verdict | None = None) -> Draft:
    """The not-found text, naming what was searched for and not found in the user's own words."""
    lang = run.route.language
    q = record(run, question) if isinstance(question, str) else question
    missing = ENUMERATION_COMMA[lang].join(_missing(run, q, verdict))
    text = NOT_FOUND[lang]
    if missing:
        text += NOTHING_READ_MENTIONS[lang].format(missing=missing)
    return Draft(text, [], StopReason.NOTHING_FOUND)


def _quote(run: Run, question: str, ids: list[str], *, max_units: int = 2) -> Draft | None:
    """The extractor's quotes from the given evidence (best-ranked first), each under its own marker."""
    if not ids:
        return None
    texts = run.evidence.texts(ids)
    if run.extractor is None:
        return None
    try:
        reply = run.extractor.answer(question, texts, CallContext(kb_id=str(run.evidence.items[ids[0]].get("kb_id") or "")))
    except ModelError as exc:
        run.trace.notes.append(f"extractor: {exc}")
        return None
    if not reply.get("citations"):
        return None
    # the best-ranked quotes only, and a second only when it scores nearly as well as the best
    top = max(float(c.get("score", 0.0)) for c in reply["citations"])
    keep = [c for c in reply["citations"] if c.get("rank", 1) <= max_units and float(c.get("score", top)) >= top * FACT_KEEP_RATIO]
    reply = {**reply, "citations": keep or reply["citations"][:1]}
    # the extractor marks a passage by its evidence position; here each quote gets its own marker
    cited = [{"marker": i, "evidence_id": c["evidence_id"], "quote": c["quote"]} for i, c in enumerate(reply["citations"], 1)]
    joiner = "" if run.route.language == "zh" else " "
    shown = [c.get("text") or c["quote"] for c in reply["citations"]]
    opening = str(reply.get("opening") or "")  # the short answer, when the question asks for one
    return Draft(opening + joiner.join(f"{text} [{c['marker']}]" for text, c in zip(shown, cited)), cited)


def gated(run: Run, question: str, draft: Draft | None, cands: list[dict[str, Any]] | None = None) -> Draft:
    """`draft` when its cited evidence answers `question` (`answerability`), else the not-found answer;
    the verdict goes into the trace either way."""
    q = record(run, question)
    if draft is None:
        return nothing_found(run, q)
    if not draft.cited:
        return draft
    scores = {c["chunk_id"]: float(c.get("score") or 0.0) for c in cands or () if c.get("chunk_id")}
    verdict = answerability.assess(run.snap, run.embedder, q, run.evidence.items, draft.cited, scores)
    run.trace.answerability = verdict.to_json()
    if verdict.answerable:
        return draft
    run.trace.answerability["withheld"] = withheld(run, draft)
    run.trace.notes.append(f"answerability: not answered, {verdict.reason()}")
    return nothing_found(run, q, verdict)


def withheld(run: Run, draft: Draft) -> dict[str, Any]:
    """The answer the gate did not give, for the trace: what was read and set aside, never shown as the answer."""
    quotes = [
        {"quote": c["quote"], "article_id": run.evidence.items[c["evidence_id"]].get("article_id")}
        for c in draft.cited
        if c.get("evidence_id") in run.evidence.items
    ]
    return {"answer": draft.text, "citations": quotes}


def fact(run: Run, question: str, cands: list[dict[str, Any]] | None = None) -> Draft:
    if cands is None:
        cands = search(run, question)
    ids = run.read_many(_chunk_targets(cands, run.budget.max_reads, run.prefer))
    return gated(run, question, _quote(run, question, ids), cands)


def structure_plan(run: Run, question: str) -> Draft:
    snap = run.snap
    cands = search(run, question)
    match = structure.find_section(snap, question, structure.scope_articles(snap, run.scope), cands, run.route.language)
    if match is None:
        run.trace.notes.append("structure: no article or section named; answered as a fact question")
        return fact(run, question, cands)
    outline(run, match.article_id)
    section, children = structure.section_children(snap, match)
    spans = [(child, span) for child in children if (span := structure.heading_offset(snap, child)) is not None]
    if not spans:
        return fact(run, question, cands)
    chunk_of: dict[int, str] = {}
    for child, (start, _) in spans:
        for cid in snap.chunks_by_article.get(match.article_id, []):
            c = snap.chunks[cid]
            if c["start"] <= start < c["end"]:
                chunk_of[start] = cid
                break
    wanted = list(dict.fromkeys(chunk_of.values()))
    eid_of: dict[str, str] = {}
    try:
        for i in range(0, len(wanted), run.budget.max_reads):
            batch = wanted[i : i + run.budget.max_reads]
            for cid, read_id in zip(batch, run.read_many([{"chunk_id": c} for c in batch])):
                eid_of[cid] = read_id
    except BudgetExceeded:
        run.trace.notes.append("structure: budget ended the reads; listing what was read")
    parts: list[str] = []
    cited: list[dict[str, Any]] = []
    for child, (start, quote) in spans:
        eid = eid_of.get(chunk_of.get(start, ""))
        if eid is None:
            continue
        cited.append({"marker": len(cited) + 1, "evidence_id": eid, "quote": quote})
        parts.append(f"{child['title']} [{len(cited)}]")
    if not cited:
        return fact(run, question, cands)
    article = snap.articles[match.article_id]
    steps = bool(STEPS_ASKED.search(question))
    lang = run.route.language
    head = (SECTION_HEAD if match.heading is not None else ARTICLE_HEAD)[lang].format(title=article["title"], section=section)
    kind = LISTED_KINDS[lang]["steps" if steps else "parts"]
    return Draft(LISTING[lang].format(head=head, kind=kind, parts=LISTING_SEPARATOR[lang].join(parts)), cited)


def _names(item: str, text: str) -> bool:
    """Whether `text` names the compared item (all of its content words, or the item verbatim)."""
    lowered = text.lower()
    words = content_words(item)
    return item.lower() in lowered or bool(words) and all(w in set(content_words(text)) for w in words)


def _labels(citation: dict[str, Any]) -> tuple[str, ...]:
    """A table row's column labels as the answer shows them ("Route: …; How: …"), () for anything else."""
    text = citation.get("text") or ""
    if "|" not in citation["quote"] or ": " not in text:
        return ()
    cells = citation["quote"].count("|") + 1  # a cell's own "; " is not a column
    return tuple(part.split(": ", 1)[0] for part in text.split("; ")[:cells])


def _side(run: Run, item: str, question: str, ids: list[str], first: dict[str, Any] | None, taken: set[str]) -> dict[str, Any] | None:
    """One side of a comparison: among the extractor's quotes that are no other side's, one parallel to the
    first side's (a row under the same column labels) naming the item, else the best naming it, else the best."""
    if not ids or run.extractor is None:
        return None
    try:
        reply = run.extractor.answer(question, run.evidence.texts(ids), CallContext(kb_id=str(run.evidence.items[ids[0]].get("kb_id") or "")))
    except ModelError as exc:
        run.trace.notes.append(f"extractor: {exc}")
        return None
    options = [c for c in reply.get("citations") or [] if c["quote"] not in taken]
    naming = [c for c in options if _names(item, c["quote"])]
    parallel = [c for c in naming if first is not None and _labels(first) and _labels(c) == _labels(first)]
    return next(iter(parallel or naming or options), None)


def comparison(run: Run, question: str) -> Draft:
    """One statement per side on the same attribute, each cited, as "- A: …" lines in the items' order.

    Each side searches and reads its own item; a later side also sees what the earlier sides read, so it
    can quote the statement parallel to the first side's (the other row of the same table) rather than any
    sentence naming it. A side quotes a unit that names its item when one is read."""
    items = run.route.items
    aspect = question
    for item in items:
        aspect = aspect.replace(item, " ")
    chosen: list[dict[str, Any] | None] = []
    read: list[str] = []
    for item in items:
        cands = _in_language(run, search(run, item))
        ids = run.read_many(_chunk_targets(cands, COMPARISON_READS))
        taken = {c["quote"] for c in chosen if c}
        first = chosen[0] if chosen else None
        side = _side(run, item, f"{item} {aspect}", list(dict.fromkeys([*ids, *read])), first, taken)
        if side is None and read:  # what the earlier sides read crowded this side's own evidence out
            side = _side(run, item, f"{item} {aspect}", ids, first, taken)
        chosen.append(side)
        read += ids
    if not any(chosen):
        return nothing_found(run, question)
    lang = run.route.language
    cited: list[dict[str, Any]] = []
    parts: list[str] = []
    for item, side in zip(items, chosen):
        if side is None:
            parts.append(NOTHING_FOUND_FOR_ITEM[lang].format(item=item))
            continue
        cited.append({"marker": len(cited) + 1, "evidence_id": side["evidence_id"], "quote": side["quote"]})
        parts.append(f"{item}{LABEL_COLON[lang]}{side.get('text') or side['quote']} [{len(cited)}]")
    return Draft("\n".join(f"- {p}" for p in parts), cited)


def concept(run: Run, question: str) -> Draft:
    cands = search(run, question, config=CONCEPT_CONFIG)
    page = next((c for c in cands if c.get("page_key")), None)
    if page is None:
        return fact(run, question, cands)
    run.read_many([{"page_key": page["page_key"]}])
    page_item = next((v for v in run.evidence.items.values() if v.get("page_key") == page["page_key"]), None)
    sources = set(page_item.get("article_ids") or []) if page_item else set()
    chunks = [c for c in cands if c.get("chunk_id") and c.get("article_id") in sources]
    if not chunks and sources:
        chunks = search(run, question, article_id=sorted(sources)[0])
    chunks = chunks + [c for c in cands if c not in chunks]
    ids = run.read_many(_chunk_targets(chunks, run.budget.max_reads, run.prefer))
    return gated(run, question, _quote(run, question, ids), cands)


def sub_questions(question: str) -> list[str]:
    """The question's parts, each ending at a question mark, each asked once: a part repeated (letter case
    and spacing aside) is one sub-question, so its answer is not repeated."""
    subs: dict[str, str] = {}
    for part in re.split(r"(?<=[?？])", question):
        if part.strip():
            subs.setdefault(" ".join(part.split()).casefold(), part.strip())
    return list(subs.values())


def complex_plan(run: Run, question: str) -> Draft:
    drafts: list[Draft] = []
    for sub in sub_questions(question)[:MAX_SUB_QUESTIONS]:
        drafts.append(fact(run, sub))
    cited: list[dict[str, Any]] = []
    texts: list[str] = []
    said: set[str] = set()
    for d in drafts:
        if d.text in said:
            continue  # two sub-questions answered by the same quote: it is said once
        said.add(d.text)
        text = d.text
        for c in d.cited:
            new = len(cited) + 1
            text = text.replace(f"[{c['marker']}]", f"[#{new}]")
            cited.append({**c, "marker": new})
        texts.append(text.replace("[#", "["))
    if not cited:
        return nothing_found(run, question)
    return Draft("\n".join(texts), cited)


def direct(run: Run, question: str) -> Draft:
    return Draft(GREETING[run.route.language])


PLANS: dict[QuestionClass, Callable[[Run, str], Draft]] = {
    QuestionClass.DIRECT: direct,
    QuestionClass.FACT: fact,
    QuestionClass.STRUCTURE: structure_plan,
    QuestionClass.COMPARISON: comparison,
    QuestionClass.CONCEPT: concept,
    QuestionClass.COMPLEX: complex_plan,
}


def plan(run: Run, question: str) -> Draft:
    """Run the class's plan; a budget that runs out mid-plan answers from what was read."""
    try:
        return PLANS[run.route.kind](run, question)
    except BudgetExceeded as exc:
        run.trace.notes.append(f"budget: {exc}")
        draft = gated(run, question, _quote(run, question, list(run.evidence.items)))
        draft.stop_reason = StopReason.BUDGET
        return draft
