"""Answer quality: Petrichor's agent, and for the baselines the same chat model over their top chunks.

A baseline answer reads the first four retrieved chunks (the agent's read budget) as evidence, so the
answer figures compare retrieval, not answer models. Citation markers (`[1]`) are removed before exact
match and F1; a citation counts only if its quote is verbatim in the evidence it names, as in the agent.

The answer baseline (`naive_top_sentence`) is what a newcomer's RAG would show without a model: the
sentence of the naive hybrid's top window that shares the most question words, cited to that window. It
never says "not found".

An answer without a citation is a not-found answer. On answerable questions its share is the false
not-found rate; on unanswerable ones the not-found rate, apart for in-domain questions (the set's own:
MultiHop-RAG's null queries, `rgb_zh_reject`'s unanswerable half, a leave-gold-out sample) and off-topic
ones (another set's questions asked of this set's corpus).

The lead-in is the short answer an answer opens with ("1843年——…", "4 — …"), read off the answer text: the
words before the answerer's separator, unless the first quote itself starts with them. Short-answer exact
match and F1 score it where an answer has one, else the answer text (CMRC 2018's official scoring in Chinese,
SQuAD's in English); a wrong lead-in is one that neither holds nor lies inside a gold short answer.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from petrichor.evaluation.dataset import EvalQuestion
from petrichor.evaluation.metrics import (
    cmrc_exact_match,
    cmrc_f1,
    exact_match,
    holds_short_answer,
    mean,
    percentile,
    quote_supports,
    squeeze,
    token_f1,
)
from petrichor.evaluation.scoring import Scorer
from petrichor_core.models.protocols import CallContext, EvidenceText, ModelError
from petrichor_core.text.lang import has_cjk

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
    lead_in: str | None = None
    """The short answer the answer opens with (`lead_in`), None when it opens on a quote."""

    @property
    def not_found(self) -> bool:
        return not self.quotes


def lead_in(answer: str, first_quote: str, lang: str) -> str | None:
    """The short answer `answer` opens with: the text before the answerer's separator ("——", " — ") ahead of
    the first citation marker, unless the first quote itself starts with that text (a quote holding a dash)."""
    from petrichor_core.text.lang.texts import SEPARATOR

    head = _MARKER.split(answer, 1)[0]
    sep = SEPARATOR["zh" if lang == "zh" else "en"]
    if sep not in head:
        return None
    lead = head.split(sep, 1)[0].strip()
    if not lead or squeeze(first_quote).startswith(squeeze(lead)):
        return None
    return lead


def agent_answer(
    question: EvalQuestion,
    snapshot: Any,
    chat: Any,
    embedder: Any,
    doc_of_article: dict[str, str],
    history: Sequence[dict[str, str]] = (),
) -> AnswerOutcome:
    """The agent's answer as serving gives it; `history` as `/v1/chat/completions` passes earlier turns
    (`{"role": "user" | "assistant", "content"}`, oldest first)."""
    from petrichor_serving.agent.loop import answer
    from petrichor_serving.recall.access import Scope

    started = time.perf_counter()
    reply = answer(snapshot, question.question, Scope(), chat=chat, embedder=embedder, history=history)
    quotes = tuple(Quote(c["quote"], doc_of_article.get(c["article_id"])) for c in reply["citations"])
    verdict = (reply.get("trace") or {}).get("answerability")
    lead = lead_in(reply["answer"], quotes[0].text, question.lang) if quotes else None
    return AnswerOutcome(question.qid, reply["answer"], quotes, (time.perf_counter() - started) * 1000, verdict, lead)


def without_gate(outcome: AnswerOutcome, doc_of_article: dict[str, str], lang: str | None = None) -> AnswerOutcome:
    """The answer Petrichor would have given without its answerability gate: the withheld one, if any
    (`lang`, the question's, reads its lead-in; without it, the answer's own script decides)."""
    withheld = (outcome.answerability or {}).get("withheld")
    if not withheld:
        return outcome
    quotes = tuple(Quote(c["quote"], doc_of_article.get(c.get("article_id") or "")) for c in withheld.get("citations") or ())
    text = withheld.get("answer") or ""
    lang = lang or ("zh" if has_cjk(text) else "en")
    lead = lead_in(text, quotes[0].text, lang) if quotes else None
    return AnswerOutcome(outcome.qid, text, quotes, outcome.latency_ms, outcome.answerability, lead)


def top_sentence_answer(question: EvalQuestion, retriever: Any) -> AnswerOutcome:
    """The answer baseline: the top chunk's sentence sharing the most distinct question words (the first
    such on a tie), stopwords aside, tokenised as the naive hybrid tokenises."""
    from petrichor.evaluation.hybrid import hybrid_tokens
    from petrichor_core.text.lang.stopwords import CHINESE, ENGLISH
    from petrichor_core.text.prose import split_sentences

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
    evidence = [EvidenceText(f"e{n}", titles.get(i.doc_id or "", ""), i.heading_path, i.text) for n, i in enumerate(items, 1)]
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
        if found is not None and isinstance(quote, str) and quote.strip() and quote in found[0].content:
            quotes.append(Quote(quote, found[1].doc_id))
    text = str(reply.get("answer") or "")
    lead = lead_in(text, quotes[0].text, question.lang) if quotes else None
    return AnswerOutcome(question.qid, text, tuple(quotes), (time.perf_counter() - started) * 1000, lead_in=lead)


def answer_contains(answer: str, answers: Sequence[str], lang: str) -> bool:
    """Whether the normalised answer text holds one of the normalised short answers."""
    text = _MARKER.sub("", answer)
    return any(holds_short_answer(text, a, lang) for a in answers)


def summarise_answers(questions: Sequence[EvalQuestion], outcomes: Sequence[AnswerOutcome], scorer: Scorer) -> dict[str, Any]:
    """EM, F1 and `answer_contains_gold` over questions with short answers (None when the set has none);
    citation precision over every cited quote; `citation_doc_precision`: the share of quotes taken from a
    gold document; `false_not_found`: the share of these answerable questions answered without a citation.

    An extractive answer quotes a sentence, so EM and F1 stay low however right it is: `answer_contains_gold`
    (the answer, markers removed and normalised as EM normalises, contains one of `answers_all`) says
    whether the answer holds what was asked.

    `short_exact_match` / `short_f1` score the lead-in where the answer has one, else the answer text,
    CMRC 2018's official way in Chinese; `lead_ins` (answers with a lead-in, so scored on it) and
    `wrong_lead_ins` are shares of the questions with a short gold answer; `reference_f1` is token F1
    against the free-text reference answer of questions without short answers (rhdh)."""
    by_id = {q.qid: q for q in questions}
    em, f1, contains, supported, from_gold, quotes = [], [], [], [], [], 0
    short_em, short_f1, leads, wrong, reference = [], [], [], [], []
    for o in outcomes:
        q = by_id[o.qid]
        text = _MARKER.sub("", o.answer)
        if q.answers_all:
            em.append(exact_match(text, q.answers_all, q.lang))
            f1.append(token_f1(text, q.answers_all, q.lang))
            contains.append(float(answer_contains(text, q.answers_all, q.lang)))
            scored = o.lead_in if o.lead_in is not None else text
            short_em.append(cmrc_exact_match(scored, q.answers_all) if q.lang == "zh" else exact_match(scored, q.answers_all, q.lang))
            short_f1.append(cmrc_f1(scored, q.answers_all) if q.lang == "zh" else token_f1(scored, q.answers_all, q.lang))
            leads.append(float(o.lead_in is not None))
            wrong.append(float(o.lead_in is not None and not lead_in_right(o.lead_in, q.answers_all, q.lang)))
        elif q.answer and not o.not_found:
            reference.append(token_f1(text, [q.answer], q.lang))
        elif q.answer:
            reference.append(0.0)
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
        "short_exact_match": mean(short_em),
        "short_f1": mean(short_f1),
        "short_answer_questions": len(short_em),
        "lead_ins": mean(leads),
        "wrong_lead_ins": mean(wrong),
        "reference_f1": mean(reference),
        "reference_questions": len(reference),
        "latency_ms": {"p50": percentile(latencies, 50), "p95": percentile(latencies, 95)},
    }


def lead_in_right(lead: str, answers: Sequence[str], lang: str) -> bool:
    """Whether a lead-in is the gold short answer: it holds one ("2023年1月7日" for "1月7日") or lies inside
    one ("四" for "四次"), normalised as EM normalises."""
    return any(holds_short_answer(lead, a, lang) or holds_short_answer(a, lead, lang) for a in answers)


def unanswerable_kind(question: EvalQuestion) -> str:
    """`cross:<set>` for another set's question, `leave-gold-out` for a sampled one, else `null` (the set's own)."""
    if question.subset.startswith("cross:") or question.subset == "leave-gold-out":
        return question.subset
    return "null"


def unanswerable_scope(question: EvalQuestion) -> str:
    """`off_topic` for another set's question asked here, `in_domain` for a question about this corpus's subjects."""
    return "off_topic" if question.subset.startswith("cross:") else "in_domain"


def summarise_not_found(questions: Sequence[EvalQuestion], outcomes: Sequence[AnswerOutcome]) -> dict[str, Any]:
    """Not-found rates on unanswerable questions: all of them, `in_domain` and `off_topic` apart, and per kind
    (`null`: the set's own, `leave-gold-out`, `cross:<set>` per other set), each with its question count."""
    by_id = {q.qid: q for q in questions}
    groups: dict[str, list[float]] = {"all": [], "in_domain": [], "off_topic": []}
    for o in outcomes:
        q = by_id[o.qid]
        for group in ("all", unanswerable_scope(q), unanswerable_kind(q)):
            groups.setdefault(group, []).append(float(o.not_found))
    return {name: {"rate": mean(values), "questions": len(values)} for name, values in groups.items() if values}


def followup_hit(question: EvalQuestion, outcome: AnswerOutcome) -> bool:
    """A follow-up's answer holds a gold short answer, or where the question has none cites a gold document."""
    if outcome.not_found:
        return False
    if question.answers_all:
        return answer_contains(outcome.answer, question.answers_all, question.lang)
    return any(quote.doc_id in question.gold_doc_ids for quote in outcome.quotes)


def summarise_followups(questions: Sequence[EvalQuestion], outcomes: Sequence[AnswerOutcome]) -> dict[str, Any]:
    """`hit`: the share of follow-ups whose answer holds the gold (`followup_hit`); `not_found`: answered
    without a citation; with the number of follow-ups."""
    by_id = {q.qid: q for q in questions}
    return {
        "questions": len(outcomes),
        "hit": mean([float(followup_hit(by_id[o.qid], o)) for o in outcomes]),
        "not_found": mean([float(o.not_found) for o in outcomes]),
    }
