"""Answer quality: Petrichor's agent, and for the baselines the same chat model over their top chunks.

A baseline answer reads the first four retrieved chunks (the agent's read budget) as evidence, so the
answer figures compare retrieval, not answer models. Citation markers (`[1]`) are removed before exact
match and F1; a citation counts only if its quote is verbatim in the evidence it names, as in the agent.

The answer baseline (`naive_top_sentence`) is what a newcomer's RAG would show without a model: the
sentence of the naive hybrid's top window that shares the most question words, cited to that window. It
never says "not found".

An answer without a citation is a not-found answer. On answerable questions its share is the false
not-found rate; on unanswerable ones (null queries, and questions of another set asked of this set's
corpus) the not-found rate.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from petrichor.evaluation.dataset import EvalQuestion
from petrichor.evaluation.metrics import (
    exact_match,
    mean,
    holds_short_answer,
    percentile,
    quote_supports,
    token_f1,
)
from petrichor.evaluation.scoring import Scorer
from petrichor_pipeline.models.protocols import CallContext, EvidenceText, ModelError

READ_BUDGET = 4
_MARKER = re.compile(r"\[\d+\]")


@dataclass(frozen=True)
class Quote:
    text: str
    doc_id: str | None


@dataclass(frozen=True)
class AnswerOutcome:
    qid: str
    answer: str
    quotes: tuple[Quote, ...]
    latency_ms: float
    answerability: dict[str, Any] | None = None
    """Petrichor's verdict from the trace (signals, reason, the answer it withheld), else None."""

    @property
    def not_found(self) -> bool:
        return not self.quotes


def agent_answer(
    question: EvalQuestion, snapshot: Any, chat: Any, embedder: Any, doc_of_article: dict[str, str]
) -> AnswerOutcome:
    from petrichor_serving.agent.loop import answer
    from petrichor_serving.recall.access import Scope

    started = time.perf_counter()
    reply = answer(snapshot, question.question, Scope(), chat=chat, embedder=embedder)
    quotes = tuple(Quote(c["quote"], doc_of_article.get(c["article_id"])) for c in reply["citations"])
    verdict = (reply.get("trace") or {}).get("answerability")
    return AnswerOutcome(question.qid, reply["answer"], quotes, (time.perf_counter() - started) * 1000, verdict)


def without_gate(outcome: AnswerOutcome, doc_of_article: dict[str, str]) -> AnswerOutcome:
    """The answer Petrichor would have given without its answerability gate: the withheld one, if any."""
    withheld = (outcome.answerability or {}).get("withheld")
    if not withheld:
        return outcome
    quotes = tuple(Quote(c["quote"], doc_of_article.get(c.get("article_id") or "")) for c in withheld.get("citations") or ())
    return AnswerOutcome(outcome.qid, withheld.get("answer") or "", quotes, outcome.latency_ms, outcome.answerability)


def top_sentence_answer(question: EvalQuestion, retriever: Any) -> AnswerOutcome:
    """The answer baseline: the top chunk's sentence sharing the most distinct question words (the first
    such on a tie), stopwords aside, tokenised as the naive hybrid tokenises."""
    from petrichor.evaluation.hybrid import hybrid_tokens
    from petrichor_pipeline.text.prose import split_sentences
    from petrichor_pipeline.text.stopwords import CHINESE, ENGLISH

    started = time.perf_counter()
    top = next((i for i in retriever.retrieve(question.question).items if i.is_chunk), None)
    if top is None:
        return AnswerOutcome(question.qid, "", (), (time.perf_counter() - started) * 1000)
    stop = ENGLISH | CHINESE
    wanted = {t for t in hybrid_tokens(question.question) if t not in stop}
    sentences = [s.text for s in split_sentences(top.text)] or [top.text]
    best = max(sentences, key=lambda s: len(wanted & set(hybrid_tokens(s))))  # max keeps the first of equals
    return AnswerOutcome(question.qid, best, (Quote(best, top.doc_id),), (time.perf_counter() - started) * 1000)


def retrieval_answer(question: EvalQuestion, retriever: Any, chat: Any, titles: dict[str, str]) -> AnswerOutcome:
    """The chat model's answer over the retriever's first `READ_BUDGET` chunks."""
    started = time.perf_counter()
    items = [i for i in retriever.retrieve(question.question).items if i.is_chunk][:READ_BUDGET]
    evidence = [
        EvidenceText(f"e{n}", titles.get(i.doc_id or "", ""), i.heading_path, i.text) for n, i in enumerate(items, 1)
    ]
    reply: dict[str, Any] = {"answer": "", "citations": []}
    if evidence:
        try:
            reply = chat.answer(question.question, evidence, CallContext(kb_id="eval"))
        except ModelError:
            pass
    by_id = {e.evidence_id: (e, i) for e, i in zip(evidence, items)}
    quotes = []
    for c in reply.get("citations") or []:
        found = by_id.get(str(c.get("evidence_id", ""))) if isinstance(c, dict) else None
        quote = c.get("quote") if found else None
        if isinstance(quote, str) and quote.strip() and quote in found[0].content:
            quotes.append(Quote(quote, found[1].doc_id))
    return AnswerOutcome(question.qid, str(reply.get("answer") or ""), tuple(quotes), (time.perf_counter() - started) * 1000)


def answer_contains(answer: str, answers: Sequence[str], lang: str) -> bool:
    """Whether the normalised answer text holds one of the normalised short answers."""
    text = _MARKER.sub("", answer)
    return any(holds_short_answer(text, a, lang) for a in answers)


def summarise_answers(
    questions: Sequence[EvalQuestion], outcomes: Sequence[AnswerOutcome], scorer: Scorer
) -> dict[str, Any]:
    """EM, F1 and `answer_contains_gold` over questions with short answers (None when the set has none);
    citation precision over every cited quote; `citation_doc_precision`: the share of quotes taken from a
    gold document; `false_not_found`: the share of these answerable questions answered without a citation.

    An extractive answer quotes a sentence, so EM and F1 stay low however right it is: `answer_contains_gold`
    (the answer, markers removed and normalised as EM normalises, contains one of `answers_all`) says
    whether the answer holds what was asked."""
    by_id = {q.qid: q for q in questions}
    em, f1, contains, supported, from_gold, quotes = [], [], [], [], [], 0
    for o in outcomes:
        q = by_id[o.qid]
        if q.answers_all:
            text = _MARKER.sub("", o.answer)
            em.append(exact_match(text, q.answers_all, q.lang))
            f1.append(token_f1(text, q.answers_all, q.lang))
            contains.append(float(answer_contains(text, q.answers_all, q.lang)))
        for quote in o.quotes:
            quotes += 1
            supported.append(float(quote_supports(quote.text, scorer.passages[q.qid], q.answers_all, q.lang)))
            from_gold.append(float(quote.doc_id in q.gold_doc_ids))
    latencies = [o.latency_ms for o in outcomes]
    return {
        "questions": len(outcomes),
        "false_not_found": mean([float(o.not_found) for o in outcomes]),
        "exact_match": mean(em),
        "f1": mean(f1),
        "answer_contains_gold": mean(contains),
        "citation_precision": mean(supported),
        "citation_doc_precision": mean(from_gold),
        "citations_per_answer": round(quotes / len(outcomes), 3) if outcomes else None,
        "latency_ms": {"p50": percentile(latencies, 50), "p95": percentile(latencies, 95)},
    }


def summarise_not_found(questions: Sequence[EvalQuestion], outcomes: Sequence[AnswerOutcome]) -> dict[str, Any]:
    """Not-found rates on unanswerable questions: all of them, the set's own (`null`), and per other set
    whose questions were asked here (`cross:<set>`), each with its question count."""
    kind = {q.qid: q.subset if q.subset.startswith("cross:") else "null" for q in questions}
    groups: dict[str, list[float]] = {"all": []}
    for o in outcomes:
        groups["all"].append(float(o.not_found))
        groups.setdefault(kind[o.qid], []).append(float(o.not_found))
    return {name: {"rate": mean(values), "questions": len(values)} for name, values in groups.items()}
